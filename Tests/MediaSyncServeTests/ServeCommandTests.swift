import Foundation
import MediaSync
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

    static func start(_ arguments: [String], _ scratch: Scratch, input: String? = nil) throws -> (
        Process, Pipe, Pipe
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = scratch.environment
        let out = Pipe()
        let err = Pipe()
        let stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        return (process, out, err)
    }

    static func run(_ arguments: [String], _ scratch: Scratch, input: String? = nil) async throws -> (
        status: Int32, out: String, err: String
    ) {
        let (process, out, err) = try start(arguments, scratch, input: input)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let output = out.fileHandleForReading.readDataToEndOfFile()
                let error = err.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(
                    returning: (
                        process.terminationStatus, String(decoding: output, as: UTF8.self),
                        String(decoding: error, as: UTF8.self)
                    ))
            }
        }
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
    static func serve(_ scratch: Scratch) async throws -> (Process, String, String) {
        let (process, out, _) = try start(["serve", "--listen", "127.0.0.1:0"], scratch)
        let lines: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var text = ""
                while !text.contains("Serving") || !text.hasSuffix("\n") {
                    let chunk = out.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: text)
            }
        }
        let address =
            lines.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init) ?? "http://x"
        return (process, lines, address)
    }

    @Test func servesUntilSIGTERM() async throws {
        let scratch = Scratch()
        defer { try? FileManager.default.removeItem(atPath: scratch.folder) }
        let (process, lines, address) = try await Self.serve(scratch)
        #expect(lines.contains("No password is set"))
        let http = ServeHTTP(base: address, serverId: "")
        let info = try await http.send("GET", "/System/Info/Public")
        #expect(info.status == 200)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
