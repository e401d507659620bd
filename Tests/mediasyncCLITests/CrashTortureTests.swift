import Foundation
import MediaSync
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The quick variant of `Scripts/torture-kill.sh`: a `mediasync sync` process is killed with
/// SIGKILL at a chosen moment (mid-transfer past the resume threshold, right after a file was fetched, right after
/// a metadata file was written), then run again until it succeeds; the mirror must match the server byte for
/// byte, hold nothing partial or temporary, agree with its index (`verify`), and the bytes fetched again must stay
/// within the partial files' sizes plus one retry for each file fetched just before the kill.
///
/// The moments are events (a resume record appearing, a log line), not delays.
@Suite struct CrashTortureTests {
    enum Moment: String, CaseIterable, Sendable {
        /// A partial file past 1 MiB has its resume record in the staging area.
        case midTransfer
        /// The first "downloaded" line: a file is fetched, placing and recording follow.
        case afterFirstDownload
        /// The first "written" line: metadata writes.
        case afterFirstMetadataWrite
    }

    /// The transfers a sync runs at once (TransferOptions' default): files fetched but not yet recorded.
    static let concurrency = 4

    @Test(arguments: Moment.allCases)
    func aKilledSyncResumesAndLosesNothing(_ moment: Moment) async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        try await sandbox.prepare()

        // Reference: one sync without interruption and without the throttle gives the expected tree.
        sandbox.server.setThrottle(bytesPerSecond: nil)
        let reference = try await sandbox.run(["sync"], root: sandbox.referenceRoot)
        #expect(reference.status == 0, "\(reference.stderr)")
        let expected = try sandbox.files(under: sandbox.referenceRoot)
        #expect(expected.count >= 9)
        for source in sandbox.server.library.allMediaSources {
            let path = expected.first { $0.hasSuffix("-\(source.id).mkv") }
            let bytes = path.flatMap { FileManager.default.contents(atPath: sandbox.referenceRoot + "/" + $0) }
            #expect(bytes.map { [UInt8]($0) } == sandbox.server.library.mediaBytes(forMediaSourceId: source.id))
        }

        // The trial: start, kill at the moment, run again until it exits 0.
        sandbox.server.setThrottle(bytesPerSecond: 1_000_000)
        try await sandbox.waitUntilIdle()
        sandbox.server.resetStatistics()
        if moment == .midTransfer {
            // Each media response pauses past the resume threshold until the client goes away, so no file can finish
            // between its resume record appearing and the kill however slow the machine is (the window was 0.45 s of
            // a 1.5 MB file at 1 MB/s).
            // A retry (the engine's own low-speed window, 30 s, can run out before the kill on a machine slowed by a
            // sanitizer) pauses before its first byte the same way, so the partial file and its record stay.
            for source in sandbox.server.library.allMediaSources {
                let path = "/Items/\(source.id)/Download"
                sandbox.server.inject(.stall(afterBytes: 1_200_000, seconds: 3_600), path: path)
                sandbox.server.inject(.stall(afterBytes: 0, seconds: 3_600), path: path, count: 1_000)
            }
        }
        let live = try LiveProcess(["sync"], environment: sandbox.environment(root: sandbox.root))
        let reached = try await sandbox.wait(for: moment, in: live)
        #expect(reached, "the sync ended before \(moment.rawValue): \(live.text)")
        let killedAt = ServedResponse.monotonicNow()
        live.kill()
        // What the killed run left to resume: partial files with their resume records.
        let killedStaging = sandbox.root + "/.mediasync/staging"
        let leftAtKill = (try? FileManager.default.contentsOfDirectory(atPath: killedStaging)) ?? []
        let resumable = leftAtKill.filter { $0.hasSuffix(".part.meta") }.compactMap { name -> String? in
            // The resume record names the URL the partial file's bytes came from.
            let record = FileManager.default.contents(atPath: killedStaging + "/" + name)
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            return (record?["url"] as? String).flatMap { URLComponents(string: $0)?.path }
        }
        sandbox.server.clearFaults()
        try await sandbox.waitUntilIdle()
        let killedRun = sandbox.server.responses
        var reruns: [Int32] = []
        while reruns.last != 0 && reruns.count < 3 {
            let rerun = try await sandbox.run(["sync"], root: sandbox.root)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            reruns.append(rerun.status)
        }
        try await sandbox.waitUntilIdle()

