import Foundation
import Testing

@testable import MediaSyncFeeds

/// The fast path for consumers that can take back what they were given (``FeedJSON``): one pass, UTF-8 checked
/// while streaming, tags untracked. Whatever the document, the result must be the careful path's.
struct SpeculativeStreamingTests {
    /// Streams with a replay hook (so the speculative path runs first) and collects the episodes.
    static func streamedWithReplay(_ path: String, chunkSize: Int, baseURL: String?) throws -> Feed {
        var episodes: [Episode] = []
        var feed = try FeedParser.parse(
            contentsOfFile: path, baseURL: baseURL, maximumSize: FeedParser.defaultMaximumSize,
            chunkSize: chunkSize, replayAfterRecovery: { episodes.removeAll() },
            onEpisode: { episodes.append($0) })
        feed.episodes = episodes
        return feed
    }

    @Test(
        "every fixture streams through the fast path to the in-memory parser's feed",
        arguments: [1, 2, 3, 7, 64, 1 << 18])
    func fixtures(chunkSize: Int) throws {
        for name in FeedFixture.names {
            let path = FeedFixture.folder.appendingPathComponent("\(name).xml").path
            let expected = try FeedParser.parse(try FeedFixture.bytes(name), baseURL: FeedFixture.defaultBaseURL)
            let actual = try Self.streamedWithReplay(path, chunkSize: chunkSize, baseURL: FeedFixture.defaultBaseURL)
            #expect(actual == expected, "\(name) with \(chunkSize)-byte chunks")
        }
    }

    static let items = (0..<200).map { "<item><guid>\($0)</guid><title>Caf\u{E9} \u{1F399} \($0)</title></item>\n" }
        .joined()

    /// Documents the fast path must give up on (or get right) part-way through.
    static let documents: [(String, [UInt8])] = [
        ("clean", Array(("<rss version=\"2.0\"><channel><title>T</title>\n" + items + "</channel></rss>").utf8)),
        (
            "windows-1252 late",
            Array(("<rss version=\"2.0\"><channel><title>T</title>\n" + items).utf8)
                + Array("<item><guid>x</guid><title>Caf".utf8) + [0xE9] + Array("</title></item></channel></rss>".utf8)
        ),
        (
            "truncated sequence at the end",
            Array(("<rss version=\"2.0\"><channel><title>T</title>\n" + items + "</channel></rss>").utf8) + [0xC3]
        ),
        (
            "stray end tag late",
            Array(("<rss version=\"2.0\"><channel><title>T</title>\n" + items + "</p></channel></rss>").utf8)
        ),
        (
            "unclosed elements",
            Array(("<rss version=\"2.0\"><channel><title>T</title>\n" + items + "<item><guid>y</guid>").utf8)
        ),
        (
            "misnested",
            Array(
                ("<rss version=\"2.0\"><channel><title>T</title>\n" + items
                    + "<item><title><b>z</title></item></channel></rss>").utf8)
        ),
        (
            "less-than in an attribute",
            Array(
                ("<rss version=\"2.0\"><channel><title>T</title>\n" + items
                    + "<item><enclosure url=\"https://e.org/a<b.mp3\" type=\"audio/mpeg\"/></item></channel></rss>")
                    .utf8)
        ),
        (
            "unquoted attribute",
            Array(
                ("<rss version=\"2.0\"><channel><title>T</title>\n" + items
                    + "<item><enclosure url=https://e.org/1.mp3 type=\"audio/mpeg\"/></item></channel></rss>").utf8)
        ),
        (
            "declared latin-1, not UTF-8",
            Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss version=\"2.0\"><channel><title>Caf".utf8) + [
                0xE9
            ]
                + Array(("</title>\n" + items + "</channel></rss>").utf8)
        ),
    ]

    @Test("fast-path results and fallbacks equal the in-memory parser's", arguments: [1, 3, 5, 64, 4096, 1 << 18])
    func documents(chunkSize: Int) throws {
        for (name, bytes) in Self.documents {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("spec-\(UUID().uuidString).xml")
            try Data(bytes).write(to: path)
            defer { try? FileManager.default.removeItem(at: path) }
            let expected = try FeedParser.parse(bytes, baseURL: nil)
            let actual = try Self.streamedWithReplay(path.path, chunkSize: chunkSize, baseURL: nil)
            #expect(actual == expected, "\(name) with \(chunkSize)-byte chunks")
            if chunkSize == 1 << 18 {
                let json = try StreamingTests.written(path.path)
                let encoded = try FeedJSON.encode(try FeedParser.parse(bytes, baseURL: FeedFixture.defaultBaseURL))
                #expect(json == encoded + "\n", "\(name) through FeedJSON")
            }
        }
    }

    @Test("errors through the fast path are the careful path's", arguments: [3, 1 << 18])
    func errors(chunkSize: Int) throws {
        let cases: [(String, FeedError)] = [
            (FeedParserSafetyTests.billionLaughs, .entityExpansion),
            ("<html><body><p>Not a feed</p></body></html>", .notAFeed),
            ("   \n  ", .empty),
        ]
        for (xml, expected) in cases {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("spec-\(UUID().uuidString).xml")
            try Data(xml.utf8).write(to: path)
            defer { try? FileManager.default.removeItem(at: path) }
            let start = ContinuousClock.now
            #expect(throws: expected) {
                _ = try Self.streamedWithReplay(path.path, chunkSize: chunkSize, baseURL: nil)
            }
            #expect(throws: expected) { _ = try StreamingTests.written(path.path) }
            #expect(ContinuousClock.now - start < .seconds(5))
        }
    }
}
