import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `mediasync serve` as a command: the password from stdin, the refusal to listen beyond loopback without one, and
/// a served root answering over HTTP until SIGTERM.
@Suite struct ServeCommandTests {
    /// The `mediasync` executable beside the test bundle.
    static var binary: String {
        var folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/"
            && !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("mediasync").path)
        {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("mediasync").path
    }

    struct Scratch {
        var folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-cli-\(UUID().uuidString)")
            .path
        var root: String { folder + "/root" }
        var config: String { folder + "/config" }
        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["MEDIASYNC_CONFIG_DIR"] = config
            environment["MEDIASYNC_ROOT"] = root
            return environment
        }
    }

    static func start(_ arguments: [String], _ scratch: Scratch, input: String? = nil) throws -> Spawned {
        try Spawned(binary, arguments, environment: scratch.environment, input: Array((input ?? "").utf8))
    }

    static func run(_ arguments: [String], _ scratch: Scratch, input: String? = nil) async throws -> (
        status: Int32, out: String, err: String
    ) {
        let finished = try await start(arguments, scratch, input: input).finished()
        return (finished.status, finished.stdout, finished.stderr)
    }

    @Test func aPasswordIsSetFromStdinAndNoPasswordMeansLoopbackOnly() async throws {
        let scratch = Scratch()
        defer { try? FileManager.default.removeItem(atPath: scratch.folder) }
        let beyond = try await Self.run(["serve", "--listen", "0.0.0.0:0"], scratch)
        #expect(beyond.status != 0)
        #expect(beyond.err.contains("without a password"))
        #expect(beyond.err.split(separator: "\n").count == 1)

        let nameless = try await Self.run(["serve", "--set-password"], scratch, input: "pw\n")
        #expect(nameless.status != 0)
        #expect(nameless.err.contains("--user"))

        let set = try await Self.run(["serve", "--set-password", "--user", "bob"], scratch, input: "s3cret\nignored\n")
        #expect(set.status == 0, "\(set.err)")
        let path = scratch.config + "/serve-password.json"
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        #expect(try !String(contentsOfFile: path, encoding: .utf8).contains("s3cret"))
    }

    /// Starts `mediasync serve` on 127.0.0.1 (any free port); returns the process, what it printed up to its
    /// "Serving … at http://…" line, and that address.
    static func serve(_ scratch: Scratch) async throws -> (Spawned, String, String) {
        let process = try start(["serve", "--listen", "127.0.0.1:0"], scratch)
        var lines = ""
        for _ in 0..<60_000 where process.isRunning {
            lines = process.outputSoFar
            if lines.contains("Serving") && lines.hasSuffix("\n") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let address =
            lines.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init) ?? "http://x"
        return (process, lines, address)
    }

    /// Started with standard input, output and error closed (`<&- >&- 2>&-`, as some schedulers start a program),
    /// `mediasync` puts /dev/null there before it opens anything: no socket or file of its own takes those numbers,
    /// where a message meant for the terminal would be written into it.
    @Test func closedStandardStreamsAreOpenedOnDevNull() async throws {
        let scratch = Scratch()
        defer { try? FileManager.default.removeItem(atPath: scratch.folder) }
        let process = try Spawned(
            "/bin/sh", ["-c", #"exec "$0" serve --listen 127.0.0.1:0 <&- >&- 2>&-"#, Self.binary],
            environment: scratch.environment)
        defer {
            process.send(SIGTERM)
            _ = process.finish()
        }
        func target(_ descriptor: String) -> String? {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.pid)/fd/\(descriptor)")
        }
        // Once it listens, it has opened all it opens at its start.
        var streams: [String] = []
        for _ in 0..<60_000 where process.isRunning {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.pid)/fd")) ?? []
            if descriptors.compactMap(target).contains(where: { $0.hasPrefix("socket:") }) {
                streams = ["0", "1", "2"].map { target($0) ?? "closed" }
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(streams == ["/dev/null", "/dev/null", "/dev/null"])
    }

    /// Syncs `fixture` (everything selected), sets the password and starts `mediasync serve` (the binary) on its
    /// root; returns the process and its address.
    static func serve(_ fixture: ServeFixture) async throws -> (Spawned, String) {
        try fixture.selectEverything()
        try await fixture.sync()
        try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
        var scratch = Scratch()
        scratch.folder = fixture.folder
        let (process, _, address) = try await serve(scratch)
        return (process, address)
    }

    @Test func servesUntilSIGTERM() async throws {
        let scratch = Scratch()
        defer { try? FileManager.default.removeItem(atPath: scratch.folder) }
        let (process, lines, address) = try await Self.serve(scratch)
        #expect(lines.contains("No password is set"))
        // An empty mirror: the kinds always counted, each in the plural English gives zero.
        #expect(lines.contains("): 0 movies, 0 series, 0 episodes.\n"), "\(lines)")
        let http = ServeHTTP(base: address, serverId: "")
        let info = try await http.send("GET", "/System/Info/Public")
        #expect(info.status == 200)
        process.send(SIGTERM)
        #expect(await process.finished().status == 0)
    }
}
