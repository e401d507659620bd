import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

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
        // The first sync hangs in a download, holding the lock, however long the second takes to start.
        let movie = sandbox.server.library.movies[0]
        let stalled = "/Items/\(movie.mediaSources[0].id)/Download"
        sandbox.server.inject(.stall(afterBytes: 1_000, seconds: 120), path: stalled)
        let first = try CommandRunner.start(
            ["sync", "--quiet"], environment: sandbox.environment)
        for _ in 0..<3000 where sandbox.server.requests(to: stalled).isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(!sandbox.server.requests(to: stalled).isEmpty)

        let second = try await sandbox.run(["sync"])
        #expect(second.status == 5)
        #expect(second.stderr.split(separator: "\n").count == 1, "\(second.stderr)")
        #expect(second.stderr.contains("another mediasync sync is running"))

        // The first is killed as it hangs; the lock dies with it and the next sync finishes the job.
        first.send(SIGKILL)
        _ = await CommandRunner.wait(first)
        sandbox.server.clearFaults()
        let next = try await sandbox.run(["sync"])
        #expect(next.status == 0, "\(next.stderr)")
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

    /// Without `Policy.EnableContentDownloading` every item says `CanDownload: false`: the sync says so once, names
    /// what an administrator changes, exits 3 (a nightly run that fetches nothing is not a success), and keeps
    /// what is held even with `--delete`.
    @Test func aUserWithoutTheDownloadPermissionIsTold() async throws {
        let sandbox = try await signedInWithAMovie()
        defer { sandbox.tearDown() }
        #expect(try await sandbox.run(["sync"]).status == 0)
        let tree = try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted()
        sandbox.server.updateLibrary { $0.userMayDownload = false }
        #expect(try await sandbox.run(["select", "movie", sandbox.server.library.movies[1].id]).status == 0)

        let refused = try await sandbox.run(["sync", "--delete"])
        #expect(refused.status == 3, "\(refused.stdout)\(refused.stderr)")
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(refused.stderr)")
        #expect(lines.first?.contains("may not download") == true && lines.first?.contains("administrator") == true)
        #expect(!refused.stdout.contains("DVD") && !refused.stderr.contains("DVD"))
        let held = try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted()
        #expect(Set(tree).isSubset(of: Set(held)), "\(held)")

        sandbox.server.updateLibrary { $0.userMayDownload = true }
        let allowed = try await sandbox.run(["sync"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let movie = sandbox.server.library.movies[1]
        let files = try FileManager.default.subpathsOfDirectory(
            atPath: sandbox.folder + "/mirror/Downloads/\(movie.id)")
        #expect(files.contains { $0.hasSuffix(".mkv") }, "\(files)")
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
        #expect(
            try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted() == tree)
    }

    /// Jellyfin answers 401 for a library the user may no longer access as for a revoked token: `/Users/Me` tells
    /// them apart.
    @Test(arguments: [false, true])
    func a401IsASignInProblemOnlyWhenTheTokenIsRefused(_ revoked: Bool) async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        #expect(try await sandbox.login().status == 0)
        let library = sandbox.server.library
        #expect(try await sandbox.run(["select", "library", library.moviesViewId]).status == 0)
        #expect(try await sandbox.run(["select", "series", library.series[0].id]).status == 0)
        #expect(try await sandbox.run(["sync", "--quiet"]).status == 0)
        let tree = try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted()
        sandbox.server.updateLibrary { library in
            if revoked { library.accessToken = "revoked" } else { library.inaccessibleViews = [library.moviesViewId] }
        }
        let run = try await sandbox.run(["sync", "--delete", "--quiet"])
        #expect(run.status == (revoked ? 4 : 3), "\(run.stderr)")
        if !revoked {
            #expect(run.stderr.contains("not accessible"), "\(run.stderr)")
            #expect(run.stderr.contains("not permitted to access Library Movies"), "\(run.stderr)")
        }
        #expect(
            try FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads").sorted() == tree)
    }

    @Test func aRootThatIsAFileIsFatal() async throws {
        let sandbox = try await signedInWithAMovie()
        defer { sandbox.tearDown() }
        let file = sandbox.folder + "/not-a-folder"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
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
