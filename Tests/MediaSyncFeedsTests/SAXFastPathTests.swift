import Foundation
import Testing

@testable import MediaSyncFeeds

/// ``FeedSAXParser``, the streaming fast path: when it does not give up, it reads exactly what the careful path
/// (the rewriter and libxml2's reader) reads; it gives up on what it leaves to the careful path.
struct SAXFastPathTests {
    /// Runs only the fast path on a file: `nil` when it gives up (a ``FeedError``).
    static func fastPath(_ path: String, chunkSize: Int, baseURL: String?) throws -> Feed? {
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var episodes: [Episode] = []
        do {
            let input = try InputRewriter(speculative: FileInput(descriptor: descriptor), chunkSize: chunkSize)
            var feed = try FeedSAXParser.parse(input: input, baseURL: baseURL, chunkSize: chunkSize) {
                (episode: Episode) in episodes.append(episode)
            }
            feed.episodes = episodes
            return feed
        } catch is FeedError {
            return nil
        }
    }

    static func withFile<T>(_ bytes: [UInt8], _ body: (String) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sax-\(UUID().uuidString).xml")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url.path)
    }

    /// Fixtures that need nothing the fast path leaves to the careful path.
    static let cleanFixtures = [
        "atom_basic", "cdata", "content_encoded", "dates_rfc822", "duplicate_guids", "durations",
        "enclosure_without_length", "itunes_explicit_values", "itunes_tags", "missing_guids", "podcasting20",
        "podcasting20_old_namespace", "rebound_prefixes", "relative_urls_feed_base", "rss091", "rss1_rdf",
        "rss2_basic", "unbound_prefixes", "utf8_bom",
        // The feed-fidelity fixtures (Atom 0.3, namespaces spelled oddly, BCP 47 languages and the like) that need
        // nothing the careful path does.
        "atom03_modes", "atom03_namespace_without_hash", "atom_namespace_trailing_slash",
        "atom_namespace_uppercase_scheme", "character_reference_uppercase_x", "dc_fallbacks", "guid_permalink_link",
        "language_bcp47", "media_title", "unicode_spaces", "xml_lang_bcp47",
    ]

    @Test(
        "fixtures: the fast path reads what the careful path reads, and takes the clean ones", arguments: [3, 1 << 18])
    func fixtures(chunkSize: Int) throws {
        var taken: [String] = []
        for name in FeedFixture.names {
            let path = FeedFixture.folder.appendingPathComponent("\(name).xml").path
            guard let fast = try Self.fastPath(path, chunkSize: chunkSize, baseURL: FeedFixture.defaultBaseURL) else {
                continue
            }
            taken.append(name)
            let expected = try FeedParser.parse(try FeedFixture.bytes(name), baseURL: FeedFixture.defaultBaseURL)
            #expect(fast == expected, "\(name) with \(chunkSize)-byte chunks")
        }
        for name in Self.cleanFixtures {
            #expect(taken.contains(name), "\(name) should go through the fast path")
        }
    }

    static func feed(_ body: String, namespaces: String = "") -> [UInt8] {
        Array("<rss version=\"2.0\" \(namespaces)><channel><title>T</title>\n\(body)\n</channel></rss>".utf8)
    }

    static let itunes = "xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\""