        // Nothing lost, nothing partial or temporary, the index agrees with the tree.
        let held = try sandbox.files(under: sandbox.root)
        #expect(held == expected)
        for path in expected {
            let mine = FileManager.default.contents(atPath: sandbox.root + "/" + path)
            let theirs = FileManager.default.contents(atPath: sandbox.referenceRoot + "/" + path)
            if path.hasSuffix("metadata.json") {
                #expect(mine.flatMap { try? JSONSerialization.jsonObject(with: $0) } != nil, "\(path)")
            } else {
                #expect(mine != nil && mine == theirs, "\(path) differs from the server's bytes")
            }
        }
        let staging = sandbox.root + "/.mediasync/staging"
        let leftInStaging = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
        #expect(leftInStaging.isEmpty, "left in staging: \(leftInStaging)")
        let indexed = try MirrorIndex(path: MirrorRoot(path: sandbox.root).indexPath).entries().map(\.file.path)
            .sorted()
        #expect(indexed == held)
        let verify = try await sandbox.run(["verify"], root: sandbox.root)
        #expect(verify.status == 0, "\(verify.stdout)")

        // Bytes fetched again: at most the partial files plus one retry for each file fetched just before the kill.
        let sizes = Dictionary(
            uniqueKeysWithValues: try expected.map { path in
                (
                    path,
                    (try FileManager.default.attributesOfItem(atPath: sandbox.root + "/" + path)[.size] as? Int) ?? 0
                )
            })
        let fileResponses = sandbox.server.responses.filter { $0.method == "GET" && CrashTortureTests.isFile($0.path) }
        var served: [String: Int] = [:]
        for response in fileResponses { served[response.path, default: 0] += response.bodyBytesSent }
        let needed = sandbox.neededSizes(sizes: sizes)
        let fetchedAgain = served.reduce(0) { $0 + max(0, $1.value - (needed[$1.key] ?? 0)) }
        let killedFiles = killedRun.filter { $0.method == "GET" && CrashTortureTests.isFile($0.path) }
        let partial = killedFiles.filter { $0.endNanoseconds > killedAt }.reduce(0) { $0 + $1.bodyBytesSent }
        let retries = killedFiles.filter { $0.endNanoseconds <= killedAt && ($0.status == 200 || $0.status == 206) }
            .sorted { $0.endNanoseconds < $1.endNanoseconds }.suffix(CrashTortureTests.concurrency)
            .reduce(0) { $0 + $1.bodyBytesPlanned }
        #expect(fetchedAgain <= partial + retries, "fetched again \(fetchedAgain) B, bound \(partial) + \(retries) B")
        if moment == .midTransfer {
            // Every partial file the killed run left with a resume record was resumed, not fetched from the start.
            // (An intermittent failure here was the test's window, not the engine: a 1.5 MB file at
            // 1 MB/s finished 0.45 s after its record appeared, and a loaded machine killed later than that.)
            #expect(!resumable.isEmpty, "no resume record at the kill: \(leftAtKill)")
            let after = sandbox.server.allRequests.filter { $0.headers["range"] != nil }.map(\.path)
            for path in resumable {
                #expect(after.contains(path), "\(path) had a resume record at the kill but was fetched from the start")
            }
        }
    }

    /// Regression (torture trial 2 of the first run): the index recorded a batch's files only once the whole
    /// batch had ended, so a sync killed mid-batch fetched every file it had already placed all over again.
    @Test func aKilledSyncDoesNotFetchTheFilesItHadAlreadyPlacedAgain() async throws {
        let sandbox = try Sandbox(mediaSize: 300_000)
        defer { sandbox.tearDown() }
        try await sandbox.prepare()
        sandbox.server.setThrottle(bytesPerSecond: 500_000)
        // One transfer at a time: media first (higher priority), so two media files are placed before the kill.
        let live = try LiveProcess(
            ["sync", "--concurrency", "1"], environment: sandbox.environment(root: sandbox.root))
        var placed: [String] = []
        for _ in 0..<12_000 {
            placed = live.text.split(separator: "\n").filter { $0.contains(" info downloaded ") && $0.contains(".mkv") }
                .map(String.init)
            if placed.count >= 2 || !live.isRunning { break }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        live.kill()
        #expect(placed.count >= 2, "\(live.text)")
        try await sandbox.waitUntilIdle()
        let rerun = try await sandbox.run(["sync"], root: sandbox.root)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        for line in placed {
            guard let path = line.split(separator: " ").first(where: { $0.hasPrefix("Downloads/") }),
                let dash = path.lastIndex(of: "-"), let dot = path.lastIndex(of: ".")
            else { continue }
            let download = "/Items/\(path[path.index(after: dash)..<dot])/Download"
            #expect(sandbox.server.requests(to: download).count == 1, "\(download) was fetched again after the kill")
        }
    }

    /// strace, which kills the sync at a chosen system call: the kill lands at that moment however fast or loaded the
    /// machine is.
    static let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Regression (the crash torture's `body-end` kills): a sync killed after a file's last byte reached its partial
    /// file, as the partial file is renamed to its final name (fsynced, checked and hashed: complete), left it and its
    /// resume record in staging. The next sync asked `Range: bytes=SIZE-`, the server answered 416, and the engine
    /// threw the whole file away and fetched it again from byte 0. It must be continued (its last byte asked again,
    /// which ties it to the server's version) and placed.
    @Test(.enabled(if: strace != nil, "skipped: strace is not installed (Debian: apt install strace)"))
    func aSyncKilledAsACompleteFileIsRenamedIntoPlaceDoesNotFetchItAgain() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        try await sandbox.prepare()
        let reference = try await sandbox.run(["sync"], root: sandbox.referenceRoot)
        #expect(reference.status == 0, "\(reference.stderr)")
        let expected = try sandbox.files(under: sandbox.referenceRoot)
        let source = try #require(sandbox.server.library.allMediaSources.first)
        let media = try #require(expected.first { $0.hasSuffix("-\(source.id).mkv") })
        let bytes = try #require(sandbox.server.library.mediaBytes(forMediaSourceId: source.id))
        let download = "/Items/\(source.id)/Download"
        let part = Self.partPath(staging: sandbox.root + "/.mediasync/staging", destination: sandbox.root + "/" + media)
        try await sandbox.waitUntilIdle()
        sandbox.server.resetStatistics()

        // The kill: as the sync renames that partial file to its final name (the rename is not made).
        var environment = ProcessInfo.processInfo.environment
        environment.merge(sandbox.environment(root: sandbox.root)) { $1 }
        let traced = try Spawned(
            Self.strace ?? "strace",
            [
                "-f", "-qq", "-o", "/dev/null", "-P", part, "-e", "trace=rename,renameat,renameat2", "-e",
                "inject=rename,renameat,renameat2:error=ENOENT:signal=SIGKILL", "--", CommandRunner.binary.path, "sync",
            ], environment: environment)
        let killed = await traced.finished()
        #expect(killed.signal == SIGKILL || killed.status == 128 + SIGKILL, "\(killed)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.root + "/" + media))
        // What the kill left: the whole file, named in staging, with its resume record.
        #expect(Self.readFile(part) == bytes, "the partial file is not the whole file")
        #expect(FileManager.default.fileExists(atPath: part + ".meta"))
        try await sandbox.waitUntilIdle()
        #expect(sandbox.server.requests(to: download).count == 1)

        let rerun = try await sandbox.run(["sync"], root: sandbox.root)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try sandbox.files(under: sandbox.root) == expected)
        #expect(Self.readFile(sandbox.root + "/" + media) == bytes)
        let ranges = sandbox.server.requests(to: download).map { $0.headers["range"] ?? "no Range" }
        // The killed run's request, then one continuing the file with its last byte: none from byte 0.
        #expect(ranges == ["no Range", "bytes=\(bytes.count - 1)-"])
        let leftInStaging = (try? FileManager.default.contentsOfDirectory(atPath: sandbox.root + "/.mediasync/staging"))
        #expect((leftInStaging ?? []).isEmpty, "left in staging: \(leftInStaging ?? [])")
        let verify = try await sandbox.run(["verify"], root: sandbox.root)
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    /// Where the transfer engine keeps the partial file of `destination` (StagingArea.partPath): the FNV-1a hash of
    /// the path, then the name's first 40 characters with all but ASCII letters, digits and `._-` made `_`.
    static func partPath(staging: String, destination: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in destination.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let name = (destination as NSString).lastPathComponent.unicodeScalars.prefix(40).map { scalar -> String in
            let ok =
                scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "." || scalar == "_" || scalar == "-")
            return ok ? String(scalar) : "_"
        }
        return staging + "/" + String(hash, radix: 16) + "-" + name.joined() + ".part"
    }

    static func readFile(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    static func isFile(_ path: String) -> Bool {
        path.hasPrefix("/Items/") && (path.hasSuffix("/Download") || path.contains("/Images/"))
    }

    struct Sandbox {
        let server: TestServer
        let folder: String
        var root: String { folder + "/mirror" }
        var referenceRoot: String { folder + "/reference" }

        init(mediaSize: Int = 1_500_000) throws {
            server = try TestServer(library: TestLibrary(movies: 2, series: 0, mediaSize: mediaSize))
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-torture-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        func environment(root: String) -> [String: String] {
            ["MEDIASYNC_ROOT": root, "MEDIASYNC_CONFIG_DIR": folder + "/config", "MEDIASYNC_API_KEY": ""]
        }

        func run(_ arguments: [String], root: String, input: String? = nil) async throws -> CommandRunner.Output {
            try await CommandRunner.run(arguments, environment: environment(root: root), input: input)
        }

        /// Signs in and selects both movies (all versions) in both roots.
        func prepare() async throws {
            let login = try await run(
                ["login", server.baseURL, "--username", "demo", "--password-stdin"], root: root, input: "demo\n")
            #expect(login.status == 0, "\(login.stderr)")
            for root in [root, referenceRoot] {
                for movie in server.library.movies {
                    let select = try await run(["select", "movie", movie.id, "--all-versions"], root: root)
                    #expect(select.status == 0, "\(select.stderr)")
                }
            }
        }

        /// Waits for the moment; false when the process ended first.
        /// Polls on a thread of its own: a busy parallel test run can keep the cooperative threads from resuming a
        /// sleeping task for longer than the moment lasts.
        func wait(for moment: Moment, in live: LiveProcess) async throws -> Bool {
            let staging = root + "/.mediasync/staging"
            return await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    for _ in 0..<12_000 {
                        let reached: Bool
                        switch moment {
                        case .midTransfer:
                            let names = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
                            reached = names.contains(where: { $0.hasSuffix(".part.meta") })
                        case .afterFirstDownload:
                            reached = live.text.contains(" info downloaded ")
                        case .afterFirstMetadataWrite:
                            reached = live.text.contains(" info written ")
                        }
                        if reached { return continuation.resume(returning: true) }
                        if !live.isRunning { return continuation.resume(returning: false) }
                        usleep(5_000)
                    }
                    continuation.resume(returning: false)
                }
            }
        }

        /// Waits until the server has finished every response (a killed client's included).
        func waitUntilIdle() async throws {
            for _ in 0..<6_000 where server.requestsInFlight > 0 {
                try await Task.sleep(nanoseconds: 5_000_000)
            }
        }

        /// Every file under `Downloads/` of a root, relative to the root, sorted.
        func files(under root: String) throws -> [String] {
            TreeReading.files(under: root + "/Downloads", prefix: "Downloads/")
        }

        /// The size each file URL had to be fetched once (a fresh root needs every file), by request path.
        func neededSizes(sizes: [String: Int]) -> [String: Int] {
            var needed: [String: Int] = [:]
            for (path, size) in sizes where !path.hasSuffix("metadata.json") {
                let name = (path as NSString).lastPathComponent
                let parts = path.split(separator: "/")
                guard parts.count >= 2 else { continue }
                let itemId = String(parts[1])
                if name.hasSuffix(".mkv"), let dash = name.lastIndex(of: "-"), let dot = name.lastIndex(of: ".") {
                    needed["/Items/\(name[name.index(after: dash)..<dot])/Download"] = size
                } else if name.hasPrefix("Primary") {
                    needed["/Items/\(itemId)/Images/Primary"] = size
                } else if name.hasPrefix("Backdrop") {
                    needed["/Items/\(itemId)/Images/Backdrop/0"] = size
                }
            }
            return needed
        }

        func tearDown() {
            server.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }
}

/// A running `mediasync` process whose output is collected as it comes.
final class LiveProcess: Sendable {
    private let process: Spawned

    init(_ arguments: [String], environment: [String: String]) throws {
        process = try CommandRunner.start(arguments, environment: environment)
    }

    /// Standard error so far.
    var text: String { process.errorSoFar }

    /// Standard output so far.
    var standardOutput: String { process.outputSoFar }

    var isRunning: Bool { process.isRunning }

    /// SIGKILL, then waits for the process to end.
    func kill() {
        process.send(SIGKILL)
        _ = process.finish()
    }

    /// Waits for the end and returns what it printed.
    func finish() -> CommandRunner.Output {
        let finished = process.finish()
        return CommandRunner.Output(status: finished.status, stdout: finished.stdout, stderr: finished.stderr)
    }
}
