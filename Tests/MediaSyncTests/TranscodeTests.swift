import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// Quality-capped downloads: the server's transcode as an offline version, over loopback to the test
/// server, which decides direct play or a transcode from the DeviceProfile as Jellyfin does.
@Suite struct TranscodeTests {
    /// A library whose movies run 30 s: a transcode of 3 s segments has 10 of them.
    static func library() -> TestLibrary {
        var library = TestLibrary(movies: 2, series: 0, mediaSize: 8_000, seed: 12)
        for movie in library.movies {
            for source in movie.mediaSources {
                library.updateMediaSource(source.id) { $0.runTimeTicks = 300_000_000 }
            }
        }
        return library
    }

    static let p720 = Quality.presets["720p"] ?? Quality(maxBitrate: 4_000_000, maxHeight: 720)

    static func select(_ fixture: MirrorFixture, _ id: String, quality: Quality?) throws {
        try fixture.index.select(
            Selection(id: id, kind: .movie, addedAt: "2026-01-01T00:00:00Z", quality: quality))
    }

    static func segmentPath(_ item: TestItem, _ index: Int) -> String { "/videos/\(item.id)/hls1/main/\(index).ts" }

    /// What the 720p transcode of `item` is: its segments joined.
    static func expected(_ item: TestItem, server: TestServer, segments: Int = 10) -> [UInt8] {
        (0..<segments).flatMap {
            TestServer.segment(
                source: item.mediaSources[0].id, profile: "avc1.64001f/720/\(4_000_000 - 192_000)", index: $0,
                bytes: server.transcodes.segmentBytes)
        }
    }

