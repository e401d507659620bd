import Foundation
import Testing

@testable import MediaSyncFeeds

/// The feed-fidelity rules as tables: the pure pieces behind the fidelity golden fixtures.
struct FidelityRuleTests {
    @Test(
        "language tags are normalised to BCP 47",
        arguments: [
            ("en_US", "en-US"), ("EN-gb", "en-GB"), (" en-us ", "en-US"), ("zh_hant_tw", "zh-Hant-TW"),
            ("de", "de"), ("es-419", "es-419"), ("en-US, fr", "en-US"), ("sr-latn-rs", "sr-Latn-RS"),
            ("en-x-Custom", "en-x-custom"), ("English (US)", "English (US)"), ("f", "f"), ("", nil), ("  ", nil),
        ] as [(String, String?)])
    func languageTags(input: String, expected: String?) {
        #expect(LanguageTag.normalized(input) == expected)
    }

    @Test(
        "Atom text constructs: type and mode give the kind",
        arguments: [
            (nil, nil, TextConstruct.Kind.text, false), ("text", nil, .text, false), ("text/plain", nil, .text, false),
            ("html", nil, .html, false), ("text/html", "escaped", .html, false), (nil, "escaped", .html, false),
            ("xhtml", nil, .xhtml, false), ("application/xhtml+xml", "xml", .xhtml, false),
            ("text/html", "base64", .html, true), (nil, "base64", .text, true), ("plain", nil, .text, false),
        ] as [(String?, String?, TextConstruct.Kind, Bool)])
    func constructs(type: String?, mode: String?, kind: TextConstruct.Kind, base64: Bool) {
        let construct = TextConstruct(type: type, mode: mode)
        #expect(construct.kind == kind)
        #expect(construct.base64 == base64)
    }

    @Test(
        "base64 text decodes to UTF-8 with XML's forbidden characters removed, or is kept",
        arguments: [
            ("SGVsbG8sIHdvcmxk", "Hello, world"), ("SGVs\nbG8=", "Hello"), ("4oCUIGRhc2g", "— dash"),
            ("AEEB", "A"),  // NUL and U+0001 dropped
            ("not base64!", nil), ("//79", nil),  // not UTF-8
            ("QQ==QQ==", nil), ("Q", nil), ("", nil),
        ] as [(String, String?)])
    func base64(text: String, expected: String?) {
        let decoded = Array(text.utf8).withUnsafeBufferPointer { TextConstruct.base64Decoded($0) }
        #expect(decoded.map { String(decoding: $0, as: UTF8.self) } == expected)
    }

    @Test(
        "literal text collapses only ASCII whitespace",
        arguments: [
            ("  a \t\n b  ", "a b"), ("<blink> &amp;", "<blink> &amp;"), ("a\u{A0}\u{A0}b", "a\u{A0}\u{A0}b"),
            ("\u{2003}x\u{2003}", "\u{2003}x\u{2003}"), (" \n ", nil),
        ] as [(String, String?)])
    func literal(text: String, expected: String?) {
        #expect(TextCleaner.literalText(text) == expected)
        let collapsed = Array(text.utf8).withUnsafeBufferPointer { TextCleaner.isCollapsed($0) }
        #expect(collapsed == (expected == text))
    }

    @Test(
        "plain text from HTML keeps Unicode spaces and decodes uppercase-X references",
        arguments: [
            ("a&nbsp;&nbsp;b", "a\u{A0}\u{A0}b"), ("a \u{2009} b", "a \u{2009} b"), ("&#X41;&#x42;", "AB"),
            ("<b>x</b>\n\ny", "x y"), ("&amp;lt;blink&amp;gt;", "&lt;blink&gt;"), ("&lt;blink&gt;", "<blink>"),
        ] as [(String, String?)])
    func plain(text: String, expected: String?) {
        #expect(TextCleaner.plainText(text) == expected)
    }

    @Test(
        "namespace URIs match whatever their variant",
        arguments: [
            ("http://www.w3.org/2005/Atom", "atom:title"), ("http://www.w3.org/2005/Atom/", "atom:title"),
            ("HTTP://WWW.W3.ORG/2005/ATOM", "atom:title"), ("https://www.w3.org/2005/Atom", "atom:title"),
            ("http://purl.org/atom/ns#", "atom:title"), ("http://purl.org/atom/ns", "atom:title"),
            (" http://purl.org/atom/ns# ", "atom:title"), ("http://purl.org/rss/1.0/", "title"),
            ("http://purl.org/rss/1.0", "title"), ("http://www.w3.org/2005/Atomic", nil),
        ] as [(String, String?)])
    func namespaces(uri: String, expected: String?) {
        #expect(ElementNames.key(namespaceURI: uri, localName: "title") == expected)
    }

    @Test(
        "declared legacy encodings get iconv's names",
        arguments: [
            ("Shift_JIS", "CP932"), ("windows-31j", "CP932"), ("KOI8-R", "KOI8-R"), ("koi8-u", "KOI8-U"),
            ("ISO-8859-2", "ISO-8859-2"), ("EUC-JP", "EUC-JP"), ("x-mac-ukrainian", "MAC-UK"),
        ])
    func encodings(declared: String, expected: String) {
        #expect(LegacyEncoding.resolve(declared) == .converter(expected))
    }

    @Test("a stray latin-1 byte is repaired alone, in any chunking, and the UTF-8 around it is kept")
    func strayByte() throws {
        let title = "Caf\u{E9} \u{2014} \u{65E5}\u{672C} r"
        var bytes = Array("<rss><channel><title>\(title)".utf8)
        bytes.append(0xE9)  // latin-1 é
        bytes += Array(
            "sum\u{E9}</title><item><guid>g</guid><title>\u{2603}\u{FE0F}</title></item></channel></rss>".utf8)
        let feed = try FeedParser.parse(bytes, baseURL: nil)
        #expect(feed.title == title + "\u{E9}sum\u{E9}")
        #expect(feed.episodes.first?.title == "\u{2603}\u{FE0F}")
        for chunkSize in [1, 2, 3, 5, 64] {
            let streamed = try SAXFastPathTests.withFile(bytes) { path in
                var episodes: [Episode] = []
                var feed = try FeedParser.parse(
                    contentsOfFile: path, baseURL: nil, maximumSize: 1 << 20, chunkSize: chunkSize,
                    replayAfterRecovery: { episodes.removeAll() }, onEpisode: { episodes.append($0) })
                feed.episodes = episodes
                return feed
            }
            #expect(streamed == feed, "\(chunkSize)-byte chunks")
        }
    }

    @Test("a document declared windows-1252 is read as windows-1252 throughout")
    func declaredWindows1252() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"windows-1252\"?><rss><channel><title>".utf8)
        bytes += [0xC3, 0xA9, 0x20, 0x93, 0x71, 0x94]  // "Ã© “q”" in windows-1252
        bytes += Array("</title></channel></rss>".utf8)
        let feed = try FeedParser.parse(bytes, baseURL: nil)
        #expect(feed.title == "\u{C3}\u{A9} \u{201C}q\u{201D}")
    }
}
