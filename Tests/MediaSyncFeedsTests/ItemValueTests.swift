import Foundation
import Testing

@testable import MediaSyncFeeds

/// ``FeedBuilder`` reads item values from bytes; each must be what the `String` formula it replaced gives
/// (`Int(text)`, `Int64(text.trimmingCharacters())`, `lowercased()`, ``TextCleaner/plainText(_:)``,
/// ``URLResolver/resolve(_:base:)``, ``DateParser/date(_:)``), through the in-memory parser and through the
/// streaming JSON writer's fast path alike.
struct ItemValueTests {
    static let values: [String] = [
        "5", "+5", "-5", "05", " 5 ", "5a", "", "   ", "+", "-", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "\u{665}", "1 2", "0", "-0", "+0",
        "Yes", "TRUE", "Explicit", "no", "False", "CLEAN", "y", "Ｙｅｓ", "\u{130}", "ye\u{301}s",
        "Full", "TRAILER", "bonus", "FÜLL", "\u{1C5}", "ΣΑΣ", "K\u{212A}",
        "Plain Title", "Two  spaces", "Tab\there", "A &amp; B", "A&amp;B", "&lt;b&gt;x&lt;/b&gt;", "Caf\u{E9}",
        "x\u{A0}y", "&amp;amp;", "Q &amp;",
        "https://e.org/a b.mp3", "HTTPS://E.org/x?y=1&amp;z=2", "feed://x.org/f", "Feed:https://x.org/f",
        "itpc://x/y", "pcast://x/y", "podcast://x/y", "/relative/path", "rel.mp3", "mailto:x@y.org", "a1+.-:foo",
        "1http://x", "http://x/\u{FC}", "http://x/&quot;q&quot;", "://x", "h:", "https://e.org/{x}|y^z`w",
        "http://x/\\y", "  https://e.org/trimmed  ",
        "Tue, 04 Jun 2024 11:20:00 +0000", "2024-06-04T11:20:00Z", "04 Jun 2024", "Tue,04 Jun 2024 11:20 EST",
        "Tue, 04 Jun 24 11:20:00.5 +05:30", "2024-06-04", "garbage", "31 Feb 2024 25:00:00",
        "text/vtt", " application/srt ",
    ]

    static let base = "https://feeds.example.org/podcast/show.xml"

    /// One item per value, the value in every item field.
    static let document: [UInt8] = {
        var xml = """
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
              xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Values</title>

            """
        for (index, value) in values.enumerated() {
            let attribute = value.replacingOccurrences(of: "\"", with: "&quot;")
            xml += """
                <item><guid>g\(index)</guid><title>\(value)</title><link>\(value)</link><pubDate>\(value)</pubDate>
                <itunes:duration>\(value)</itunes:duration><itunes:season>\(value)</itunes:season>
                <podcast:episode>\(value)</podcast:episode><itunes:episodeType>\(value)</itunes:episodeType>
                <itunes:explicit>\(value)</itunes:explicit><itunes:block>\(value)</itunes:block>
                <enclosure url="\(attribute)" length="\(attribute)" type="\(attribute)"/>
                <itunes:image href="\(attribute)"/><podcast:chapters url="\(attribute)"/>
                <podcast:transcript url="\(attribute)" type="\(attribute)"/><podcast:transcript url="https://t.org/2"/>
                </item>

                """
        }
        xml += "</channel></rss>"
        return Array(xml.utf8)
    }()