    @Test func aTranscodeIsPlacedAsAVersionThatIsNotStatic() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let path = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).ts"
            #expect(fixture.bytes(path) == Self.expected(movie, server: fixture.server))
            // The golden tree: Swiftfin's offline layout with the transcode as the version, its external subtitle
            // beside it.
            let version = "\(movie.id)-\(movie.mediaSources[0].id)"
            #expect(
                fixture.tree()
                    == [
                        "Downloads/\(movie.id)/\(version).2.eng.srt", "Downloads/\(movie.id)/\(version).ts",
                        "Downloads/\(movie.id)/Images/Backdrop.jpeg", "Downloads/\(movie.id)/Images/Primary.jpeg",
                        "Downloads/\(movie.id)/metadata.json",
                    ].sorted())
            // Only the primary version, and nothing of it left in staging.
            #expect(fixture.tree().filter { $0.hasSuffix(".ts") || $0.hasSuffix(".mkv") } == [path])
            let staging = (try? FileManager.default.contentsOfDirectory(atPath: fixture.root.stagingDirectory)) ?? []
            #expect(staging.isEmpty, "\(staging)")
            let versions = fixture.json("Downloads/\(movie.id)/metadata.json")?["versions"] as? [[String: Any]]
            #expect(versions?.first?["isStatic"] as? Bool == false)
            #expect(versions?.first?["container"] as? String == "ts")
            // The server's encoding was stopped: nothing left behind on it.
            #expect(fixture.server.transcodes.active.isEmpty)
            #expect(fixture.server.requests(to: "/Videos/ActiveEncodings").map(\.method) == ["DELETE"])
            // The token went in the header only, never in a playlist or segment URL.
            let token = library.accessToken
            #expect(fixture.server.allRequests.allSatisfy { !$0.query.values.contains(token) })

            // Unchanged: no request about it at all.
            fixture.server.resetStatistics()
            let again = try await fixture.sync()
            #expect(again.downloaded.isEmpty)
            #expect(fixture.server.requests(to: "/Items/\(movie.id)/PlaybackInfo").isEmpty)
        }
    }

    @Test(arguments: [503, 429])
    func aBusyServerIsAskedAgainAfterAPause(status: Int) async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            fixture.server.inject(.status(status), path: "/Items/\(movie.id)/PlaybackInfo")
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            #expect(fixture.server.requests(to: "/Items/\(movie.id)/PlaybackInfo").count == 2)
            #expect(fixture.tree().contains { $0.hasSuffix(".ts") })
        }
    }

    @Test func anOriginalThatFitsIsDownloadedAsItIs() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[1]
            try Self.select(fixture, movie.id, quality: Quality(maxBitrate: 40_000_000, maxHeight: 1080))
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let path = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mkv"
            #expect(fixture.bytes(path) == library.mediaBytes(forMediaSourceId: movie.mediaSources[0].id))
            let version = "\(movie.id)-\(movie.mediaSources[0].id)"
            #expect(
                fixture.tree()
                    == [
                        "Downloads/\(movie.id)/\(version).2.eng.srt", path,
                        "Downloads/\(movie.id)/Images/Backdrop.jpeg",
                        "Downloads/\(movie.id)/Images/Primary.jpeg", "Downloads/\(movie.id)/metadata.json",
                    ].sorted())
            let versions = fixture.json("Downloads/\(movie.id)/metadata.json")?["versions"] as? [[String: Any]]
            #expect(versions?.first?["isStatic"] as? Bool == true)
            #expect(fixture.server.requests(to: "/Items/\(movie.id)/PlaybackInfo").map(\.method) == ["POST"])
            #expect(!fixture.server.allRequests.contains { $0.path.hasSuffix(".m3u8") })
        }
    }

    @Test func changingTheQualityFetchesTheVersionAgain() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            _ = try await fixture.sync()
            try Self.select(fixture, movie.id, quality: nil)
            let report = try await fixture.sync()
            let original = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mkv"
            #expect(report.downloaded.contains(original))
            #expect(fixture.bytes(original) == library.mediaBytes(forMediaSourceId: movie.mediaSources[0].id))
            #expect(!fixture.tree().contains { $0.hasSuffix(".ts") })
            let versions = fixture.json("Downloads/\(movie.id)/metadata.json")?["versions"] as? [[String: Any]]
            #expect(versions?.first?["isStatic"] as? Bool == true)
        }
    }

    @Test func aFailedSegmentResumesAtTheMissingOnesNextTime() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            fixture.server.inject(.status(500), path: Self.segmentPath(movie, 6), count: 100)
            let failed = try await fixture.sync()
            #expect(failed.failed.count == 1)
            #expect(failed.failed.first?.message.contains("segment 7 of 10") == true)
            #expect(!fixture.tree().contains { $0.hasSuffix(".ts") })
            #expect(fixture.server.transcodes.active.isEmpty)
            fixture.server.clearFaults()
            fixture.server.resetStatistics()
            let resumed = try await fixture.sync()
            #expect(resumed.failed.isEmpty, "\(resumed.failed)")
            let segmentRequests = fixture.server.allRequests.filter { $0.path.contains("/hls1/main/") }
            #expect(segmentRequests.map(\.path) == [Self.segmentPath(movie, 6)])
            let path = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).ts"
            #expect(fixture.bytes(path) == Self.expected(movie, server: fixture.server))
        }
    }

    @Test func aJoinedFileShorterThanItsMarkStartsAgain() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            fixture.server.inject(.status(500), path: Self.segmentPath(movie, 9), count: 100)
            _ = try await fixture.sync()
            let folder = fixture.root.stagingDirectory + "/transcode-\(movie.mediaSources[0].id)"
            #expect(try String(contentsOfFile: folder + "/joined.mark", encoding: .utf8).hasPrefix("9 "))
            // The joined file is lost (or cut): its mark must not make a file of zeros out of it.
            try FileManager.default.removeItem(atPath: folder + "/joined.ts")
            fixture.server.clearFaults()
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let path = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).ts"
            #expect(fixture.bytes(path) == Self.expected(movie, server: fixture.server))
        }
    }

    /// Real MPEG-TS segments made by ffmpeg: 3 of 2 s of a test picture and a tone, H.264/AAC.
    static func realSegments(_ ffmpeg: String) throws -> [[UInt8]] {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let made = try Spawned(
            ffmpeg,
            [
                "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=duration=6:size=320x240:rate=25", "-f",
                "lavfi", "-i", "sine=duration=6", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25", "-c:a", "aac",
                "-f", "segment", "-segment_time", "2", "-segment_format", "mpegts", folder.path + "/seg%03d.ts",
            ]
        ).finish()
        #expect(made.status == 0, "\(made.stderr)")
        return (0..<3).compactMap {
            FileManager.default.contents(atPath: folder.path + String(format: "/seg%03d.ts", $0)).map { [UInt8]($0) }
        }
    }

    /// The container ffprobe reads in a file.
    static func probe(_ path: String) throws -> String {
        let text = try Spawned(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=format_name", "-of", "csv=p=0", path]
        ).finish().stdout
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: Remuxer.locate() != nil, "ffmpeg is not installed (Debian: apt install ffmpeg)"))
    func aTranscodeIsRemuxedIntoMP4OrMatroskaByFfmpeg() async throws {
        let ffmpeg = try #require(Remuxer.locate()).executable
        var library = Self.library()
        for movie in library.movies {
            for source in movie.mediaSources { library.updateMediaSource(source.id) { $0.runTimeTicks = 90_000_000 } }
        }
        let segments = try Self.realSegments(ffmpeg)
        #expect(segments.count == 3)
        try await MirrorFixture.with(library) { fixture, library in
            fixture.server.transcodes.realSegments = segments
            var quality = Self.p720
            for (movie, container) in zip(library.movies, ["mkv", "mp4"]) {
                quality.container = container
                try Self.select(fixture, movie.id, quality: quality)
            }
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            for (movie, (container, format)) in zip(library.movies, [("mkv", "matroska"), ("mp4", "mp4")]) {
                let path = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).\(container)"
                #expect(fixture.tree().contains(path))
                #expect(try Self.probe(fixture.root.path + "/" + path).contains(format))
                let versions = fixture.json("Downloads/\(movie.id)/metadata.json")?["versions"] as? [[String: Any]]
                #expect(versions?.first?["container"] as? String == container)
                #expect(versions?.first?["isStatic"] as? Bool == false)
            }
            #expect(!fixture.tree().contains { $0.hasSuffix(".ts") })
            #expect(try await fixture.sync().downloaded.isEmpty)
        }
    }

    struct Lie: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var testDescription: String { name }
    }

    @Test(
        arguments: [
            Lie(name: "an HTML page in place of a segment", message: "is not MPEG-TS"),
            Lie(name: "a segment that is missing", message: "segment 4 of 10 failed"),
            Lie(name: "segments on another host", message: "points to another host"),
            Lie(name: "an endless live playlist", message: "no #EXT-X-ENDLIST"),
            Lie(name: "a user who may not transcode", message: "may not have video transcoded"),
        ])
    func aLyingServerGetsOneLineAndNothingPlaced(_ lie: Lie) async throws {
        var library = Self.library()
        if lie.name.contains("may not transcode") { library.userMayTranscode = false }
        try await MirrorFixture.with(library) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            switch lie.name {
            case let name where name.contains("HTML"):
                fixture.server.inject(
                    .body(status: 200, contentType: "text/html", bytes: Array("<html>busy</html>".utf8)),
                    path: Self.segmentPath(movie, 2))
            case let name where name.contains("missing"):
                fixture.server.inject(.status(404), path: Self.segmentPath(movie, 3), count: 100)
            case let name where name.contains("another host"):
                fixture.server.transcodes.playlistHost = "http://127.0.0.2:9"
            case let name where name.contains("live"):
                fixture.server.transcodes.live = true
            default: break
            }
            let report = try await fixture.sync()
            #expect(report.failed.count == 1)
            #expect(report.failed.first?.message.contains(lie.message) == true, "\(report.failed)")
            #expect(report.hasEssentialFailures)
            #expect(!fixture.tree().contains { $0.hasSuffix(".ts") || $0.hasSuffix(".mkv") })
            #expect(fixture.server.transcodes.active.isEmpty)
        }
    }

    @Test func aDryRunAsksNothingAndPlansTheEstimate() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try Self.select(fixture, movie.id, quality: Self.p720)
            let plan = try await fixture.sync(SyncOptions(dryRun: true))
            let media = plan.planned.first { $0.path.hasSuffix(".ts") }
            // 4 Mbit/s × 30 s.
            #expect(media?.bytes == 15_000_000)
            #expect(fixture.server.requests(to: "/Items/\(movie.id)/PlaybackInfo").isEmpty)
        }
    }
}

