import Foundation
import MediaSync
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Quality-capped downloads through the CLI, as a user meets them: presets and caps at select time, a transcode
/// synced, a killed sync resumed at the missing segments, `get --hls`.
@Suite struct TranscodeCommandTests {
    typealias Sandbox = JellyfinCommandTests.Sandbox

    /// The movie runs 30 s: ten 3 s segments.
    static func shorten(_ sandbox: Sandbox, _ movie: TestItem) {
        sandbox.server.updateLibrary { library in
            for source in movie.mediaSources { library.updateMediaSource(source.id) { $0.runTimeTicks = 300_000_000 } }
        }
    }

    @Test func selectsAQualityAndSyncsTheTranscode() async throws {
        try await Sandbox.signedIn { sandbox in
            let movie = sandbox.server.library.movies[0]
            Self.shorten(sandbox, movie)
            // Without ffmpeg, MP4 is refused at select time with one line; a container it cannot make is a usage error.
            let mp4 = try await sandbox.run(
                ["select", "movie", movie.id, "--quality", "720p", "--container", "mp4"],
                extra: ["PATH": "/nonexistent"])
            #expect(mp4.status == 1)
            #expect(mp4.stderr.contains("ffmpeg is not installed") && mp4.stderr.contains("MPEG-TS"))
            #expect(mp4.stderr.split(separator: "\n").count == 1)
            let avi = try await sandbox.run(["select", "movie", movie.id, "--quality", "720p", "--container", "avi"])
            #expect(avi.status == 64)
            let bad = try await sandbox.run(["select", "movie", movie.id, "--quality", "4k"])
            #expect(bad.status == 64)
            let caps = try await sandbox.run([
                "select", "movie", movie.id, "--max-bitrate", "3M", "--video-codec", "h264",
            ])
            #expect(caps.status == 0, "\(caps.stderr)")
            #expect(try await sandbox.run(["selections"]).stdout.contains("quality 3 Mbit/s h264/aac"))
            let select = try await sandbox.run(["select", "movie", movie.id, "--quality", "720p"])
            #expect(select.status == 0, "\(select.stderr)")
            #expect(try await sandbox.run(["selections"]).stdout.contains("quality 720p"))

            let sync = try await sandbox.run(["sync"])
            #expect(sync.status == 0, "\(sync.stderr)")
            let path = sandbox.folder + "/mirror/Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).ts"
            let bytes = try #require(FileManager.default.contents(atPath: path))
            #expect(bytes.count == 10 * sandbox.server.transcodes.segmentBytes)
            #expect(bytes.first == 0x47)
            #expect(sandbox.server.transcodes.active.isEmpty)
            let again = try await sandbox.run(["sync"])
            #expect(again.stdout.contains("Up to date"))
        }
    }

    @Test func aKilledSyncResumesAtTheMissingSegments() async throws {
        try await Sandbox.signedIn { sandbox in
            let movie = sandbox.server.library.movies[0]
            Self.shorten(sandbox, movie)
            #expect(try await sandbox.run(["select", "movie", movie.id, "--quality", "720p"]).status == 0)
            sandbox.server.transcodes.segmentDelay = 0.3
            let staging = sandbox.folder + "/mirror/.mediasync/staging/transcode-\(movie.mediaSources[0].id)"
            let process = try CommandRunner.start(["sync"], environment: sandbox.environment)
            // Killed once three segments are joined in staging (waiting on the mark, not on a clock). Polled and
            // killed on a thread of its own: a task sleeping on a loaded cooperative pool can wake after the whole
            // transcode has ended.
            @Sendable func joinedCount() -> Int {
                let mark = (try? String(contentsOfFile: staging + "/joined.mark", encoding: .utf8)) ?? ""
                return Int(mark.split(separator: " ").first ?? "") ?? 0
            }
            await offThePool {
                while process.isRunning, joinedCount() < 3 { usleep(10_000) }
                process.send(SIGKILL)
            }
            _ = await CommandRunner.wait(process)
            let joined = joinedCount()
            let ahead = ((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).compactMap {
                $0.hasSuffix(".ts") && $0 != "joined.ts" ? Int($0.dropLast(3)) : nil
            }
            let keptIndices = Set(0..<joined).union(ahead)
            #expect(joined >= 3 && keptIndices.count < 10, "\(joined) joined, \(ahead) ahead")
            let path = sandbox.folder + "/mirror/Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).ts"
            #expect(!FileManager.default.fileExists(atPath: path))

            sandbox.server.transcodes.segmentDelay = 0
            sandbox.server.resetStatistics()
            let resumed = try await sandbox.run(["sync"])
            #expect(resumed.status == 0, "\(resumed.stderr)")
            // No kept segment is asked for again; every missing one is. (Requests the killed run left in flight may
            // still be recorded after the reset: only missing segments can be among them.)
            let fetched = Set(
                sandbox.server.allRequests.filter { $0.path.contains("/hls1/main/") }.compactMap {
                    Int($0.path.split(separator: "/").last?.dropLast(3) ?? "")
                })
            #expect(fetched.isDisjoint(with: keptIndices), "asked again for \(fetched.intersection(keptIndices))")
            #expect(fetched.union(keptIndices) == Set(0..<10))
            #expect(FileManager.default.contents(atPath: path)?.count == 10 * sandbox.server.transcodes.segmentBytes)
        }
    }

    @Test func getsAnHLSStreamAsOneFile() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let segments = (0..<5).map { TestServer.segment(source: "s", profile: "p", index: $0, bytes: 188 * 40) }
        for (index, segment) in segments.enumerated() {
            sandbox.server.setFile("/vod/\(index).ts", contents: segment, contentType: "video/mp2t")
        }
        let media = "#EXTM3U\n" + (0..<5).map { "#EXTINF:3.0,\n\($0).ts\n" }.joined() + "#EXT-X-ENDLIST\n"
        sandbox.server.setFile(
            "/vod/main.m3u8", contents: Array(media.utf8), contentType: "application/vnd.apple.mpegurl")
        let output = sandbox.folder + "/out"
        let get = try await sandbox.run([
            "get", "--hls", sandbox.server.baseURL + "/vod/main.m3u8", "--output-dir", output,
        ])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(
            FileManager.default.contents(atPath: output + "/main.ts").map { [UInt8]($0) } == segments.flatMap { $0 })
        // A live playlist never ends: refused with one line.
        sandbox.server.setFile(
            "/vod/live.m3u8", contents: Array("#EXTM3U\n#EXTINF:3.0,\n0.ts\n".utf8),
            contentType: "application/vnd.apple.mpegurl")
        let live = try await sandbox.run([
            "get", "--hls", sandbox.server.baseURL + "/vod/live.m3u8", "--output-dir", output,
        ])
        #expect(live.status == 1)
        #expect(live.stderr.contains("live"))
        #expect(!FileManager.default.fileExists(atPath: output + "/live.ts"))
    }
}
