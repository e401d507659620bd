import Foundation
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct GetCommandTests {
    private func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ ($0 >> 11)) }
    }

    /// Runs `body` with a fresh test server and the path of a fresh temporary folder, both gone after it whatever it
    /// does.
    private func withServerAndFolder(_ body: (TestServer, String) async throws -> Void) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await TemporaryDirectory.with { folder in try await body(server, folder.path) }
    }

    @Test func printsItsVersion() async throws {
        let output = try await CommandRunner.run(["--version"])
        #expect(output.status == 0)
        #expect(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
    }

    @Test func downloadsFromAnInputFileWithOutputPaths() async throws {
        try await withServerAndFolder { server, folder in
            server.setFile("/a.mp3", contents: bytes(70_000, seed: 1))
            server.setFile("/Items/abc/Download", contents: bytes(90_000, seed: 2))
            let list = "# comment\n\(server.baseURL)/a.mp3\n\(server.baseURL)/Items/abc/Download\tmovies/abc/abc.mkv\n"
            try list.write(toFile: folder + "/list.txt", atomically: true, encoding: .utf8)
            let output = try await CommandRunner.run([
                "get", "--input-file", folder + "/list.txt", "--output-dir", folder + "/out",
            ])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(FileManager.default.contents(atPath: folder + "/out/a.mp3") == Data(bytes(70_000, seed: 1)))
            #expect(
                FileManager.default.contents(atPath: folder + "/out/movies/abc/abc.mkv") == Data(bytes(90_000, seed: 2))
            )
            #expect(output.stderr.contains("2 downloaded"))
        }
    }

    @Test func exitsWithThePartialFailureCodeAndNamesEachFailure() async throws {
        try await withServerAndFolder { server, folder in
            server.setFile("/ok", contents: bytes(1000, seed: 3))
            let output = try await CommandRunner.run([
                "get", "--output-dir", folder, "--attempts", "1", server.baseURL + "/ok", server.baseURL + "/gone",
            ])
            #expect(output.status == 3)
            let failures = output.stderr.split(separator: "\n").filter { $0.hasPrefix("failed: ") }
            #expect(failures.count == 1)
            #expect(failures.first?.contains("404") == true)
            #expect(failures.first?.contains("/gone") == true)
        }
    }

    @Test(arguments: ["../escape.bin", "/etc/evil", "a/../../b", "a//b", "."])
    func refusesOutputPathsOutsideTheFolder(path: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let folder = directory.path
        try "http://127.0.0.1:9/x\t\(path)\n".write(toFile: folder + "/list.txt", atomically: true, encoding: .utf8)
        let output = try await CommandRunner.run([
            "get", "--input-file", folder + "/list.txt", "--output-dir", folder + "/out",
        ])
        #expect(output.status == 64)
        #expect(output.stderr.contains("not a safe relative path"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/out"))
    }

    @Test func aKilledRunLeavesNothingInPlaceAndTheNextRunResumes() async throws {
        try await withServerAndFolder { server, folder in
            let media = bytes(12 << 20, seed: 4)
            server.setFile("/movie.mkv", contents: media)
            // The first response stops after 3 MiB and hangs: the process is killed while it waits, whatever
            // the machine's load (no race with the download finishing).
            server.inject(.stall(afterBytes: 3 << 20, seconds: 300), path: "/movie.mkv")
            // The client's stall window is longer than the stall: it never gives up and resumes by itself before the kill,
            // however long a loaded machine takes to see the partial file.
            let arguments = [
                "get", "--quiet", "--stall-timeout", "600", "--output-dir", folder, server.baseURL + "/movie.mkv",
            ]
            let process = try CommandRunner.start(arguments)
            let staging = folder + "/.mediasync-staging"
            // Wait until a resumable partial file (past the 1 MiB record threshold) is in staging, then kill -9.
            let partial = await PartialFileWatch.size(in: staging, reaching: 2 << 20)
            process.send(SIGKILL)
            #expect(await process.finished().signal == SIGKILL)
            #expect(partial >= 2 << 20)
            #expect(!FileManager.default.fileExists(atPath: folder + "/movie.mkv"))

            let rerun = try await CommandRunner.run(arguments)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(FileManager.default.contents(atPath: folder + "/movie.mkv") == Data(media))
            let resumed = server.requests(to: "/movie.mkv").last
            #expect(resumed?.headers["range"]?.hasPrefix("bytes=") == true)
            #expect(resumed?.headers["range"] != "bytes=0-")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder)) == ["movie.mkv"])
        }
    }
}

@Suite struct ScheduleCommandTests {
    @Test func printsUnitsAndACronLineMatchingTheScripts() async throws {
        let systemd = try await CommandRunner.run(["schedule", "print", "--root", "/srv/offline"])
        #expect(systemd.status == 0)
        #expect(systemd.stdout.contains("Environment=MEDIASYNC_ROOT=/srv/offline"))
        #expect(systemd.stdout.contains("ExecStart=\(CommandRunner.binary.resolvingSymlinksInPath().path) sync"))
        #expect(systemd.stdout.contains("OnCalendar=*-*-* 03:30"))
        let cron = try await CommandRunner.run(["schedule", "print", "--format", "cron", "--root", "/srv/offline"])
        #expect(cron.stdout.hasPrefix("30 3 * * *  MEDIASYNC_ROOT=/srv/offline "))
        // The files under Scripts/schedule/ hold the same templates.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let service = try String(
            contentsOf: package.appendingPathComponent("Scripts/schedule/mediasync.service"), encoding: .utf8)
        let body = service.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let printed = systemd.stdout.replacingOccurrences(of: "/srv/offline", with: "@ROOT@")
            .replacingOccurrences(of: CommandRunner.binary.resolvingSymlinksInPath().path, with: "@BINARY@")
        #expect(body.allSatisfy { printed.contains($0) })
    }
}