/// The pure parts: playlists, bit rates, and the server's decision, as tables.
@Suite struct TranscodeDecisionTests {
    @Test func readsAJellyfinMasterAndMediaPlaylist() throws {
        let master = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=4192000,AVERAGE-BANDWIDTH=4000000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=23.976
            main.m3u8?MediaSourceId=abc&VideoCodec=h264
            """
        let variant = try HLSPlaylist.variant(ofMaster: master)
        #expect(variant.uri == "main.m3u8?MediaSourceId=abc&VideoCodec=h264")
        #expect(
            variant.codecs == ["avc1.64001f", "mp4a.40.2"] && variant.height == 720 && variant.bandwidth == 4_192_000)
        let media = """
            #EXTM3U
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-TARGETDURATION:3
            #EXTINF:3.000000, nodesc
            hls1/main/0.ts?a=1
            #EXTINF:1.500000, nodesc
            hls1/main/1.ts?a=1
            #EXT-X-ENDLIST
            """
        #expect(try HLSPlaylist.segments(ofMedia: media).map(\.duration) == [3, 1.5])
        #expect(
            HLSPlaylist.resolve("hls1/main/0.ts?a=1", against: "http://127.0.0.1:8096/videos/x/main.m3u8?a=1")
                == "http://127.0.0.1:8096/videos/x/hls1/main/0.ts?a=1")
        #expect(
            HLSPlaylist.resolve("http://evil.example/0.ts", against: "http://127.0.0.1:8096/videos/x/main.m3u8") == nil)
        #expect(HLSPlaylist.resolve("//127.0.0.1:9/0.ts", against: "http://127.0.0.1:8096/videos/x/main.m3u8") == nil)
    }

    @Test(
        arguments: [
            ("<html>", "not an HLS playlist"), ("#EXTM3U\n#EXTINF:3,\na.ts\n", "live"),
            ("#EXTM3U\n#EXT-X-ENDLIST\n", "no segments"), ("#EXTM3U\na.ts\n#EXT-X-ENDLIST\n", "without a duration"),
        ])
    func refusesABadMediaPlaylist(text: String, reason: String) {
        #expect {
            _ = try HLSPlaylist.segments(ofMedia: text)
        } throws: { "\($0)".contains(reason) }
    }

    @Test(
        arguments: [
            (["avc1.64001f", "mp4a.40.2"], 720, nil), (["avc1.640028", "mp4a.40.2"], 1080, "1080 lines"),
            (["hvc1.1.6.L120.90", "mp4a.40.2"], 720, "hvc1"), ([], nil, nil),
        ] as [([String], Int?, String?)])
    func checksTheVariantAgainstTheQuality(codecs: [String], height: Int?, refusal: String?) {
        let variant = HLSPlaylist.Variant(uri: "main.m3u8", bandwidth: 4_000_000, codecs: codecs, height: height)
        let found = HLSPlaylist.refusal(variant, quality: Quality.presets["720p"] ?? Quality(maxBitrate: 1))
        #expect(found == nil ? refusal == nil : refusal.map { found?.contains($0) == true } == true)
    }

    @Test(
        arguments: [
            ("3M", 3_000_000), ("1500k", 1_500_000), ("2.5M", 2_500_000), ("4000000", 4_000_000), ("10", nil),
            ("x", nil), ("-3M", nil),
        ] as [(String, Int?)])
    func bitrates(text: String, bits: Int?) {
        #expect(Quality.bitrate(text) == bits)
    }

    /// The server's choice between direct play and a transcode (`StreamBuilder`), for the test library's 1080p
    /// H.264/AC-3 MKV at 20 Mbit/s.
    @Test(
        arguments: [
            ("1080p preset: bit rate too high", Quality.presets["1080p"], false),
            ("720p preset: too tall and too fast", Quality.presets["720p"], false),
            ("40 Mbit/s, 1080 lines: fits", Quality(maxBitrate: 40_000_000, maxHeight: 1080), true),
            ("40 Mbit/s HEVC only: codec", Quality(maxBitrate: 40_000_000, videoCodec: "hevc"), false),
        ] as [(String, Quality?, Bool)])
    func theServerDecides(name: String, quality: Quality?, direct: Bool) throws {
        let quality = try #require(quality)
        let source = TestMediaSource(
            id: "s", name: "s", path: "/m/s.mkv", size: 1, etag: "e", runTimeTicks: 1, lastModified: Date())
        var profile: [UInt8] = []
        JSONWriter.write(quality.deviceProfile, indent: 0, into: &profile)
        #expect(TestServer.directPlays(source, bitrate: 20_000_000, profileJSON: profile) == direct, "\(name)")
    }
}
