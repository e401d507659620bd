import Foundation
import MediaSyncTestSupport

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
        -> Spawned
    {
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        return try Spawned(binary.path, arguments, environment: env, input: input.map { Array($0.utf8) })
    }

    /// Runs the binary to completion. The waiting happens on a Dispatch thread, not on the test's
    /// cooperative thread: a blocked cooperative thread would starve the other tests running in parallel.
    static func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) async throws
        -> Output
    {
        await wait(try start(arguments, environment: environment, input: input))
    }

    /// Waits for a process from ``start(_:environment:input:)`` to finish (on a Dispatch thread) and collects its output.
    static func wait(_ process: Spawned) async -> Output {
        let finished = await process.finished()
        return Output(status: finished.status, stdout: finished.stdout, stderr: finished.stderr)
    }
}
