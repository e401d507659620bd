import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// Episode extras: the Podcasting 2.0 transcript (SRT or WebVTT preferred) and chapters, and the
/// episode's own image, beside the episode in its podcast's folder, listed in `metadata.json`, optional (their
/// failure never fails the episode) and under the podcast's retention.
@Suite struct EpisodeExtrasTests {
    static func item(_ number: Int, base: String, extras: Bool = true) -> String {
        let tags =
            extras
            ? """
            <podcast:transcript url="\(base)/extras/\(number).html" type="text/html"/>
            <podcast:transcript url="\(base)/extras/\(number).vtt" type="text/vtt" language="en"/>
            <podcast:chapters url="\(base)/extras/\(number).chapters.json" type="application/json+chapters"/>
            <itunes:image href="\(base)/extras/\(number).png"/>
            """ : ""
        return """
            <item><title>Episode \(number)</title><guid isPermaLink="false">x-\(number)</guid>
            <pubDate>0\(number) Feb 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(base)/extras/\(number).mp3" length="3000" type="audio/mpeg"/>\(tags)</item>
            """
    }

    static func feed(_ items: [String]) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
                 xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Extras</title>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8)
    }

    @Test func extrasAreFetchedBesideTheirEpisodeListedAndOptional() async throws {
        let fixture = try PodcastSyncTests.Fixture()
        defer { fixture.tearDown() }
        let server = fixture.server
        let base = server.baseURL
        for number in 1...3 {
            server.setFile("/extras/\(number).mp3", contents: Array(repeating: UInt8(number), count: 3000))
            server.setFile(
                "/extras/\(number).vtt", contents: Array("WEBVTT\n\n\(number)".utf8), contentType: "text/vtt")
            server.setFile("/extras/\(number).html", contents: Array("<p>\(number)</p>".utf8), contentType: "text/html")
            server.setFile(
                "/extras/\(number).png", contents: [0x89, 0x50, 0x4E, 0x47, UInt8(number)], contentType: "image/png")
        }
        // Episode 2's chapters are missing on the server: an optional failure.
        server.setFile("/extras/1.chapters.json", contents: Array("{\"chapters\":[]}".utf8))
        server.setFile("/extras/3.chapters.json", contents: Array("{\"chapters\":[3]}".utf8))
        server.setFile(
            "/feeds/extras.xml", contents: Self.feed((1...3).reversed().map { Self.item($0, base: base) }),
            contentType: "application/rss+xml", etag: "\"e1\"")
        let subscription = try await Subscriptions(index: fixture.index, client: HTTPClient())
            .add(url: base + "/feeds/extras.xml", retention: .newest(2))
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report.sourceErrors)")
        #expect(report.failed.count == 1 && report.failed.allSatisfy { !$0.essential }, "\(report.failed)")
        let folder = "Downloads/\(subscription.id)"
        let files = fixture.folder.allFiles().filter { $0.hasPrefix(folder + "/") }
        #expect(
            files
                == [
                    "\(folder)/metadata.json", "\(folder)/x-2.image.png", "\(folder)/x-2.mp3",
                    "\(folder)/x-2.transcript.vtt",
                    "\(folder)/x-3.chapters.json", "\(folder)/x-3.image.png", "\(folder)/x-3.mp3",
                    "\(folder)/x-3.transcript.vtt",
                ].sorted(), "\(files)")
        #expect(
            FileManager.default.contents(atPath: fixture.folder.file("\(folder)/x-3.transcript.vtt")).map {
                [UInt8]($0)
            }
                == Array("WEBVTT\n\n3".utf8))
        let metadata = try JSONDecoder().decode(
            PodcastMetadata.self,
            from: FileManager.default.contents(atPath: fixture.folder.file("\(folder)/metadata.json")) ?? Data())
        let third = try #require(metadata.episodes.first { $0.episodeID == "x-3" })
        #expect(third.transcriptFile == "x-3.transcript.vtt")
        #expect(third.chaptersFile == "x-3.chapters.json")
        #expect(third.imageFile == "x-3.image.png")
        let second = try #require(metadata.episodes.first { $0.episodeID == "x-2" })
        #expect(second.chaptersFile == nil && second.transcriptFile == "x-2.transcript.vtt")

        // Episode 4 arrives: retention (newest 2) lets episode 2 go, extras and all, with --delete.
        server.setFile("/extras/4.mp3", contents: Array(repeating: 4, count: 3000))
        server.setFile(
            "/feeds/extras.xml",
            contents: Self.feed(
                [Self.item(4, base: base, extras: false)] + (1...3).reversed().map { Self.item($0, base: base) }),
            contentType: "application/rss+xml", etag: "\"e2\"")
        let second2 = try await fixture.sync(delete: true)
        #expect(second2.sourceErrors.isEmpty, "\(second2.sourceErrors)")
        let after = fixture.folder.allFiles().filter { $0.hasPrefix(folder + "/") }
        #expect(!after.contains { $0.contains("x-2.") }, "\(after)")
        #expect(after.contains("\(folder)/x-4.mp3") && after.contains("\(folder)/x-3.transcript.vtt"), "\(after)")
    }

    @Test func aRebuiltIndexKeepsTheExtras() async throws {
        let fixture = try PodcastSyncTests.Fixture()
        defer { fixture.tearDown() }
        let server = fixture.server
        let base = server.baseURL
        server.setFile("/extras/1.mp3", contents: Array(repeating: 1, count: 3000))
        server.setFile("/extras/1.vtt", contents: Array("WEBVTT\n\n1".utf8), contentType: "text/vtt")
        server.setFile("/extras/1.chapters.json", contents: Array("{\"chapters\":[]}".utf8))
        server.setFile("/extras/1.png", contents: [0x89, 0x50, 0x4E, 0x47, 1], contentType: "image/png")
        server.setFile(
            "/feeds/extras.xml", contents: Self.feed([Self.item(1, base: base)]), contentType: "application/rss+xml",
            etag: "\"e1\"")
        let subscription = try await Subscriptions(index: fixture.index, client: HTTPClient())
            .add(url: base + "/feeds/extras.xml", retention: .all)
        _ = try await fixture.sync()
        let folder = "Downloads/\(subscription.id)"
        let before = fixture.folder.allFiles().filter { $0.hasPrefix(folder + "/") }
        let metadataBefore = FileManager.default.contents(atPath: fixture.folder.file("\(folder)/metadata.json"))

        try FileManager.default.removeItem(atPath: fixture.root.indexPath)
        let result = try Reindexer.rebuildFresh(root: fixture.root)
        // metadata.json, the episode and its three extras.
        #expect(result.files == 5)
        let index = try MirrorIndex(path: fixture.root.indexPath)
        let extras = try index.entries().filter {
            if case .podcastExtra = $0.file.key.parts { return true }
            return false
        }
        #expect(
            extras.map(\.file.path).sorted()
                == ["x-1.chapters.json", "x-1.image.png", "x-1.transcript.vtt"].map { "\(folder)/\($0)" })

        // The next sync keeps every file and the metadata; the media is not fetched again, the extras (signed by the
        // URL they came from, which metadata.json does not keep) are, once.
        let mediaRequests = server.requests(to: "/extras/1.mp3").count
        let report = try await MirrorSync(
            root: fixture.root, index: index, server: nil,
            transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 1))
        ).run(options: SyncOptions(delete: true))
        #expect(report.deleted.isEmpty, "\(report.deleted)")
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(server.requests(to: "/extras/1.mp3").count == mediaRequests)
        #expect(fixture.folder.allFiles().filter { $0.hasPrefix(folder + "/") } == before)
        #expect(FileManager.default.contents(atPath: fixture.folder.file("\(folder)/metadata.json")) == metadataBefore)
    }

    @Test(
        "reindex takes only the names the layout gives extras",
        arguments: [
            ("x-1.transcript.vtt", "transcript", true), ("x-1.chapters.json", "chapters", true),
            ("x-1.image.png", "image", true), ("x-1.mp3", "transcript", false), ("metadata.json", "chapters", false),
            ("x-1.chapters.json", "image", false), ("x-12.transcript.vtt", "transcript", false),
            ("x-1.transcript.", "transcript", false), ("x-1.image.pn/g", "image", false),
        ] as [(String, String, Bool)])
    func extraNames(_ name: String, _ what: String, _ expected: Bool) {
        #expect(Reindexer.isExtraName(name, what: what, episodeId: "x-1") == expected)
    }

    @Test(
        "transcript and image extensions",
        arguments: [
            ("text/vtt", "https://h/t", "vtt"), ("application/x-subrip", "https://h/t", "srt"),
            ("application/srt", "https://h/t", "srt"), ("application/json", "https://h/t", "json"),
            ("text/html; charset=utf-8", "https://h/t", "html"), (nil, "https://h/a.srt?x=1", "srt"),
            (nil, "https://h/a.exe", "txt"),
        ] as [(String?, String, String)])
    func transcriptExtension(type: String?, url: String, expected: String) {
        #expect(PodcastLayout.transcriptExtension(type: type, url: url) == expected)
    }
}
