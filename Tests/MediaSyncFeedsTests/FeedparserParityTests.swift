import Foundation
import Testing

@testable import MediaSyncFeeds

/// Feeds of the kinds feedparser's own corpus holds, read as feedparser reads them: legacy encodings, Atom's
/// old and misspelt namespaces, Atom 0.3's content modes, attributes on an Atom `id`, Microsoft CDF, element
/// names in another case, and the language as written. Every document is also read from a file, through the
/// fast path where it takes it, and must read the same.
struct FeedparserParityTests {
    static let base = "http://example.org/feed.xml"

    /// The document read in memory, after checking that a file (fast path first) reads the same.
    static func parse(_ bytes: [UInt8], baseURL: String? = base) throws -> Feed {
        let feed = try FeedParser.parse(bytes, baseURL: baseURL)
        for chunkSize in [7, 1 << 18] {
            let streamed = try SAXFastPathTests.withFile(bytes) { path in
                var episodes: [Episode] = []
                var streamed = try FeedParser.parse(
                    contentsOfFile: path, baseURL: baseURL, maximumSize: 1 << 24, chunkSize: chunkSize,
                    replayAfterRecovery: { episodes.removeAll() }, onEpisode: { episodes.append($0) })
                streamed.episodes = episodes
                return streamed
            }
            #expect(streamed == feed, "a file in \(chunkSize)-byte chunks reads as the document in memory")
        }
        return feed
    }

    static func parse(_ text: String, baseURL: String? = base) throws -> Feed {
        try parse(Array(text.utf8), baseURL: baseURL)
    }

    /// An Atom 0.3 feed (as feedparser's encoding tests write it) whose title is `title`, in `encoding`.
    static func atom03(encoding: String, title: [UInt8]) -> [UInt8] {
        Array(
            "<?xml version=\"1.0\" encoding=\"\(encoding)\"?>\n<feed version=\"0.3\" xmlns=\"http://purl.org/atom/ns#\">\n<title>"
                .utf8)
            + title + Array("</title>\n</feed>".utf8)
    }

    /// An RSS 2.0 feed whose channel title is `title`, declared `encoding` (none when `nil`).
    static func rss(encoding: String?, title: [UInt8]) -> [UInt8] {
        let declaration = encoding.map { "<?xml version=\"1.0\" encoding=\"\($0)\"?>\n" } ?? ""
        return Array("\(declaration)<rss version=\"2.0\"><channel><title>".utf8) + title
            + Array("</title><item><guid>g</guid><title>x</title></item></channel></rss>".utf8)
    }

    // MARK: 1. Legacy encodings

