import Foundation
import MediaSyncFeeds
import Testing

@Suite("feed parser safety and errors")
struct FeedParserSafetyTests {
    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [
          <!ENTITY lol "lol">
          <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
          <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
          <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
          <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
          <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
          <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
          <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
          <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
          <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <rss version="2.0"><channel><title>&lol9;</title></channel></rss>
        """

    @Test("billion laughs fails fast with a clear error")
    func billionLaughs() throws {
        let start = ContinuousClock.now
        let error = #expect(throws: FeedError.entityExpansion) {
            try FeedParser.parse(Array(Self.billionLaughs.utf8), baseURL: nil)
        }
        let elapsed = ContinuousClock.now - start
        print("billion laughs rejected in \(elapsed)")
        #expect(error?.description.contains("expand") == true)
        #expect(error?.description.contains("lol") == true)
    }

    @Test("an entity that refers to itself is refused")
    func recursiveEntity() {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY a "x&b;"><!ENTITY b "y&a;">]>
            <rss version="2.0"><channel><title>&a;</title></channel></rss>
            """
        #expect(throws: FeedError.entityExpansion) { try FeedParser.parse(Array(xml.utf8), baseURL: nil) }
    }

    @Test("many references to one large entity hit the total expansion budget")
    func quadraticBlowup() {
        let big = String(repeating: "x", count: 60_000)
        let references = String(repeating: "&big;", count: 200)
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY big "\(big)">]>
            <rss version="2.0"><channel><title>t</title><description>\(references)</description></channel></rss>
            """
        #expect(throws: FeedError.entityExpansion) { try FeedParser.parse(Array(xml.utf8), baseURL: nil) }
    }

    @Test(
        "external entities are never read",
        arguments: [
            "<!ENTITY xxe SYSTEM \"file:///etc/passwd\">",
            "<!ENTITY xxe PUBLIC \"-//x//y\" \"/etc/passwd\">",
            "<!ENTITY % pe SYSTEM \"file:///etc/passwd\"> %pe;",
        ])
    func externalEntity(_ declaration: String) throws {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [\(declaration)]>
            <rss version="2.0"><channel><title>a&xxe;b</title><item><guid>g</guid><description>&xxe;</description>\
            <enclosure url="&xxe;" type="audio/mpeg"/></item></channel></rss>
            """
        let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? "root:x:0:0"
        let feed = try FeedParser.parse(Array(xml.utf8), baseURL: nil)
        let json = try FeedJSON.encode(feed)
        #expect(!json.contains("root:"))
        #expect(!json.contains(String(passwd.prefix(20))))
        #expect(feed.title?.hasPrefix("a") == true)
        #expect(feed.title?.hasSuffix("b") == true)
    }

    @Test("an HTML page is not a feed")
    func htmlPage() {
        let html = """
            <!DOCTYPE html>
            <html><head><title>Welcome</title></head><body><p>Hello &nbsp; world<br></body></html>
            """
        let error = #expect(throws: FeedError.notAFeed) { try FeedParser.parse(Array(html.utf8), baseURL: nil) }
        #expect(
            error?.description
                == "not a podcast feed: the root element is <html>, expected <rss>, <rdf:RDF> or Atom <feed>")
    }

    @Test("empty and whitespace-only input", arguments: ["", "   \n", "\u{FEFF}", "just text"])
    func emptyInput(_ text: String) {
        #expect(throws: FeedError.self) { try FeedParser.parse(Array(text.utf8), baseURL: nil) }
    }

    @Test("input over the size limit is refused before parsing")
    func tooLarge() {
        let xml = Array("<rss><channel><title>t</title></channel></rss>".utf8)
        let error = #expect(throws: FeedError.tooLarge) {
            try FeedParser.parse(xml, baseURL: nil, maximumSize: 10)
        }
        #expect(error?.description.contains("limit is 10 bytes") == true)
    }

    @Test("a truncated feed is recovered up to the cut and marked")
    func truncated() throws {
        let xml =
            "<?xml version=\"1.0\"?>\n<rss version=\"2.0\">\n<channel>\n<title>Cut</title>\n<item><guid>1</guid></item><item><title>half"
        let feed = try FeedParser.parse(Array(xml.utf8), baseURL: nil)
        #expect(feed.title == "Cut")
        #expect(feed.episodes.first?.guid == "1")
        #expect(feed.recoveredError == "the document ends inside <rss> (truncated?); closed 4 open elements")
    }

    @Test("mismatched tags are recovered and marked")
    func mismatchedTags() throws {
        let xml = """
            <rss version="2.0"><channel><title>Recovered</title>
            <item><guid>1</guid><title>One</b></title></item>
            <item><guid>2</guid><title>Two</title></item></channel></rss>
            """
        let feed = try FeedParser.parse(Array(xml.utf8), baseURL: nil)
        #expect(feed.title == "Recovered")
        #expect(feed.episodes.map(\.guid).contains("2"))
        #expect(feed.recoveredError == "dropped the stray end tag </b>")
    }

    @Test("a document the streaming repairs cannot fix is re-read in libxml2's recovery mode")
    func domFallback() throws {
        let xml = """
            <rss version="2.0"><channel><title>Unquoted</title>
            <item><guid>1</guid><enclosure url=https://cdn.example.org/1.mp3 type="audio/mpeg"/></item>
            <item><guid>2</guid><title>Two</title></item></channel></rss>
            """
        let feed = try FeedParser.parse(Array(xml.utf8), baseURL: nil)
        #expect(feed.title == "Unquoted")
        #expect(feed.episodes.map(\.guid) == ["1", "2"])
        #expect(feed.recoveredError?.hasPrefix("line 2: ") == true)
    }

    @Test("a well-formed feed is not marked as recovered")
    func wellFormedIsNotRecovered() throws {
        let feed = try FeedParser.parse(try FeedFixture.bytes("rss2_basic"), baseURL: nil)
        #expect(feed.recoveredError == nil)
    }

    @Test("parses concurrently")
    func concurrent() async throws {
        let names = FeedFixture.names
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                for name in names {
                    group.addTask {
                        try FeedParser.parse(try FeedFixture.bytes(name), baseURL: FeedFixture.defaultBaseURL).episodes
                            .count
                    }
                }
            }
            var total = 0
            for try await count in group { total += count }
            #expect(total > 0)
        }
    }

    @Test("FeedError compares by kind and describes itself in one line")
    func errorValues() {
        #expect(FeedError.malformed(line: 3, message: "x") == FeedError.malformed(line: 3, message: "x"))
        #expect(FeedError.malformed(line: 3, message: "x") != FeedError.malformed(line: 4, message: "x"))
        #expect(FeedError.notAFeed != FeedError.empty)
        for error in [
            FeedError.notAFeed, .empty, .entityExpansion, .tooLarge, .notOPML, .malformed(line: 1, message: "m"),
        ] {
            #expect(!error.description.contains("\n"))
            #expect(!error.description.isEmpty)
        }
    }
}

@Suite("feed parser encodings")
struct FeedParserEncodingTests {
    @Test("an encoding libxml2 does not know still reads the ASCII parts")
    func unknownDeclaredEncoding() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"x-bogus\"?><rss><channel><title>Bogus ".utf8)
        bytes += [0xE9, 0xFF]
        bytes += Array("</title><item><guid>b-1</guid></item></channel></rss>".utf8)
        let feed = try FeedParser.parse(bytes, baseURL: nil)
        #expect(feed.title?.hasPrefix("Bogus") == true)
        #expect(feed.episodes.first?.guid == "b-1")
    }

    @Test("UTF-16 big endian without a BOM")
    func utf16BigEndian() throws {
        let text =
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?><rss><channel><title>Gro\u{DF} \u{1F399}</title></channel></rss>"
        var bytes: [UInt8] = []
        for unit in text.utf16 { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        let feed = try FeedParser.parse(bytes, baseURL: nil)
        #expect(feed.title == "Gro\u{DF} \u{1F399}")
    }
}
