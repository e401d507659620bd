import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `mediasync export` end to end through the binary: a podcast mirror synced from the test server, exported to a
/// folder, killed mid-copy, to a read-only and a full tmpfs, and to a FAT32 image through a loop device.
///
/// Mounting needs root (and, for FAT32, `mkfs.vfat` and a loop device); elsewhere those tests are skipped, saying so.
@Suite(.serialized) struct ExportCommandTests {
    static let canMount = SmallTmpfs.canMount
    static let canMountVfat: Bool = {
        guard canMount, let folder = try? TemporaryDirectory() else { return false }
        defer { folder.remove() }
        let image = folder.file("probe.img")
        let mountPoint = folder.file("mnt")
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, 4 << 20) == 0,
            (try? FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)) != nil,
            shell("/usr/sbin/mkfs.vfat", [image]), shell("/bin/mount", ["-o", "loop,utf8", image, mountPoint])
        else { return false }
        _ = shell("/bin/umount", [mountPoint])
        return true
    }()

    @discardableResult
    static func shell(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        return (try? Spawned(tool, arguments).finish().status) == 0
    }

    struct Episode {
        var guid: String
        var title: String
        var day: Int
        var size: Int
    }

    /// A test server with one podcast, and a mirror that synced it through the CLI.
    struct World {
        let server: TestServer
        let folder: TemporaryDirectory
        var root: String { folder.path + "/mirror" }
        var environment: [String: String] {
            ["MEDIASYNC_ROOT": root, "MEDIASYNC_CONFIG_DIR": folder.path + "/config", "MEDIASYNC_API_KEY": ""]
        }

        init(title: String = "Road Trip", episodes: [Episode]) async throws {
            server = try TestServer()
            folder = try TemporaryDirectory()
            let items = episodes.map { episode in
                "<item><title>\(episode.title.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;"))</title>"
                    + "<guid isPermaLink=\"false\">\(episode.guid)</guid>"
                    + "<pubDate>\(String(format: "%02d", episode.day)) Jan 2025 10:00:00 +0000</pubDate>"
                    + "<enclosure url=\"\(server.baseURL)/media/\(episode.guid).mp3\" length=\"\(episode.size)\" type=\"audio/mpeg\"/></item>"
            }.joined()
            for episode in episodes {
                server.setFile(
                    "/media/\(episode.guid).mp3",
                    contents: (0..<episode.size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ episode.day) },
                    contentType: "audio/mpeg")
            }
            server.setFile(
                "/feed.xml",
                contents: Array(
                    "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>\(title)</title>\(items)</channel></rss>"
                        .utf8),
                contentType: "application/rss+xml")
            let add = try await run(["podcast", "add", server.baseURL + "/feed.xml", "--all"])
            #expect(add.status == 0, "\(add.stderr)")
            let sync = try await run(["sync", "--quiet"])
            #expect(sync.status == 0, "\(sync.stderr)")
        }

        func run(_ arguments: [String]) async throws -> CommandRunner.Output {
            try await CommandRunner.run(arguments, environment: environment)
        }

        /// Makes the mirror's file of an episode a sparse file of `size` bytes (zeros), recorded in the index.
        func makeSparse(guid: String, size: Int64) throws {
            let index = try MirrorIndex(path: root + "/.mediasync/index.sqlite")
            var entry = try #require(try index.entries().first { $0.file.key.rawValue.hasSuffix(":" + guid) })
            let path = root + "/" + entry.file.path
            #expect(truncate(path, 0) == 0 && truncate(path, off_t(size)) == 0)
            entry.file.size = size
            try index.record(entry)
        }

        func tearDown() {
            server.shutdown()
            folder.remove()
        }
    }

    /// The manifest at a destination.
    static func manifest(_ destination: String) throws -> ExportManifest {
        try JSONDecoder().decode(
            ExportManifest.self,
            from: try #require(FileManager.default.contents(atPath: destination + "/" + ExportManifest.fileName)))
    }

    /// Regular files under a folder with their sizes, relative paths.
    static func files(_ folder: String) -> [String: Int64] {
        var found: [String: Int64] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return found }
        while let relative = enumerator.nextObject() as? String {
            if case .file(let size) = ExportFileSystem.fact(folder + "/" + relative) { found[relative] = size }
        }
        return found
    }

    /// Whether process `pid` has a file open for writing under `destination` that already holds bytes.
    /// The traced child of `tracer` once it has bytes of a copy in an unnamed or temporary file in `destination`;
    /// nil if the tracer ends first. Polled on a thread of its own; there is no moment to miss, as the child stops
    /// for good before the copy can end.
    static func childMidCopy(of tracer: Spawned, destination: String) async -> Int32? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                while tracer.isRunning {
                    let children =
                        (try? String(contentsOfFile: "/proc/\(tracer.pid)/task/\(tracer.pid)/children", encoding: .utf8))
                        ?? ""
                    if let child = children.split(separator: " ").first.flatMap({ Int32($0) }),
                        copyInFlight(pid: child, destination: destination)
                    {
                        return continuation.resume(returning: child)
                    }
                    usleep(2_000)
                }
                continuation.resume(returning: nil)
            }
        }
    }

    static func copyInFlight(pid: Int32, destination: String) -> Bool {
        let fds = "/proc/\(pid)/fd"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: fds) else { return false }
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + entry),
                target.hasPrefix(destination + "/Podcasts/"), target.contains("#") || target.hasSuffix(".tmp")
            else { continue }
            var info = stat()
            if stat(fds + "/" + entry, &info) == 0, info.st_size > 0 { return true }
        }
        return false
    }

    static func temporaries(_ folder: String) -> [String] {
        files(folder).keys.filter { ($0.split(separator: "/").last ?? "").hasPrefix(".mediasync-export-") }.sorted()
    }

    /// Every file the manifest lists is at the destination with the size and (for small files) the bytes of its source.
    static func expectComplete(_ world: World, _ destination: String, count: Int) throws {
        let manifest = try manifest(destination)
        #expect(manifest.files.count == count)
        for (path, entry) in manifest.files {
            guard let source = entry.source else {
                #expect(entry.key.hasPrefix("playlist:"))
                continue
            }
            let sourceSize = ExportFileSystem.identity(world.root + "/" + source)?.size
            #expect(ExportFileSystem.fact(destination + "/" + path) == .file(size: sourceSize ?? -1), "\(path)")
            if let sourceSize, sourceSize < 1 << 20 {
                #expect(
                    FileManager.default.contents(atPath: destination + "/" + path)
                        == FileManager.default.contents(atPath: world.root + "/" + source))
            }
        }
        #expect(temporaries(destination).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: destination + "/" + ExportManifest.journalName))
    }

    static let threeEpisodes = [
        Episode(guid: "e1", title: "Leaving home", day: 1, size: 300_000),
        Episode(guid: "e2", title: "On the road: day 2", day: 2, size: 300_000),
        Episode(guid: "e3", title: "Arrival", day: 3, size: 300_000),
    ]

    @Test func theUsersStoryDryRunExportPlaylistsAndANoOp() async throws {
        let world = try await World(episodes: Self.threeEpisodes)
        defer { world.tearDown() }
        let destination = world.folder.file("usb")

        let dry = try await world.run([
            "export", destination, "--layout", "plain", "--only", "podcasts", "--playlists", "--dry-run", "--json",
        ])
        #expect(dry.status == 0, "\(dry.stderr)")
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(plan["dryRun"] as? Bool == true)
        let planned = try #require(plan["planned"] as? [[String: Any]])
        #expect(
            planned.compactMap { $0["path"] as? String }.sorted() == [
                "Podcasts/Road Trip/2025-01-01 - Leaving home.mp3",
                "Podcasts/Road Trip/2025-01-02 - On the road_ day 2.mp3",
                "Podcasts/Road Trip/2025-01-03 - Arrival.mp3", "Podcasts/Road Trip/Road Trip.m3u8",
            ])
        #expect(!FileManager.default.fileExists(atPath: destination), "a dry run changes nothing")

        let export = try await world.run(["export", destination, "--only", "podcasts", "--playlists"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("Exported 4 files"), "\(export.stdout)")
        try Self.expectComplete(world, destination, count: 4)
        let playlist = try String(contentsOfFile: destination + "/Podcasts/Road Trip/Road Trip.m3u8", encoding: .utf8)
        #expect(
            playlist.split(separator: "\n").filter { !$0.hasPrefix("#") } == [
                "2025-01-01 - Leaving home.mp3", "2025-01-02 - On the road_ day 2.mp3", "2025-01-03 - Arrival.mp3",
            ])

        let again = try await world.run(["export", destination, "--only", "podcasts", "--playlists", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect((result["exported"] as? [Any])?.isEmpty == true)
        #expect(result["unchanged"] as? Int == 4)
        let text = try await world.run(["export", destination, "--only", "podcasts", "--playlists"])
        #expect(text.stdout.hasPrefix("Up to date: 4 files"), "\(text.stdout)")
    }

    /// strace, which stops the export at a chosen system call: the kill lands mid-copy however fast or loaded the
    /// machine is.
    static let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: strace != nil, "skipped: strace is not installed (Debian: apt install strace)"))
    func killedMidCopyThenRerunFinishesWithNothingPartialAtAFinalName() async throws {
        var episodes = Self.threeEpisodes
        episodes.append(Episode(guid: "big", title: "The long drive", day: 9, size: 1000))
        let world = try await World(episodes: episodes)
        defer { world.tearDown() }
        try world.makeSparse(guid: "big", size: 768 << 20)
        let destination = world.folder.file("copy")

        // The export copies with sendfile, 8 MiB a call, a small file in one. strace stops it (SIGSTOP) as one of
        // its threads enters its fifth sendfile: whichever of the three small files that thread copied first, a
        // chunk of the big one is then in its unnamed file, and the copy cannot end before the kill.
        var environment = ProcessInfo.processInfo.environment
        environment.merge(world.environment) { $1 }
        let traced = try Spawned(
            Self.strace ?? "strace",
            [
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=sendfile", "-e", "inject=sendfile:signal=SIGSTOP:when=5",
                "--", CommandRunner.binary.path, "export", destination, "--copy",
            ], environment: environment)
        guard let export = await Self.childMidCopy(of: traced, destination: destination) else {
            let ended = await traced.finished()
            Issue.record("the export ended before it was stopped mid-copy: \(ended)")
            return
        }
        kill(export, SIGKILL)
        let first = await traced.finished()
        #expect(first.signal == SIGKILL || first.status == 128 + SIGKILL, "\(first)")

        // What the killed run left at final names is whole: every file there has its source's size.
        let left = Self.files(destination).filter { !($0.key.split(separator: "/").last ?? "").hasPrefix(".") }
        #expect(left["Podcasts/Road Trip/2025-01-09 - The long drive.mp3"] == nil)
        // The file being copied had no name yet: nothing of it is visible (a file system without O_TMPFILE would
        // show a named temporary file, which the rerun removes).
        #expect(Self.temporaries(destination).isEmpty, "\(Self.temporaries(destination))")

        let rerun = try await world.run(["export", destination, "--copy", "--json"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        try Self.expectComplete(world, destination, count: 4)
        let manifest = try Self.manifest(destination)
        for (path, size) in left {
            #expect(manifest.files[path]?.size == size, "\(path) was partial at its final name")
        }
        // Files the killed run had placed are not copied again.
        let result = try #require(try JSONSerialization.jsonObject(with: Data(rerun.stdout.utf8)) as? [String: Any])
        let exported = Set(try #require(result["exported"] as? [String]))
        #expect(exported.isDisjoint(with: left.keys), "\(exported) \(left.keys)")
        #expect(exported.contains("Podcasts/Road Trip/2025-01-09 - The long drive.mp3"))
    }

    @Test(.enabled(if: ExportCommandTests.canMount, "skipped: mounting a tmpfs needs root"))
    func aReadOnlyDestinationGivesOneLineAndTheRerunFinishes() async throws {
        let world = try await World(episodes: Self.threeEpisodes)
        defer { world.tearDown() }
        let disk = try #require(SmallTmpfs(bytes: 8 << 20))
        defer { disk.unmount() }
        #expect(Self.shell("/bin/mount", ["-o", "remount,ro", disk.path]))

        let refused = try await world.run(["export", disk.path])
        #expect(refused.status == 1, "\(refused.stderr)")
        let lines = refused.stderr.split(separator: "\n")
        #expect(
            lines.count == 1 && lines.first?.hasPrefix("mediasync: ") == true
                && lines.first?.contains("Read-only file system") == true,
            "\(refused.stderr)")
        #expect(Self.files(disk.path).isEmpty)

        #expect(Self.shell("/bin/mount", ["-o", "remount,rw", disk.path]))
        let done = try await world.run(["export", disk.path])
        #expect(done.status == 0, "\(done.stderr)")
        try Self.expectComplete(world, disk.path, count: 3)
    }

    @Test(.enabled(if: ExportCommandTests.canMount, "skipped: mounting a tmpfs needs root"))
    func aDestinationThatFillsUpStopsWithOneLineAndTheRerunFinishes() async throws {
        let episodes = (1...6).map { Episode(guid: "f\($0)", title: "Part \($0)", day: $0, size: 400_000) }
        let world = try await World(episodes: episodes)
        defer { world.tearDown() }
        let disk = try #require(SmallTmpfs(bytes: 1_500_000))
        defer { disk.unmount() }

        let full = try await world.run(["export", disk.path])
        #expect(full.status == 1, "\(full.stderr)")
        let errors = full.stderr.split(separator: "\n").filter { $0.hasPrefix("mediasync: ") }
        #expect(errors.count == 1 && errors.first?.contains("disk full") == true, "\(full.stderr)")
        #expect(!full.stderr.contains("failed:"), "\(full.stderr)")
        // Whatever is at a final name is a whole episode; no temporary file is left.
        let placed = Self.files(disk.path).filter {
            $0.key.hasPrefix("Podcasts/") && !($0.key.split(separator: "/").last ?? "").hasPrefix(".")
        }
        #expect(!placed.isEmpty && placed.count < 6, "\(placed)")
        #expect(placed.values.allSatisfy { $0 == 400_000 }, "\(placed)")
        #expect(Self.temporaries(disk.path).isEmpty, "\(Self.temporaries(disk.path))")

        #expect(Self.shell("/bin/mount", ["-o", "remount,size=8m", disk.path]))
        let done = try await world.run(["export", disk.path, "--json"])
        #expect(done.status == 0, "\(done.stderr)")
        try Self.expectComplete(world, disk.path, count: 6)
        let result = try #require(try JSONSerialization.jsonObject(with: Data(done.stdout.utf8)) as? [String: Any])
        #expect(
            (result["exported"] as? [String]).map { Set($0).isDisjoint(with: placed.keys) } == true,
            "placed files copied again")
    }

    static let hostileEpisodes = [
        Episode(guid: "v1", title: "What? \"quoted\" a|b* x > y", day: 1, size: 2000),
        Episode(guid: "v2", title: "Trailing dots...", day: 2, size: 2000),
        Episode(guid: "v3", title: String(repeating: "東", count: 100), day: 3, size: 2000),
        Episode(guid: "v4", title: "Same", day: 4, size: 2000),
        Episode(guid: "v5", title: "SAME", day: 4, size: 2000),
        Episode(guid: "v6", title: "Too big", day: 6, size: 1000),
    ]

    /// Exports the hostile names and a sparse 4 GiB file, and checks the FAT32 rules.
    static func exportHostileNames(_ world: World, to destination: String, arguments: [String], fileSystem: String?)
        async throws
    {
        let export = try await world.run(["export", destination, "--json"] + arguments)
        #expect(export.status == 3, "\(export.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])
        if let fileSystem { #expect(result["fileSystem"] as? String == fileSystem) }
        let skipped = try #require(result["skipped"] as? [[String: Any]])
        #expect(
            skipped.count == 1 && (skipped.first?["reason"] as? String)?.contains("too large for FAT32") == true,
            "\(skipped)")
        #expect(skipped.first?["path"] as? String == "Podcasts/AUX_/2025-01-06 - Too big.mp3")
        #expect((result["failed"] as? [Any])?.isEmpty == true, "\(result["failed"] ?? "")")

        let names = Set(files(destination + "/Podcasts/AUX_").keys)
        let truncated = "2025-01-03 - " + String(repeating: "東", count: 79) + ".mp3"
        #expect(truncated.utf8.count <= 255)
        #expect(
            names == [
                "2025-01-01 - What_ _quoted_ a_b_ x _ y.mp3", "2025-01-02 - Trailing dots.mp3", truncated,
                "2025-01-04 - Same.mp3", "2025-01-04 - SAME\(ExportNaming.disambiguator("v5")).mp3",
            ], "\(names)")
        try expectComplete(world, destination, count: 5)

        // The second export is a no-op (the big file is still reported, never half-copied).
        let again = try await world.run(["export", destination] + arguments)
        #expect(again.status == 3)
        #expect(again.stdout.hasPrefix("Up to date: 5 files"), "\(again.stdout)")
        #expect(again.stderr.contains("too large for FAT32"))
        #expect(temporaries(destination).isEmpty)
    }

    @Test func withFAT32RulesNamesAreSafeAndFilesOver4GiBAreSkipped() async throws {
        let world = try await World(title: "AUX", episodes: Self.hostileEpisodes)
        defer { world.tearDown() }
        try world.makeSparse(guid: "v6", size: 4 << 30)
        try await Self.exportHostileNames(
            world, to: world.folder.file("stick"), arguments: ["--fat32"], fileSystem: nil)
    }

    /// A device name Windows reserves stays reserved with any extension (`aux.Show`, `nul.txt`): the stem before
    /// the first dot decides, so the `_` goes where the stem ends, and no exported name is left a device name.
    @Test func deviceNamesWithAnExtensionAreNotExported() async throws {
        let world = try await World(
            title: "aux.Show",
            episodes: [
                Episode(guid: "d1", title: "x", day: 1, size: 500), Episode(guid: "d2", title: "y", day: 2, size: 500),
            ])
        defer { world.tearDown() }
        let destination = world.folder.file("out")
        let export = try await world.run(["export", destination, "--playlists"])
        #expect(export.status == 0, "\(export.stderr)")
        let names = try FileManager.default.subpathsOfDirectory(atPath: destination)
        #expect(names.contains("Podcasts/aux_.Show"), "\(names)")
        for path in names where !path.hasPrefix(".") {
            for component in path.split(separator: "/") {
                #expect(!SafeName.isWindowsReserved(String(component)), "\(path)")
            }
        }
    }

    @Test(
        .enabled(
            if: ExportCommandTests.canMountVfat,
            "skipped: a FAT32 image needs root, mkfs.vfat (dosfstools), a loop device and a kernel with vfat"))
    func onARealFAT32ImageNamesAreSafeAndFilesOver4GiBAreSkipped() async throws {
        let world = try await World(title: "AUX", episodes: Self.hostileEpisodes)
        defer { world.tearDown() }
        try world.makeSparse(guid: "v6", size: 4 << 30)
        let image = world.folder.file("fat.img")
        let mountPoint = world.folder.file("fat")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: image, contents: nil) && truncate(image, 64 << 20) == 0)
        #expect(Self.shell("/usr/sbin/mkfs.vfat", ["-F", "32", image]))
        #expect(Self.shell("/bin/mount", ["-o", "loop,utf8", image, mountPoint]))
        defer { _ = Self.shell("/bin/umount", [mountPoint]) }
        try await Self.exportHostileNames(world, to: mountPoint, arguments: [], fileSystem: "vfat")
    }
}