    @Test(
        "Mac single-byte encodings under the names feedparser and Windows use",
        arguments: [
            (
                "macgreek", [0x80, 0x81, 0x82, 0x84, 0xB3, 0xC9, 0xFD, 0xFE],
                "\u{C4}\u{B9}\u{B2}\u{B3}\u{2265}\u{2026}\u{390}\u{3B0}"
            ),
            (
                "x-mac-greek", [0x80, 0x81, 0x82, 0x84, 0xD2, 0xF3, 0xFD, 0xFE],
                "\u{C4}\u{B9}\u{B2}\u{B3}\u{201C}\u{3C3}\u{390}\u{3B0}"
            ),
            ("mac-greek", [0xA1, 0xC1, 0xE1, 0xF9], "\u{393}\u{39D}\u{3B1}\u{3C5}"),
            (
                "maciceland", [0x80, 0xA0, 0xA6, 0xA9, 0xDC, 0xDD, 0xDE, 0xDF, 0xE0],
                "\u{C4}\u{DD}\u{B6}\u{A9}\u{D0}\u{F0}\u{DE}\u{FE}\u{FD}"
            ),
            (
                "x-mac-icelandic", [0x80, 0xA0, 0xAC, 0xDC, 0xDD, 0xDE, 0xDF, 0xE0, 0xE4],
                "\u{C4}\u{DD}\u{A8}\u{D0}\u{F0}\u{DE}\u{FE}\u{FD}\u{2030}"
            ),
            (
                "maccentraleurope", [0x80, 0x81, 0x82, 0x84, 0xCE, 0xEA, 0xFC, 0xFD, 0xFE],
                "\u{C4}\u{100}\u{101}\u{104}\u{151}\u{CD}\u{141}\u{17C}\u{122}"
            ),
            (
                "x-mac-ce", [0x80, 0x81, 0x82, 0x84, 0xA7, 0xE0, 0xFC, 0xFD, 0xFE],
                "\u{C4}\u{100}\u{101}\u{104}\u{DF}\u{157}\u{141}\u{17C}\u{122}"
            ),
            ("maclatin2", [0x80, 0x84, 0xFE], "\u{C4}\u{104}\u{122}"),
            (
                "macturkish", [0x80, 0xA4, 0xBB, 0xDA, 0xDB, 0xDC, 0xDE, 0xDF],
                "\u{C4}\u{A7}\u{AA}\u{11E}\u{11F}\u{130}\u{15E}\u{15F}"
            ),
            (
                "x-mac-turkish", [0x80, 0xAB, 0xD7, 0xDA, 0xDB, 0xDC, 0xDE, 0xDF],
                "\u{C4}\u{B4}\u{25CA}\u{11E}\u{11F}\u{130}\u{15E}\u{15F}"
            ),
            ("macintosh", [0x80, 0xA8, 0xC6, 0xD5], "\u{C4}\u{AE}\u{2206}\u{2019}"),
            (
                "x-mac-cyrillic", [0x80, 0x81, 0x82, 0xAB, 0xBE, 0xFD, 0xFE, 0xFF],
                "\u{410}\u{411}\u{412}\u{402}\u{40A}\u{44D}\u{44E}\u{20AC}"
            ),
            (
                "mac_croatian", [0x80, 0xA9, 0xAE, 0xB4, 0xD6, 0xE6, 0xFA, 0xFD, 0xFE],
                "\u{C4}\u{160}\u{17D}\u{2206}\u{F7}\u{107}\u{CB}\u{CA}\u{E6}"
            ),
            (
                "x-mac-romanian", [0x80, 0xA7, 0xAE, 0xAF, 0xBE, 0xBF, 0xDE, 0xDF, 0xE8],
                "\u{C4}\u{DF}\u{102}\u{218}\u{103}\u{219}\u{21A}\u{21B}\u{CB}"
            ),
        ] as [(String, [UInt8], String)])
    func macEncodings(encoding: String, title: [UInt8], expected: String) throws {
        #expect(try Self.parse(Self.atom03(encoding: encoding, title: title)).title == expected)
        #expect(try Self.parse(Self.rss(encoding: encoding.uppercased(), title: title)).title == expected)
    }

