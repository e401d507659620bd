import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

/// `mediasync sync` as cron or systemd runs it: one exit code per failure class (README, "Exit codes"),
/// one clear line, and the next run finishing the job.
@Suite struct SyncExitCodeTests {
    private func signedInWithAMovie() async throws -> JellyfinCommandTests.Sandbox {
        let sandbox = try JellyfinCommandTests.Sandbox()
        #expect(try await sandbox.login().status == 0)
        #expect(try await sandbox.run(["select", "movie", sandbox.server.library.movies[0].id]).status == 0)
        return sandbox
    }

    @Test func twoSyncProcessesOnOneRoot() async throws {
        let sandbox = try await signedInWithAMovie()
        defer { sandbox.tearDown() }
        #expect(try await sandbox.run(["select", "series", sandbox.server.library.series[0].id]).status == 0)
        // Slow enough that the first sync is still running when the second starts.
        sandbox.server.setThrottle(bytesPerSecond: 100_000)
        // `select` asked for /Items too: wait for a request the sync makes.
        let asked = sandbox.server.requests(to: "/Items").count
        let (first, firstOut, firstErr) = try CommandRunner.start(["sync", "--quiet"], environment: sandbox.environment)
        // The first sync lists only after it holds the lock.
        for _ in 0..<500 where sandbox.server.requests(to: "/Items").count == asked {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(sandbox.server.requests(to: "/Items").count > asked)

        let second = try await sandbox.run(["sync"])
        #expect(second.status == 5)
        #expect(second.stderr.split(separator: "\n").count == 1, "\(second.stderr)")
        #expect(second.stderr.contains("another mediasync sync is running"))

        sandbox.server.setThrottle(bytesPerSecond: nil)
        let finished = try await CommandRunner.wait(first, firstOut, firstErr)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try await sandbox.run(["sync"]).stdout.contains("Up to date"))
    }

    @Test func aFileTheServerRefusesIsAPartialFailureAndTheNextRunFinishes() async throws {
        let sandbox = try await signedInWithAMovie()
        defer { sandbox.tearDown() }
        let movie = sandbox.server.library.movies[0]
        sandbox.server.inject(.status(500), path: "/Items/\(movie.mediaSources[0].id)/Download", count: 100)
        let failed = try await sandbox.run(["sync", "--quiet"])
        #expect(failed.status == 3)
        #expect(failed.stderr.contains("\(movie.id)-\(movie.mediaSources[0].id)"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.folder + "/mirror/Downloads/\(movie.id)/metadata.json"))

        sandbox.server.clearFaults()
        let again = try await sandbox.run(["sync"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: sandbox.folder + "/mirror/Downloads/\(movie.id)/metadata.json"))
    }

    @Test func anUnreachableServerKeepsEverythingAndIsAPartialFailure() async throws {
        let sandbox = try await signedInWithAMovie()
        defer { sandbox.tearDown() }
        #expect(try await sandbox.run(["sync"]).status == 0)
        let tree = try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted()
        sandbox.server.shutdown()

        let offline = try await sandbox.run(["sync", "--delete"])
        #expect(offline.status == 3)
        let lines = offline.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(offline.stderr)")
        #expect(lines.first?.contains("Jellyfin") == true && lines.first?.contains("127.0.0.1") == true)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted() == tree)
    }

    @Test func aRootThatIsAFileIsFatal() async throws {
        let sandbox = try await signedInWithAMovie()
        defer { sandbox.tearDown() }
        let file = sandbox.folder + "/not-a-folder"
        FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        let output = try await sandbox.run(["sync"], extra: ["MEDIASYNC_ROOT": file])
        #expect(output.status == 1)
        #expect(output.stderr.split(separator: "\n").count == 1, "\(output.stderr)")
        #expect(output.stderr.contains(file))
    }

    @Test(arguments: [["sync", "--max-delete", "-3"], ["sync", "--only", "everything"], ["sync", "--no-such-flag"]])
    func aWrongCommandLineIsAUsageError(_ arguments: [String]) async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let output = try await sandbox.run(arguments)
        #expect(output.status == 64)
        #expect(!output.stderr.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.folder + "/mirror"))
    }
}
