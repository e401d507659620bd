import Foundation
import MediaSyncFeeds
import Testing

@Suite("OPML import and export")
struct OPMLTests {
    static let nested = """
        <?xml version="1.0" encoding="UTF-8"?>
        <opml version="1.0">
          <head><title>My subscriptions</title></head>
          <body>
            <outline text="News">
              <outline type="rss" text="Daily &amp; Weekly" xmlUrl="https://news.example.org/feed.xml" htmlUrl="https://news.example.org/"/>
              <outline text="Tech">
                <outline type="rss" title="Deep Tech" text="ignored" xmlUrl=" itpc://tech.example.org/podcast.rss "/>
              </outline>
            </outline>
            <outline type="link" text="Not a feed" url="https://example.org"/>
            <outline text="No type, but a feed" xmlUrl="https://untyped.example.org/rss?a=1&b=2"/>
            <outline type="rss" xmlUrl="https://untitled.example.org/feed"/>
          </body>
        </opml>
        """

    @Test("nested outlines are flattened in document order")
    func parseNested() throws {
        let outlines = try OPML.parse(Array(Self.nested.utf8))
        #expect(
            outlines == [
                OPMLOutline(
                    title: "Daily & Weekly", xmlURL: "https://news.example.org/feed.xml",
                    htmlURL: "https://news.example.org/"),
                OPMLOutline(title: "Deep Tech", xmlURL: "http://tech.example.org/podcast.rss"),
                OPMLOutline(title: "No type, but a feed", xmlURL: "https://untyped.example.org/rss?a=1&b=2"),
                OPMLOutline(title: nil, xmlURL: "https://untitled.example.org/feed"),
            ])
    }

    @Test("export then parse gives the same outlines")
    func roundTrip() throws {
        let outlines = [
            OPMLOutline(
                title: "Quotes \"and\" <angles> & ampersands", xmlURL: "https://a.example.org/feed?x=1&y=2",
                htmlURL: "https://a.example.org/"),
            OPMLOutline(title: "Café ünïcödé 🎙", xmlURL: "https://b.example.org/rss"),
            OPMLOutline(title: nil, xmlURL: "https://c.example.org/podcast.xml"),
        ]
        let document = OPML.export(outlines, title: "mediasync & friends")
        let parsed = try OPML.parse(Array(document.utf8))
        // An untitled outline is exported with its URL as `text`, which reads back as its title.
        var expected = outlines
        expected[2].title = "https://c.example.org/podcast.xml"
        #expect(parsed == expected)
        #expect(document.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">"))
        #expect(document.contains("<title>mediasync &amp; friends</title>"))
        #expect(OPML.export(parsed, title: "t") == OPML.export(parsed, title: "t"))
    }

    @Test("a feed is not an OPML file")
    func notOPML() {
        #expect(throws: FeedError.notOPML) {
            try OPML.parse(Array("<rss version=\"2.0\"><channel/></rss>".utf8))
        }
    }
}