    @Test(
        "double-byte code pages under the names feedparser and Windows use",
        arguments: [
            ("gbk", [0xD6, 0xD0, 0xCE, 0xC4, 0xB1, 0xEA, 0xCC, 0xE2], "\u{4E2D}\u{6587}\u{6807}\u{9898}"),
            ("cp936", [0xB2, 0xA5, 0xBF, 0xCD, 0xBD, 0xDA, 0xC4, 0xBF], "\u{64AD}\u{5BA2}\u{8282}\u{76EE}"),
            ("936", [0xD6, 0xD0, 0xCE, 0xC4], "\u{4E2D}\u{6587}"),
            ("GB2312", [0xD6, 0xD0, 0xCE, 0xC4, 0xB1, 0xEA, 0xCC, 0xE2], "\u{4E2D}\u{6587}\u{6807}\u{9898}"),
            (
                "cp949", [0xC7, 0xD1, 0xB1, 0xB9, 0xBE, 0xEE, 0x20, 0xC1, 0xA6, 0xB8, 0xF1],
                "\u{D55C}\u{AD6D}\u{C5B4} \u{C81C}\u{BAA9}"
            ),
            ("euc-kr", [0xC6, 0xCC, 0xC4, 0xB3, 0xBD, 0xBA, 0xC6, 0xAE], "\u{D31F}\u{CE90}\u{C2A4}\u{D2B8}"),
            ("uhc", [0xC7, 0xD1, 0xB1, 0xB9, 0xBE, 0xEE], "\u{D55C}\u{AD6D}\u{C5B4}"),
            ("big5", [0xA4, 0xA4, 0xA4, 0xE5, 0xBC, 0xD0, 0xC3, 0x44], "\u{4E2D}\u{6587}\u{6A19}\u{984C}"),
            (
                "Shift_JIS", [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA, 0x82, 0xCC, 0x83, 0x5E, 0x83, 0x43, 0x83, 0x67],
                "\u{65E5}\u{672C}\u{8A9E}\u{306E}\u{30BF}\u{30A4}\u{30C8}"
            ),
            (
                "cp932", [0x83, 0x7C, 0x83, 0x62, 0x83, 0x68, 0x83, 0x4C, 0x83, 0x83, 0x83, 0x58, 0x83, 0x67],
                "\u{30DD}\u{30C3}\u{30C9}\u{30AD}\u{30E3}\u{30B9}\u{30C8}"
            ),
            ("ms_kanji", [0x94, 0xD4, 0x91, 0x67], "\u{756A}\u{7D44}"),
            ("EUC-JP", [0xC6, 0xFC, 0xCB, 0xDC, 0xB8, 0xEC], "\u{65E5}\u{672C}\u{8A9E}"),
        ] as [(String, [UInt8], String)])
    func doubleByteEncodings(encoding: String, title: [UInt8], expected: String) throws {
        #expect(try Self.parse(Self.rss(encoding: encoding, title: title)).title == expected)
        #expect(try Self.parse(Self.atom03(encoding: encoding, title: title)).title == expected)
    }

    @Test(
        "the HTTP charset wins over the XML declaration, valid UTF-8 over both (RFC 7303)",
        arguments: [
            // GBK bytes declared windows-1252, served as GBK.
            ("application/rss+xml; charset=gbk", "windows-1252", [0xD6, 0xD0, 0xCE, 0xC4], "\u{4E2D}\u{6587}"),
            ("text/xml; charset=\"x-mac-greek\"", nil, [0x80, 0xA1], "\u{C4}\u{393}"),
            ("application/xml;charset = 'Shift_JIS'", "utf-8", [0x93, 0xFA, 0x96, 0x7B], "\u{65E5}\u{672C}"),
            // windows-1252 bytes served as windows-1252 and declared ISO-8859-1.
            ("text/xml; charset=windows-1252", "iso-8859-1", [0xA3, 0x93, 0x71, 0x94], "\u{A3}\u{201C}q\u{201D}"),
            // No charset: the declaration decides.
            ("application/rss+xml", "gbk", [0xD6, 0xD0], "\u{4E2D}"),
            // A bogus charset: the declaration decides.
            ("text/xml; charset=no-such-thing", "macturkish", [0xDA], "\u{11E}"),
            // Valid UTF-8 wins over a charset that says otherwise.
            ("text/xml; charset=iso-8859-1", nil, Array("caf\u{E9}".utf8), "caf\u{E9}"),
        ] as [(String, String?, [UInt8], String)])
    func httpCharset(contentType: String, declared: String?, title: [UInt8], expected: String) throws {
        let document = Self.rss(encoding: declared, title: title)
        let feed = try FeedParser.parse(document, baseURL: Self.base, contentType: contentType)
        #expect(feed.title == expected)
        #expect(feed.episodes.map(\.title) == ["x"])
        let json = try Self.jsonThroughPipe {
            try FeedJSON.write(feedBytes: document, baseURL: Self.base, contentType: contentType, to: $0)
        }
        #expect(json == (try FeedJSON.encode(feed)) + "\n")
    }