    /// What XML makes of the value (the document writes it as XML, references and all).
    static func decoded(_ value: String) -> String {
        value.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// An attribute value as XML normalises it (tabs and line breaks become spaces).
    static func attribute(_ value: String) -> String {
        decoded(value).replacingOccurrences(of: "\t", with: " ")
    }

    static func flag(_ text: String?) -> Bool? {
        switch text?.lowercased() {
        case "yes", "true", "explicit": true
        case "no", "false", "clean": false
        default: nil
        }
    }

    static func check(_ feed: Feed, _ path: String) {
        #expect(feed.episodes.count == values.count, "\(path)")
        for (episode, value) in zip(feed.episodes, values) {
            let text = TextCleaner.trimmed(decoded(value))
            let url = URLResolver.resolve(decoded(value), base: base)
            let attributeURL = URLResolver.resolve(attribute(value), base: base)
            let context = "\(path): \(value.debugDescription)"
            #expect(episode.title == text.flatMap(TextCleaner.plainText), "title, \(context)")
            #expect(episode.link == url, "link, \(context)")
            #expect(episode.published == text.flatMap(DateParser.date), "published, \(context)")
            #expect(episode.durationSeconds == text.flatMap(DurationParser.seconds), "duration, \(context)")
            #expect(episode.season == text.flatMap { Int($0) }, "season, \(context)")
            #expect(episode.episode == text.flatMap { Int($0) }, "episode, \(context)")
            #expect(episode.episodeType == text?.lowercased(), "episodeType, \(context)")
            #expect(episode.explicit == flag(text), "explicit, \(context)")
            #expect(episode.block == flag(text), "block, \(context)")
            let length = Int64(attribute(value).trimmingCharacters()).flatMap { $0 > 0 ? $0 : nil }
            let type = TextCleaner.trimmed(attribute(value))
            #expect(
                episode.enclosure == attributeURL.map { Enclosure(url: $0, length: length, type: type) },
                "enclosure, \(context)")
            #expect(episode.imageURL == attributeURL, "imageURL, \(context)")
            #expect(episode.chaptersURL == attributeURL, "chaptersURL, \(context)")
            let transcripts =
                (attributeURL.map { [Transcript(url: $0, type: type)] } ?? []) + [
                    Transcript(url: "https://t.org/2")
                ]
            #expect(episode.transcripts == transcripts, "transcripts, \(context)")
        }
    }

    @Test("item values read from bytes equal the String formulas")
    func inMemory() throws {
        Self.check(try FeedParser.parse(Self.document, baseURL: Self.base), "in memory")
    }

    @Test("the fast path reads and writes the same item values", arguments: [5, 1 << 18])
    func fastPath(chunkSize: Int) throws {
        try SAXFastPathTests.withFile(Self.document) { path in
            let fast = try SAXFastPathTests.fastPath(path, chunkSize: chunkSize, baseURL: Self.base)
            #expect(fast != nil)
            if let fast { Self.check(fast, "fast path, \(chunkSize)-byte chunks") }
            let written = try StreamingTests.written(path, baseURL: Self.base)
            let expected = try FeedJSON.encode(try FeedParser.parse(Self.document, baseURL: Self.base)) + "\n"
            #expect(written == expected)
        }
    }
}

/// ``GUIDSet`` finds the duplicates a `[String: Int]` count finds (canonical equivalence, first spelling kept).
struct GUIDSetTests {
    static func reference(_ guids: [[UInt8]]) -> [String] {
        var counts: [String: Int] = [:]
        for guid in guids { counts[String(decoding: guid, as: UTF8.self), default: 0] += 1 }
        return counts.filter { $0.value > 1 }.map(\.key).sorted()
    }

    static func actual(_ guids: [[UInt8]]) -> [String] {
        var set = GUIDSet()
        for guid in guids { guid.withUnsafeBufferPointer { set.insert($0) } }
        return set.duplicates()
    }

    @Test("duplicates as String equality finds them")
    func equivalence() {
        let tricky: [String] = [
            "a", "a", "b", "", "", "K1", "\u{212A}1", "\u{212A}2", "\u{212A}2", "x;", "x\u{37E}", "`", "\u{1FEF}",
            "caf\u{E9}", "cafe\u{301}", "caf\u{E9}", "\u{1F399}", "\u{1F399}", "ǅ", "ǆ",
            "long-\(String(repeating: "z", count: 300))",
            "long-\(String(repeating: "z", count: 300))",
        ]
        var guids = tricky.map { Array($0.utf8) }
        guids += [[0x61, 0xFF], [0x61, 0xFF], [0x61, 0xEF, 0xBF, 0xBD], [0xC3]]
        for index in 0..<5000 { guids.append(Array("bench-\(index % 3700)-\(index % 7)".utf8)) }
        #expect(Self.actual(guids) == Self.reference(guids))
        #expect(Self.actual(guids).contains("K1"))
        #expect(Self.actual(guids).contains("caf\u{E9}"))
    }
}
