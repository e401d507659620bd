import Foundation
import Testing

@testable import MediaSyncFeeds

/// The streaming JSON writer carries item descriptions as bytes; its output must stay the in-memory encoder's.
struct DescriptionBytesTests {
    static let documents: [String] = [
        // Trimming, escapes, non-ASCII.
        """
        <rss version="2.0"><channel><title>T</title>
        <item><guid>a</guid><description>
          \t Caf\u{E9} "quoted" back\\\\slash \u{2019}\u{1F600} &#x9;tab&#xA;line
        </description></item>
        <item><guid>b</guid><description>   </description><itunes:summary xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"> sum </itunes:summary></item>
        <item><guid>c</guid><description><![CDATA[ <p>cdata</p> ]]></description></item>
        <item><guid>d</guid><description>x<p>nested <b>markup</b></p>y</description></item>
        </channel></rss>
        """,
        // content:encoded against description: longer wins, a tie keeps description; first occurrence counts.
        """
        <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>T</title>
        <item><guid>1</guid><description>short</description><content:encoded>much longer</content:encoded></item>
        <item><guid>2</guid><description>much longer</description><content:encoded>short</content:encoded></item>
        <item><guid>3</guid><description>\u{E9}\u{E9}</description><content:encoded>abcd</content:encoded></item>
        <item><guid>4</guid><content:encoded>only rich</content:encoded></item>
        <item><guid>5</guid><description>first</description><description>second, longer</description></item>
        <item><guid>6</guid></item>
        </channel></rss>
        """,
        // Atom: content against summary.
        """
        <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
        <entry><id>e1</id><summary>sum</summary><content type="html">&lt;p&gt;content&lt;/p&gt;</content></entry>
        <entry><id>e2</id><summary>a longer summary</summary><content>c</content></entry>
        <entry><id>e3</id><summary>  </summary></entry>
        </feed>
        """,
    ]

    @Test("descriptions written from bytes match the in-memory encoder")
    func descriptionsMatch() throws {
        for (index, document) in Self.documents.enumerated() {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "description-bytes-\(UUID().uuidString).xml")
            try Data(document.utf8).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let expected = try FeedJSON.encode(
                FeedParser.parse(Array(document.utf8), baseURL: FeedFixture.defaultBaseURL))
            #expect(try StreamingTests.written(url.path) == expected + "\n", "document \(index)")
        }
    }
}