    @Test(
        "an encoding nothing here knows reads as undeclared, never as U+FFFD",
        arguments: [
            ("no-such-encoding", Array("caf\u{E9}".utf8), "caf\u{E9}"),  // UTF-8 as it is
            ("no-such-encoding", [0x63, 0x61, 0x66, 0xE9], "caf\u{E9}"),  // a stray latin-1 byte
            ("x-" + String(repeating: "a", count: 5000), [0x93, 0x71, 0x94], "\u{201C}q\u{201D}"),
            ("utf-16", [0x93, 0x71, 0x94], "\u{201C}q\u{201D}"),  // no UTF-16 document has these bytes
            ("\u{7F}\u{1}\u{FFFD}", [0x93, 0x71, 0x94], "\u{201C}q\u{201D}"),
            ("", [0xE9], "\u{E9}"),
        ] as [(String, [UInt8], String)])
    func unknownEncodings(encoding: String, title: [UInt8], expected: String) throws {
        let feed = try Self.parse(Self.rss(encoding: encoding, title: title))
        #expect(feed.title == expected)
        #expect(feed.title?.contains("\u{FFFD}") == false)
    }

    @Test(
        "encoding names compare as Python's codecs registry compares them",
        arguments: [
            ("MacGreek", LegacyEncoding.singleByte(.macGreek)), ("mac greek", .singleByte(.macGreek)),
            ("x_mac_greek", .singleByte(.macGreek)), (" Mac-Icelandic ", .singleByte(.macIcelandic)),
            ("x-mac-centraleurroman", .singleByte(.macCentralEurope)), ("MAC_TURKISH", .singleByte(.macTurkish)),
            ("Windows-1252", .singleByte(.windows1252)), ("UTF-8", .utf8), ("ks_c_5601-1987", .converter("CP949")),
            ("windows-936", .converter("GBK")), ("gb2312", .converter("GB18030")), ("csBig5", .converter("CP950")),
            ("x-sjis", .converter("CP932")), ("koi8_u", .converter("KOI8-U")), ("iso_8859_2", .converter("iso_8859_2")),
        ] as [(String, LegacyEncoding)])
    func encodingNames(name: String, expected: LegacyEncoding) {
        #expect(LegacyEncoding.resolve(name) == expected)
    }

    @Test(
        "the charset parameter of a Content-Type",
        arguments: [
            ("text/xml; charset=UTF-8", "UTF-8"), ("application/atom+xml; charset='gb2312'", "gb2312"),
            ("text/xml;charset = \"x-mac-ce\" ; q=1", "x-mac-ce"), ("text/xml;", nil), ("text/xml; qs=0.9", nil),
            ("text/xml; charset=", nil), ("", nil), ("charset=utf-8", nil),
        ] as [(String, String?)])
    func contentTypeCharset(contentType: String, expected: String?) {
        #expect(LegacyEncoding.charset(ofContentType: contentType) == expected)
    }

