import Foundation
import MediaSync
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Disk full, end to end through the CLI, with a small tmpfs as the root: a plan that does
/// not fit is refused before any download; a disk that fills during the run anyway (sizes unknown up front, or
/// another writer) stops the run with one error line and the fatal exit code, leaves no partial file at a final
/// path and an index that agrees with the tree, and the next sync on a freed disk completes.
///
/// Mounting needs root; elsewhere these tests are skipped, saying so.
@Suite(.serialized) struct DiskFullTests {
    static let canMount = SmallTmpfs.canMount

    @Test(.enabled(if: DiskFullTests.canMount, "skipped: mounting a tmpfs needs root"))
    func aPlanThatDoesNotFitIsRefusedBeforeAnyDownload() async throws {
        try await Sandbox.withTwoSelectedMovies { sandbox in
            let planned = sandbox.server.library.allMediaSources.reduce(0) { $0 + $1.size }
            // Free: the 100 MB margin plus half the plan.
            let filler = try sandbox.fill(leaving: Int(MirrorSync.spaceFloor) + planned / 2)

            let refused = try await sandbox.run(["sync"])
            #expect(refused.status == 1, "\(refused.stderr)")
            let errors = refused.stderr.split(separator: "\n")
            #expect(
                errors.count == 1 && errors.first?.hasPrefix("mediasync: not enough free space") == true,
                "\(refused.stderr)")
            #expect(sandbox.server.allRequests.allSatisfy { !$0.path.hasSuffix("/Download") })
            #expect(sandbox.downloads().isEmpty)
            #expect(sandbox.staging().isEmpty)

            try FileManager.default.removeItem(atPath: filler)
            let done = try await sandbox.run(["sync"])
            #expect(done.status == 0, "\(done.stderr)")
            try sandbox.expectMediaMatchTheServer(count: 3)
            try await sandbox.expectConsistent()
        }
    }

    @Test(.enabled(if: DiskFullTests.canMount, "skipped: mounting a tmpfs needs root"))
    func aDiskThatFillsWhenSizesAreUnknownStopsCleanly() async throws {
        // A podcast whose enclosures announce no length: the plan has no size, the disk fills mid-run.
        let sandbox = try Sandbox(diskBytes: 8 << 20, library: TestLibrary(movies: 0, series: 0))
        defer { sandbox.tearDown() }
        let episodes = (1...3).map { number in
            (name: "episode-\(number).mp3", bytes: (0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ number) })
        }
        let items = episodes.enumerated().map { number, episode in
            "<item><title>E\(number)</title><guid>full-\(number)</guid><pubDate>0\(number + 1) Jan 2025 08:00:00 +0000</pubDate>"
                + "<enclosure url=\"\(sandbox.server.baseURL)/\(episode.name)\" type=\"audio/mpeg\"/></item>"
        }.joined()
        let feed = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Full</title>\(items)</channel></rss>"
        sandbox.server.setFile("/feed.xml", contents: Array(feed.utf8), contentType: "application/rss+xml")
        for episode in episodes {
            sandbox.server.setFile("/" + episode.name, contents: episode.bytes, contentType: "audio/mpeg")
        }
        let add = try await sandbox.run(["podcast", "add", sandbox.server.baseURL + "/feed.xml", "--all"])
        #expect(add.status == 0, "\(add.stderr)")
        // About 3 MB free for 4.5 MB of episodes.
        let filler = try sandbox.fill(leaving: 3_000_000)

        let full = try await sandbox.run(["sync"])
        try sandbox.expectOneDiskFullLine(full)
        for path in sandbox.downloads() where path.hasSuffix(".mp3") {
            let bytes = FileManager.default.contents(atPath: sandbox.root + "/" + path).map { [UInt8]($0) }
            #expect(episodes.contains { $0.bytes == bytes }, "\(path) is not a whole episode")
        }
        try await sandbox.expectConsistent()

        try FileManager.default.removeItem(atPath: filler)
        let done = try await sandbox.run(["sync"])
        #expect(done.status == 0, "\(done.stderr)")
        let held = sandbox.downloads().filter { $0.hasSuffix(".mp3") }
        #expect(held.count == 3)
        for path in held {
            let bytes = FileManager.default.contents(atPath: sandbox.root + "/" + path).map { [UInt8]($0) }
            #expect(episodes.contains { $0.bytes == bytes }, "\(path)")
        }
        #expect(sandbox.downloads().contains { $0.hasSuffix("metadata.json") })
        try await sandbox.expectConsistent()
    }

    @Test(.enabled(if: DiskFullTests.canMount, "skipped: mounting a tmpfs needs root"))
    func aDiskThatAnotherWriterFillsMidRunStopsCleanly() async throws {
        // The plan fits (sizes known, margin included), then another writer takes the free space mid-run. Every
        // media response pauses after 500 KB until the test lets it go (its own faults cleared, the paused responses
        // reset, the sync's retries then served whole): the disk is full before any of them can finish, however
        // slow the machine (a throttle raced the filler, and a loaded machine let the sync finish first).
        try await Sandbox.withTwoSelectedMovies { sandbox in
            for source in sandbox.server.library.allMediaSources {
                sandbox.server.inject(
                    .stall(afterBytes: 500_000, seconds: 3_600), path: "/Items/\(source.id)/Download", count: 1_000)
            }
            let live = try LiveProcess(["sync"], environment: sandbox.environment)
            for _ in 0..<12_000 where sandbox.server.bodyBytesSent < 500_000 && live.isRunning {
                try await Task.sleep(nanoseconds: 5_000_000)
            }
            #expect(live.isRunning, "the sync ended before a download paused: \(live.text)")
            let filler = try sandbox.fill(leaving: 0)
            sandbox.server.clearFaults()
            // Responses routed before the faults were cleared may reach their pause later: let those go too.
            for _ in 0..<12_000 where live.isRunning {
                sandbox.server.resetStalledResponses()
                try await Task.sleep(nanoseconds: 5_000_000)
            }
            let full = live.finish()
            try sandbox.expectOneDiskFullLine(full)
            try sandbox.expectMediaMatchTheServer(count: nil)
            // A file placed once the disk was full may be recorded in the placed-files journal only (the index's
            // own commit needs room): recorded all the same, and moved into the index by the next command.
            try await sandbox.expectConsistent(countingTheJournal: true)

            try FileManager.default.removeItem(atPath: filler)
            let done = try await sandbox.run(["sync"])
            #expect(done.status == 0, "\(done.stderr)")
            try sandbox.expectMediaMatchTheServer(count: 3)
            try await sandbox.expectConsistent()
        }
    }

    /// A disk already full when the index opens: SQLite says "disk I/O error"; the user is told the disk is full,
    /// with the path and the free space, and gets the same exit code as a full disk mid-run.
    @Test(.enabled(if: DiskFullTests.canMount, "skipped: mounting a tmpfs needs root"))
    func aDiskFullWhenTheIndexOpensSaysDiskFull() async throws {
        try await Sandbox.withTwoSelectedMovies { sandbox in
            let filler = try sandbox.fill(leaving: 0)
            let full = try await sandbox.run(["sync"])
            try sandbox.expectOneDiskFullLine(full)
            #expect(full.stderr.contains(sandbox.root) && full.stderr.contains("free"), "\(full.stderr)")
            #expect(!full.stderr.contains("I/O error"), "\(full.stderr)")
            #expect(sandbox.downloads().isEmpty)

            try FileManager.default.removeItem(atPath: filler)
            let done = try await sandbox.run(["sync"])
            #expect(done.status == 0, "\(done.stderr)")
            try sandbox.expectMediaMatchTheServer(count: 3)
            try await sandbox.expectConsistent()
        }
    }

    struct Sandbox {
        let server: TestServer
        let disk: SmallTmpfs
        let folder: String
        var root: String { disk.path + "/mirror" }
        var environment: [String: String] {
            ["MEDIASYNC_ROOT": root, "MEDIASYNC_CONFIG_DIR": folder + "/config", "MEDIASYNC_API_KEY": ""]
        }

        init(diskBytes: Int, library: TestLibrary) throws {
            guard let disk = SmallTmpfs(bytes: diskBytes) else { throw CocoaError(.fileWriteNoPermission) }
            self.disk = disk
            server = try TestServer(library: library)
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-full-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        /// Runs `body` with a 112 MiB disk and two 2 MB movies, signed in and selected; torn down after it whatever it
        /// does.
        static func withTwoSelectedMovies(_ body: (Sandbox) async throws -> Void) async throws {
            let sandbox = try Sandbox(
                diskBytes: 112 << 20, library: TestLibrary(movies: 2, series: 0, mediaSize: 2_000_000))
            defer { sandbox.tearDown() }
            try await sandbox.signInAndSelectMovies()
            try await body(sandbox)
        }

        func run(_ arguments: [String], input: String? = nil) async throws -> CommandRunner.Output {
            try await CommandRunner.run(arguments, environment: environment, input: input)
        }

        func signInAndSelectMovies() async throws {
            let login = try await run(
                ["login", server.baseURL, "--username", "demo", "--password-stdin"], input: "demo\n")
            #expect(login.status == 0, "\(login.stderr)")
            for movie in server.library.movies {
                let select = try await run(["select", "movie", movie.id, "--all-versions"])
                #expect(select.status == 0, "\(select.stderr)")
            }
        }

        /// Takes the disk's free space down to about `leaving` bytes with a preallocated file outside the root
        /// (grown in steps, so that a sync writing at the same time cannot make it fail).
        func fill(leaving: Int) throws -> String {
            let path = disk.path + "/filler"
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
            defer { close(fd) }
            var info = stat()
            var step = 1 << 20
            while step >= 4096 {
                var disk = statvfs()
                guard statvfs(self.disk.path, &disk) == 0, fstat(fd, &info) == 0 else {
                    throw CocoaError(.fileReadUnknown)
                }
                let free = Int(disk.f_bavail) * Int(disk.f_frsize)
                if free - leaving < step {
                    step /= 2
                    continue
                }
                if posix_fallocate(fd, off_t(info.st_size), off_t(step)) != 0 { step /= 2 }
            }
            return path
        }

        /// Files under Downloads/, relative to the root, sorted.
        func downloads() -> [String] {
            TreeReading.files(under: root + "/Downloads", prefix: "Downloads/")
        }

        func staging() -> [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: root + "/.mediasync/staging")) ?? []
        }

        /// One line on standard error, naming the full disk; the fatal exit code.
        func expectOneDiskFullLine(_ output: CommandRunner.Output) throws {
            #expect(output.status == 1, "\(output.stderr)")
            let errors = output.stderr.split(separator: "\n").filter { !$0.contains(" info ") }
            #expect(errors.count == 1, "\(output.stderr)")
            #expect(errors.first?.hasPrefix("mediasync: disk full") == true, "\(output.stderr)")
        }

        /// Every media file held is whole: the server's bytes (`count`: how many there must be).
        func expectMediaMatchTheServer(count: Int?) throws {
            let media = downloads().filter { $0.hasSuffix(".mkv") }
            if let count { #expect(media.count == count) }
            for path in media {
                let source = server.library.allMediaSources.first { path.hasSuffix("-\($0.id).mkv") }
                let bytes = FileManager.default.contents(atPath: root + "/" + path).map { [UInt8]($0) }
                #expect(
                    source != nil && bytes == source.flatMap { server.library.mediaBytes(forMediaSourceId: $0.id) },
                    "\(path)")
            }
        }

        /// The index lists exactly the files on disk, `verify` is clean, nothing waits in staging.
        func expectConsistent(countingTheJournal: Bool = false) async throws {
            var indexed = try MirrorIndex(path: MirrorRoot(path: root).indexPath).entries().map(\.file.path)
            if countingTheJournal {
                // Each journal line holds its record's fields between tabs, the path second, after a `=`.
                let journal = FileManager.default.contents(atPath: root + "/.mediasync/placed.journal") ?? Data()
                for line in String(decoding: journal, as: UTF8.self).split(separator: "\n") {
                    let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                    if fields.count > 2, fields[2].hasPrefix("=") { indexed.append(String(fields[2].dropFirst())) }
                }
            }
            #expect(Set(indexed).sorted() == downloads())
            let verify = try await run(["verify"])
            #expect(verify.status == 0, "\(verify.stdout)")
            #expect(staging().isEmpty, "\(staging())")
        }

        func tearDown() {
            server.shutdown()
            disk.unmount()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }
}
