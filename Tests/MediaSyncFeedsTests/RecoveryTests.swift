import Foundation
import Testing

@testable import MediaSyncFeeds

/// Broken feeds that the streaming repairs cannot fix are re-read in libxml2's recovery mode (a DOM walked with
/// `xmlReaderWalker`); that path must find the same episodes, through every entry point.
struct RecoveryTests {
    /// Every entry point: in memory, streamed without and with a replay hook (the speculative path first), and
    /// the streaming JSON writer (compared with the in-memory encoder).
    static func everyPath(_ bytes: [UInt8], _ check: (Feed, String) -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("recovery-\(UUID().uuidString).xml")
        try Data(bytes).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let inMemory = try FeedParser.parse(bytes, baseURL: FeedFixture.defaultBaseURL)
        check(inMemory, "in memory")
        for chunk in [3, 4096, 1 << 18] {
            check(try StreamingTests.streamed(path.path, chunkSize: chunk), "streamed, \(chunk)-byte chunks")
            check(
                try SpeculativeStreamingTests.streamedWithReplay(
                    path.path, chunkSize: chunk, baseURL: FeedFixture.defaultBaseURL),
                "streamed with replay, \(chunk)-byte chunks")
        }
        #expect(try StreamingTests.written(path.path) == (try FeedJSON.encode(inMemory)) + "\n", "FeedJSON.write")
    }

    /// An unquoted attribute value: libxml2's streaming reader stops there, so the document goes to recovery.
    static let unrepairable = "<item><guid>u</guid><enclosure url=https://e.org/u.mp3 type=\"audio/mpeg\"/></item>\n"

    @Test("recovery finds the episodes after a context whose last child is skipped (no whitespace before its end)")
    func lastChildSkipped() throws {
        // `<image>`'s last child `<link>` is not read there and is skipped; `xmlTextReaderNext` on a DOM walker
        // then also skips `</image>`, and every item after it was read as part of the image.
        let xml = """
            <rss version="2.0"><channel><title>T</title>
            <image><url>https://e.org/i.jpg</url><title>T</title><link>https://e.org/</link></image>
            <item><guid>1</guid><title>One</title></item>

            """ + Self.unrepairable + """
                <item><guid>2</guid><title>Two</title></item>
                </channel></rss>
                """
        try Self.everyPath(Array(xml.utf8)) { feed, path in
            #expect(feed.episodes.map(\.guid) == ["1", "u", "2"], "\(path)")
            #expect(feed.imageURL == "https://e.org/i.jpg", "\(path)")
            #expect(feed.recoveredError != nil, "\(path)")
        }
    }

    @Test("recovery ends a text field whose last child is markup")
    func markupAsLastChild() throws {
        let xml = """
            <rss version="2.0"><channel><title>T</title>
            <item><guid>1</guid><description>x <p>y</p></description><title>After</title></item>

            """ + Self.unrepairable + """
                <item><guid>2</guid><title>Two</title></item>
                </channel></rss>
                """
        try Self.everyPath(Array(xml.utf8)) { feed, path in
            #expect(feed.episodes.map(\.guid) == ["1", "u", "2"], "\(path)")
            #expect(feed.episodes.first?.description == "x <p>y</p>", "\(path)")
            #expect(feed.episodes.first?.title == "After", "\(path)")
        }
    }

    /// A feed shaped like `Scripts/bench-feeds.sh`'s, cut inside an item's CDATA description (a truncated
    /// download: descriptions are most of a feed's bytes).
    @Test("a feed cut inside a CDATA section keeps the episodes before the cut")
    func truncatedInsideCDATA() throws {
        let items = (0..<50).map { index in
            "  <item>\n    <title>Episode \(index)</title>\n    <guid>g\(index)</guid>\n"
                + "    <description><![CDATA[<p>Notes for \(index) &amp; more</p>]]></description>\n  </item>\n"
        }.joined()
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\">\n<channel>\n  <title>Cut</title>\n"
            + "  <image><url>https://e.org/i.jpg</url><title>Cut</title><link>https://e.org/</link></image>\n" + items
            + "  <item>\n    <title>Half</title>\n    <guid>half</guid>\n    <description><![CDATA[<p>Notes that"
        try Self.everyPath(Array(xml.utf8)) { feed, path in
            #expect(feed.episodes.count >= 50, "\(path)")
            #expect(Array(feed.episodes.prefix(50).map(\.guid)) == (0..<50).map { "g\($0)" }, "\(path)")
            #expect(feed.title == "Cut", "\(path)")
            #expect(feed.recoveredError != nil, "\(path)")
        }
    }

    /// Mostly UTF-8 with one windows-1252 byte late: the document is read as windows-1252, where the UTF-8
    /// bytes of "🎙️" include 0x8F, which windows-1252 leaves undefined (libxml2's converter stopped there).
    @Test("a late stray windows-1252 byte does not lose the episodes")
    func strayWindows1252Byte() throws {
        var bytes = Array("<rss version=\"2.0\"><channel><title>Mixed \u{1F399}\u{FE0F}</title>\n".utf8)
        for index in 0..<200 {
            bytes += Array("<item><guid>\(index)</guid><title>Episode \(index) \u{1F399}\u{FE0F}</title></item>\n".utf8)
        }
        bytes += Array("<item><guid>late</guid><title>Caf".utf8) + [0xE9] + Array("</title></item>\n".utf8)
        bytes += Array("<item><guid>last</guid><title>\u{2019}\u{20AC}</title></item>\n</channel></rss>".utf8)
        try Self.everyPath(bytes) { feed, path in
            #expect(feed.episodes.count == 202, "\(path)")
            #expect(feed.episodes.map(\.guid).suffix(2) == ["late", "last"], "\(path)")
            #expect(feed.episodes.dropLast().last?.title == "Caf\u{E9}", "\(path)")
        }
    }

    @Test("windows-1252 is decoded with its undefined bytes, in entities and element names too")
    func windows1252Undefined() throws {
        let bytes =
            Array("<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n<!DOCTYPE rss [<!ENTITY e \"".utf8) + [0xE9]
            + Array("\">]>\n<rss version=\"2.0\"><channel><title>A".utf8) + [0x8F, 0x80]
            + Array("&e;</title>\n<item><guid>1</guid><title>x<na".utf8) + [0xEF] + Array("ve>y</na".utf8) + [0xEF]
            + Array("ve></title></item>\n<item><guid>2</guid></item></channel></rss>".utf8)
        try Self.everyPath(bytes) { feed, path in
            #expect(feed.title == "A\u{8F}\u{20AC}\u{E9}", "\(path)")
            #expect(feed.episodes.map(\.guid) == ["1", "2"], "\(path)")
            #expect(feed.episodes.first?.title == "xy", "\(path)")
            #expect(feed.recoveredError == nil, "\(path)")
        }
    }
}