    /// What `write` writes to a pipe.
    static func jsonThroughPipe(_ write: (Int32) throws -> Void) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString).json")
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        #expect(descriptor >= 0)
        defer {
            close(descriptor)
            try? FileManager.default.removeItem(at: url)
        }
        try write(descriptor)
        return try String(contentsOf: url, encoding: .utf8)
    }

    // MARK: 2. Atom namespaces

    @Test(
        "Atom under its old, draft and misspelt namespace URIs",
        arguments: [
            "http://purl.org/atom/ns#", "http://www.w3.org/2005/Atom", "http://example.com/newformat#",
            "http://example.com/necho", "http://purl.org/echo/", "http://purl.org/pie/", "uri/of/echo/namespace#",
            "http://purl.org/atom/ns#draft-ietf-atompub-format-08", "HTTP://PURL.ORG/ATOM/NS#",
            "http://www.w3.org/2005/Atom/", "https://www.w3.org/2005/Atom", "http://purl.org/atom/ns",
            "HTTP://EXAMPLE.COM/NEWFORMAT#",
        ])
    func atomNamespaces(uri: String) throws {
        let feed = try Self.parse(
            """
            <feed version="0.3" xmlns="\(uri)"><title>Example Atom</title>
            <link rel="alternate" href="http://example.org/"/>
            <entry><title>One</title><id>tag:example.org,2004:1</id><issued>2004-01-02T03:04:05Z</issued></entry>
            </feed>
            """)
        #expect(feed.title == "Example Atom")
        #expect(feed.link == "http://example.org/")
        #expect(feed.episodes.map(\.title) == ["One"])
        #expect(feed.episodes.first?.guid == "tag:example.org,2004:1")
        #expect(feed.episodes.first?.published == Date(timeIntervalSince1970: 1_073_012_645))
    }

    @Test("an Atom feed in no namespace is read as Atom")
    func atomWithoutNamespace() throws {
        let feed = try Self.parse(
            """
            <feed xmlns:bogus="http://dom.test/ns"><title type="html">A &amp;lt;b&amp;gt; feed</title>
            <link href="http://example.org/"/>
            <entry><id bogus:attr="wrong">right</id><link href="/one"/><title>One</title></entry></feed>
            """, baseURL: nil)
        #expect(feed.title == "A <b> feed")
        #expect(feed.link == "http://example.org/")
        #expect(feed.episodes.first?.guid == "right")
        #expect(feed.episodes.first?.link == "/one")
    }

    @Test("an element of an unknown namespace named feed is no Atom feed")
    func foreignFeed() {
        #expect(throws: FeedError.self) {
            try FeedParser.parse(Array(#"<feed xmlns="urn:other"><title>x</title></feed>"#.utf8), baseURL: nil)
        }
    }

    // MARK: 3. Atom content modes

    @Test(
        "Atom 0.3 modes and Atom 1.0 types in descriptions",
        arguments: [
            // base64
            (#"<summary mode="base64">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</summary>"#, "Example <b>Atom</b>"),
            (
                #"<summary type="text/html" mode="base64">PHA+SGlzdG9yeSBvZiB0aGUgJmx0O2JsaW5rJmd0OyB0YWc8L3A+</summary>"#,
                "<p>History of the &lt;blink&gt; tag</p>"
            ),
            (#"<summary mode="base64">not base64 at all!</summary>"#, "not base64 at all!"),
            // xml: markup kept, without the namespace declarations libxml2 writes
            (
                #"<summary type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml">Example <b>Atom</b></div></summary>"#,
                "<div>Example <b>Atom</b></div>"
            ),
            (
                #"<summary mode="xml"><div xmlns="http://www.w3.org/1999/xhtml">History of the &lt;blink&gt; tag</div></summary>"#,
                "<div>History of the &lt;blink&gt; tag</div>"
            ),
            (#"<summary mode="xml">Example <b>Atom</b></summary>"#, "Example <b>Atom</b>"),
            (
                #"<summary mode="xml"><svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg></summary>"#,
                #"<svg xmlns="http://www.w3.org/2000/svg"><circle r="1"/></svg>"#
            ),
            (
                #"<summary mode="xml"><p xmlns="http://www.w3.org/1999/xhtml"><!-- a "xmlns" --><![CDATA[<x xmlns="">]]></p></summary>"#,
                #"<p><!-- a "xmlns" --><![CDATA[<x xmlns="">]]></p>"#
            ),
            // escaped, the default
            (#"<summary mode="escaped">Example &lt;b&gt;Atom&lt;/b&gt;</summary>"#, "Example <b>Atom</b>"),
            (#"<summary>Example &lt;b&gt;Atom&lt;/b&gt;</summary>"#, "Example <b>Atom</b>"),
        ])
    func atom03Modes(element: String, expected: String) throws {
        let feed = try Self.parse(
            #"<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry>\#(element)</entry></feed>"#)
        #expect(feed.episodes.first?.description == expected)
        let channel = element.replacingOccurrences(of: "summary", with: "tagline")
        #expect(
            try Self.parse(#"<feed version="0.3" xmlns="http://purl.org/atom/ns#">\#(channel)</feed>"#).description
                == expected)
    }

    @Test(
        "Atom 1.0: xhtml loses its wrapping div, a non-text, non-XML MIME type is base64",
        arguments: [
            (
                #"<summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Example <b>Atom</b></div></summary>"#,
                "Example <b>Atom</b>"
            ),
            (
                #"<summary type="xhtml">  <xhtml:div xmlns:xhtml="http://www.w3.org/1999/xhtml">History of the &lt;blink&gt; tag</xhtml:div> </summary>"#,
                "History of the &lt;blink&gt; tag"
            ),
            (
                #"<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>One</p><p>Two</p></div></content>"#,
                "<p>One</p><p>Two</p>"
            ),
            (
                #"<summary type="application/octet-stream">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</summary>"#,
                "Example <b>Atom</b>"
            ),
            (#"<summary type="text/plain">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</summary>"#, "RXhhbXBsZSA8Yj5BdG9tPC9iPg=="),
            (#"<summary type="html">Example &lt;b&gt;Atom&lt;/b&gt;</summary>"#, "Example <b>Atom</b>"),
        ])
    func atom10Types(element: String, expected: String) throws {
        let feed = try Self.parse(#"<feed xmlns="http://www.w3.org/2005/Atom"><entry>\#(element)</entry></feed>"#)
        #expect(feed.episodes.first?.description == expected)
    }

    @Test(
        "titles in every mode are plain text, base64 decoded first",
        arguments: [
            (#"<title mode="base64">RXhhbXBsZSBBdG9t</title>"#, "Example Atom"),
            (#"<title type="application/octet-stream">RXhhbXBsZSBBdG9t</title>"#, "Example Atom"),
            (
                #"<title type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml">Example <b>Atom</b></div></title>"#,
                "Example Atom"
            ),
            (#"<title mode="escaped">Example &lt;b&gt;Atom&lt;/b&gt;</title>"#, "Example Atom"),
        ])
    func titleModes(element: String, expected: String) throws {
        let feed = try Self.parse(#"<feed version="0.3" xmlns="http://purl.org/atom/ns#">\#(element)</feed>"#)
        #expect(feed.title == expected)
    }

    @Test("a huge base64 blob decodes in linear time, and one that is not base64 is kept")
    func hugeBase64() throws {
        let payload = String(repeating: "A", count: 2_000_000)  // NULs, which XML forbids and decoding drops
        let feed = try Self.parse(
            #"<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><id>x</id><summary mode="base64">\#(payload)QQ==</summary></entry></feed>"#
        )
        #expect(feed.episodes.first?.description == "A")
        let broken = String(repeating: "QUJD!", count: 400_000)
        let kept = try Self.parse(
            #"<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><id>x</id><summary mode="base64">\#(broken)</summary></entry></feed>"#
        )
        #expect(kept.episodes.first?.description?.count == broken.count)
    }

    @Test("namespace declarations are removed from markup only where libxml2 wrote them, whatever the nesting")
    func deepMarkup() throws {
        let depth = 150
        let open = String(repeating: #"<span xmlns="http://www.w3.org/1999/xhtml">"#, count: depth)
        let close = String(repeating: "</span>", count: depth)
        let feed = try Self.parse(
            #"<rss><channel><item><guid>g</guid><description>\#(open)x\#(close)</description></item></channel></rss>"#)
        #expect(feed.episodes.first?.description == String(repeating: "<span>", count: depth) + "x" + close)
    }

    @Test(
        "markup cleaning passes anything that is not a start tag as it is",
        arguments: [
            (#"<a xmlns="http://www.w3.org/1999/xhtml" href="x">t</a>"#, #"<a href="x">t</a>"#),
            (#"<a href='x' xmlns='http://purl.org/atom/ns#'/>"#, "<a href='x'/>"),
            (#"<a xmlns:x="http://www.w3.org/1999/xhtml">t</a>"#, #"<a xmlns:x="http://www.w3.org/1999/xhtml">t</a>"#),
            (#"<a xmlns="urn:x">t</a>"#, #"<a xmlns="urn:x">t</a>"#),
            (#"<a xmlns="http://www.w3.org/1999/xhtml"#, #"<a xmlns="http://www.w3.org/1999/xhtml"#),
            ("<!-- xmlns=\"\" --", "<!-- xmlns=\"\" --"), ("<", "<"), ("x<a", "x<a"), ("<a b>", "<a b>"),
        ])
    func markupCleaning(input: String, expected: String) {
        var bytes = Array("kept".utf8) + Array(input.utf8)
        MarkupNamespaces.removeFeedDeclarations(from: &bytes, start: 4)
        #expect(String(decoding: bytes, as: UTF8.self) == "kept" + expected)
    }

    // MARK: 4. Atom ids with attributes

    @Test(
        "an Atom id with attributes still gives the id",
        arguments: [
            (
                #"<id xml:base="http://example.org/base/" foo="bar">tag:example.org,2024:1</id>"#,
                "tag:example.org,2024:1"
            ),
            (
                #"<id xmlns:x="urn:x" x:attr="wrong">urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>"#,
                "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a"
            ),
            (#"<id type="text">  http://example.org/1  </id>"#, "http://example.org/1"),
        ])
    func atomIDAttributes(element: String, expected: String) throws {
        for root in [
            #"<feed xmlns="http://www.w3.org/2005/Atom">"#, #"<feed version="0.3" xmlns="http://purl.org/atom/ns#">"#,
        ] {
            let feed = try Self.parse("\(root)<entry>\(element)<title>t</title></entry></feed>")
            #expect(feed.episodes.first?.guid == expected)
            #expect(feed.episodes.first?.guidIsFallback == false)
        }
    }

    // MARK: 5. CDF

    @Test("a CDF channel: title, link, description, and its items' title, link, description and date")
    func cdf() throws {
        let feed = try Self.parse(
            """
            <?xml version="1.0"?>
            <CHANNEL HREF="http://www.example.org/" BASE="http://www.example.org/">
              <TITLE>Example feed</TITLE>
              <ABSTRACT>Example description</ABSTRACT>
              <LOGO HREF="http://www.example.org/logo.gif" STYLE="IMAGE"/>
              <ITEM HREF="http://www.example.org/1.html" LASTMOD="2004-04-06T23:05:43-05:00">
                <TITLE>Example item</TITLE>
                <ABSTRACT>Item description</ABSTRACT>
              </ITEM>
              <ITEM HREF="/2.html" LASTMOD="2004-04-07T00:00:00Z"/>
              <item href="http://www.example.org/3.html" lastmod="2004-04-08T00:00:00Z"><title>Lower</title></item>
            </CHANNEL>
            """)
        #expect(feed.title == "Example feed")
        #expect(feed.link == "http://www.example.org/")
        #expect(feed.description == "Example description")
        #expect(feed.episodes.count == 3)
        let first = try #require(feed.episodes.first)
        #expect(first.title == "Example item")
        #expect(first.link == "http://www.example.org/1.html")
        #expect(first.description == "Item description")
        #expect(first.published == Date(timeIntervalSince1970: 1_081_310_743))
        #expect(feed.episodes[1].link == "http://example.org/2.html")
        #expect(feed.episodes[1].published == Date(timeIntervalSince1970: 1_081_296_000))
        #expect(feed.episodes[2].title == "Lower")
        #expect(feed.episodes[2].link == "http://www.example.org/3.html")
    }

    @Test(
        "CDF, one value at a time",
        arguments: [
            ("<CHANNEL><TITLE>Example feed</TITLE></CHANNEL>", "title", "Example feed"),
            (#"<CHANNEL HREF="http://www.example.org/"></CHANNEL>"#, "link", "http://www.example.org/"),
            ("<CHANNEL><ABSTRACT>Example description</ABSTRACT></CHANNEL>", "description", "Example description"),
        ] as [(String, String, String)])
    func cdfChannel(document: String, value: String, expected: String) throws {
        #expect(try Self.parse(document).value(value) == expected)
    }

    @Test("an RSS channel's attributes are not CDF's")
    func rssChannelHref() throws {
        let feed = try Self.parse(
            #"<rss><channel href="http://wrong.example/"><title>t</title><item href="http://wrong.example/1" lastmod="2004-04-07T00:00:00Z"><guid>g</guid></item></channel></rss>"#
        )
        #expect(feed.link == nil)
        #expect(feed.episodes.first?.link == nil)
        #expect(feed.episodes.first?.published == nil)
    }

    // MARK: 6. Element names in another case

    @Test(
        "element names in another case are matched ignoring case, namespaces as before",
        arguments: [
            ("<TiTlE>Example title</TiTlE>", "title", "Example title"),
            ("<itunes:AUTHOR>Example author</itunes:AUTHOR>", "author", "Example author"),
            ("<ITUNES:Author>Example author</ITUNES:Author>", "author", "Example author"),
            ("<itunes:Summary>Example summary</itunes:Summary>", "description", "Example summary"),
            ("<LINK>http://example.org/</LINK>", "link", "http://example.org/"),
            ("<Language>en-US</Language>", "language", "en-US"),
            (
                "<ITUNES:NEW-FEED-URL>http://example.org/new</ITUNES:NEW-FEED-URL>", "newFeedURL",
                "http://example.org/new"
            ),
        ] as [(String, String, String)])
    func caseInsensitiveNames(element: String, value: String, expected: String) throws {
        for uri in [
            "http://www.itunes.com/DTDs/Podcast-1.0.dtd", "http://www.itunes.com/dtds/podcast-1.0.dtd",
            "HTTP://WWW.ITUNES.COM/DTDS/PODCAST-1.0.DTD", "http://www.itunes.com/DTDs/PodCast-1.0.dtd",
        ] {
            let prefix = element.hasPrefix("<ITUNES:") ? "ITUNES" : "itunes"
            let feed = try Self.parse(#"<rss xmlns:\#(prefix)="\#(uri)"><channel>\#(element)</channel></rss>"#)
            #expect(feed.value(value) == expected, "\(uri)")
        }
    }

    @Test("item elements in another case")
    func caseInsensitiveItems() throws {
        let feed = try Self.parse(
            """
            <RSS xmlns:itunes="http://www.itunes.com/DTDs/Podcast-1.0.dtd"><CHANNEL><ITEM><GUID>g</GUID>
            <Title>One</Title><PUBDATE>Tue, 06 Apr 2004 23:05:43 -0500</PUBDATE><itunes:DURATION>1:02</itunes:DURATION>
            <itunes:EPISODETYPE>Full</itunes:EPISODETYPE><ENCLOSURE url="http://example.org/1.mp3" type="audio/mpeg"/>
            </ITEM></CHANNEL></RSS>
            """)
        let episode = try #require(feed.episodes.first)
        #expect(episode.guid == "g")
        #expect(episode.title == "One")
        #expect(episode.published == Date(timeIntervalSince1970: 1_081_310_743))
        #expect(episode.durationSeconds == 62)
        #expect(episode.episodeType == "full")
        #expect(episode.enclosure?.url == "http://example.org/1.mp3")
    }

    @Test("an element of another namespace is not read because its name matches in another case")
    func foreignNamesStayForeign() throws {
        let feed = try Self.parse(
            #"<rss xmlns:x="urn:x"><channel><x:TITLE>no</x:TITLE><TITLE>yes</TITLE></channel></rss>"#)
        #expect(feed.title == "yes")
    }

    // MARK: 7. Language

    @Test(
        "the language is kept as written; only a POSIX-style tag becomes BCP 47",
        arguments: [
            ("<language>en-us</language>", "en-us"), ("<language>en-US</language>", "en-US"),
            ("<language>EN</language>", "EN"), ("<language> en </language>", "en"),
            ("<dc:language>fr-ca</dc:language>", "fr-ca"), ("<language>en_US</language>", "en-US"),
            ("<language>de_at</language>", "de-AT"), ("<language>English</language>", "English"),
            ("<language></language>", nil),
        ] as [(String, String?)])
    func language(element: String, expected: String?) throws {
        let feed = try Self.parse(
            #"<rss xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>\#(element)</channel></rss>"#)
        #expect(feed.language == expected)
    }

    @Test(
        "xml:lang as the language: underscores become hyphens, the case is kept",
        arguments: [("en", "en"), ("en_US", "en-US"), ("en-us", "en-us"), ("", nil)] as [(String, String?)])
    func xmlLang(lang: String, expected: String?) throws {
        let feed = try Self.parse(#"<feed version="0.3" xmlns="http://purl.org/atom/ns#" xml:lang="\#(lang)"></feed>"#)
        #expect(feed.language == expected)
    }
}

extension Feed {
    /// A channel value by its JSON name (the tables name the value they check).
    fileprivate func value(_ name: String) -> String? {
        switch name {
        case "title": title
        case "link": link
        case "description": description
        case "author": author
        case "language": language
        case "newFeedURL": newFeedURL
        default: nil
        }
    }
}
