import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `mediasync` binary, as a user or a cron job would.
struct CommandRunner {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `mediasync` executable beside the test bundle (SwiftPM builds both into the same folder).
    static var binary: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        // On Linux the test runner is `<bin>/mediasyncPackageTests.xctest`; elsewhere it may be nested.
        while folder.path != "/"
            && !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("mediasync").path)
        {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("mediasync")
    }

    static func start(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws
        -> (Process, Pipe, Pipe)
    {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        if let input {
            let pipe = Pipe()
            process.standardInput = pipe
            try process.run()
            pipe.fileHandleForWriting.write(Data(input.utf8))
            try pipe.fileHandleForWriting.close()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        return (process, out, err)
    }

    /// Runs the binary to completion. The waiting happens on a Dispatch thread, not on the test's
    /// cooperative thread: a blocked cooperative thread would starve the other tests running in parallel.
    static func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) async throws
        -> Output
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    continuation.resume(returning: try runBlocking(arguments, environment: environment, input: input))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Waits for a process from ``start(_:environment:input:)`` to finish (on a Dispatch thread) and collects its output.
    static func wait(_ process: Process, _ out: Pipe, _ err: Pipe) async throws -> Output {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: collect(process, out, err))
            }
        }
    }

    private static func runBlocking(_ arguments: [String], environment: [String: String], input: String?) throws
        -> Output
    {
        let (process, out, err) = try start(arguments, environment: environment, input: input)
        return collect(process, out, err)
    }

    private static func collect(_ process: Process, _ out: Pipe, _ err: Pipe) -> Output {
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}