    /// Documents the fast path must read exactly as the careful path does.
    static let equivalent: [(String, [UInt8])] = [
        (
            "attribute values with references, tabs and line breaks",
            feed(
                """
                <item><guid>1</guid><enclosure url="https://e.org/a.mp3?x=1&amp;y=2&#38;z=&lt;3&#233;" length=" 12 " type="audio/mpeg"/>
                <itunes:image href="https://e.org/i&#x9;j.jpg"/><link>https://e.org/?a=1&amp;b=2</link></item>
                <item><guid>2</guid><enclosure url="https://e.org/b.mp3" length="1
                2" type=" audio/mpeg&#10;"/></item>
                """, namespaces: itunes)
        ),
        (
            "xml:lang on the root and on the channel",
            Array(
                """
                <rss version="2.0" xml:lang="de"><channel><title>T</title><item><guid>1</guid></item></channel></rss>
                """.utf8)
        ),
        (
            "empty xml:lang on the channel wins over the root's",
            Array(
                """
                <rss version="2.0" xml:lang="de"><channel xml:lang=" "><title>T</title></channel></rss>
                """.utf8)
        ),
        (
            "Atom with xml:lang and rel links",
            Array(
                """
                <feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr"><title>A</title>
                <link href="https://e.org/"/><link rel="self" href="https://e.org/feed"/>
                <entry><id>e1</id><title type="html">A &amp;amp; B</title>
                <link rel=" Enclosure " href="https://e.org/e1.mp3" length="10" type="audio/mpeg"/>
                <link href="https://e.org/e1"/><updated>2024-01-02T03:04:05Z</updated></entry>
                <entry/></feed>
                """.utf8)
        ),
        (
            "RSS 1.0 rdf:about",
            Array(
                """
                <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
                <channel rdf:about="https://e.org/"><title>R</title></channel>
                <item rdf:about="https://e.org/1"><title>One</title></item><item rdf:about=""/></rdf:RDF>
                """.utf8)
        ),
        (
            "comments, processing instructions, entities and CDATA inside text",
            feed(
                """
                <item><guid>1</guid><title>a<!-- c -->b<?pi x?>c&amp;d&#x1F600;<![CDATA[<e>]]>f</title>
                <description>  <![CDATA[ x ]]> <![CDATA[y]]>  </description></item>
                """)
        ),
        (
            "empty elements and empty items",
            feed(
                """
                <item/><item><title/><guid></guid><link/></item><item><guid>3</guid><enclosure/><itunes:image/></item>
                """, namespaces: itunes)
        ),
        (
            "undeclared and rebound prefixes, default namespaces",
            feed(
                """
                <item><guid>1</guid><itunes:duration>1:02</itunes:duration><podcast:season>2</podcast:season>
                <x:episode xmlns:x="http://www.itunes.com/DTDs/Podcast-1.0.dtd">7</x:episode>
                <itunes:episodeType xmlns:itunes="urn:other">bonus</itunes:episodeType>
                <title xmlns="urn:other">not this</title><title>this</title></item>
                """)
        ),
        (
            "unknown elements with children and text are skipped",
            feed(
                """
                <foo><item><guid>no</guid></item></foo>
                <item><guid>1</guid><itunes:owner><itunes:name>N</itunes:name></itunes:owner><x>y<z/></x><title>T1</title></item>
                """, namespaces: itunes)
        ),
        (
            "relative URLs against the document URL",
            feed(
                """
                <link>/home</link><image><url>img.png</url></image>
                <item><guid>1</guid><link>ep/1</link><enclosure url="../media/1.mp3" type="audio/mpeg"/></item>
                """)
        ),
        (
            "funding, locked, new feed URL, podcast guid",
            feed(
                """
                <podcast:funding url="https://e.org/f?a&amp;b"> Support &amp; more </podcast:funding>
                <podcast:locked>yes</podcast:locked><itunes:new-feed-url> https://e.org/new </itunes:new-feed-url>
                <podcast:guid>abc</podcast:guid><itunes:block>Yes</itunes:block>
                """, namespaces: itunes + " xmlns:podcast=\"https://podcastindex.org/namespace/1.0\"")
        ),
        (
            "a text node just under libxml2's 10 MB limit",
            feed(
                "<item><guid>1</guid><description>" + String(repeating: "a", count: 9_999_000)
                    + "</description></item>")
        ),
    ]

    /// Documents the fast path leaves to the careful path (the result is the careful path's either way).
    static let givenUp: [(String, [UInt8])] = [
        ("xml:base", feed("<item xml:base=\"https://o.org/\"><guid>1</guid><link>x</link></item>")),
        ("markup inside a text field", feed("<item><guid>1</guid><description>a<p>b</p></description></item>")),
        ("a mismatched tag", feed("<item><guid>1</guid><title>a</b></title></item>")),
        ("a text node over libxml2's 10 MB limit", feed("<x>" + String(repeating: "c", count: 10_000_001) + "</x>")),
        (
            "a CDATA section over 10 MB (libxml2's push parser refuses it: \"Huge input lookup\")",
            feed(
                "<item><guid>1</guid><description><![CDATA[" + String(repeating: "b", count: 10_500_000)
                    + "]]></description></item>")
        ),
        ("not a feed", Array("<html><body/></html>".utf8)),
    ]

    @Test("documents: the fast path reads what the careful path reads", arguments: [1, 7, 4096, 1 << 18])
    func documents(chunkSize: Int) throws {
        for (name, bytes) in Self.equivalent where chunkSize >= 4096 || bytes.count < 100_000 {
            try Self.withFile(bytes) { path in
                let fast = try Self.fastPath(path, chunkSize: chunkSize, baseURL: FeedFixture.defaultBaseURL)
                #expect(fast != nil, "\(name): the fast path gave up")
                let expected = try FeedParser.parse(bytes, baseURL: FeedFixture.defaultBaseURL)
                #expect(fast == expected, "\(name) with \(chunkSize)-byte chunks")
                if chunkSize == 1 << 18 {
                    let json = try StreamingTests.written(path)
                    let encoded = try FeedJSON.encode(expected)
                    #expect(json == encoded + "\n", "\(name) through FeedJSON")
                }
            }
        }
    }

    @Test("documents the fast path leaves to the careful path", arguments: [3, 1 << 18])
    func givenUp(chunkSize: Int) throws {
        for (name, bytes) in Self.givenUp where chunkSize >= 4096 || bytes.count < 100_000 {
            try Self.withFile(bytes) { path in
                let fast = try Self.fastPath(path, chunkSize: chunkSize, baseURL: FeedFixture.defaultBaseURL)
                #expect(fast == nil, "\(name)")
                if let expected = try? FeedParser.parse(bytes, baseURL: FeedFixture.defaultBaseURL) {
                    let json = try StreamingTests.written(path)
                    let encoded = try FeedJSON.encode(expected)
                    #expect(json == encoded + "\n", "\(name) through FeedJSON")
                }
            }
        }
    }
}
