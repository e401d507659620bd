import Foundation
import MediaSyncFeeds
import Testing

/// A generated feed in the shape of the benchmark's (iTunes and Podcasting 2.0 tags, 1–2 KB CDATA HTML
/// descriptions). No time limits here: the report carries the measurements.
enum LargeFeed {
    static func make(items: Int) -> [UInt8] {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" \
            xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
            <channel><title>Large &amp; Generated</title><link>https://example.org/large</link>
            <itunes:author>Generator</itunes:author><itunes:image href="https://example.org/large.jpg"/>
            <podcast:guid>00000000-0000-5000-8000-000000000000</podcast:guid>

            """
        let paragraph =
            "<p>Show notes with <a href=\"https://example.org/x?a=1&amp;b=2\">links</a> &amp; more text. </p>"
        for index in 0..<items {
            let description = String(repeating: paragraph, count: 10 + index % 10)
            xml += """
                <item><title>Episode \(index): a title &amp; more</title>
                <guid isPermaLink="false">large-\(index)</guid>
                <link>https://example.org/large/\(index)</link>
                <pubDate>Tue, 02 Jan 2024 03:04:05 +0000</pubDate>
                <description><![CDATA[\(description)]]></description>
                <enclosure url="https://cdn.example.org/large/\(index).mp3" length="\(1_000_000 + index)" type="audio/mpeg"/>
                <itunes:duration>1:02:03</itunes:duration><itunes:episode>\(index)</itunes:episode>
                <itunes:season>\(1 + index / 100)</itunes:season><itunes:explicit>no</itunes:explicit>
                <podcast:transcript url="https://example.org/large/\(index).vtt" type="text/vtt"/>
                </item>

                """
        }
        xml += "</channel></rss>\n"
        return Array(xml.utf8)
    }

    static func peakResidentMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}

@Test("a generated ~20 MB feed parses completely")
func largeFeed() throws {
    let bytes = LargeFeed.make(items: 12_000)
    let clock = ContinuousClock()
    var feed = Feed()
    let elapsed = try clock.measure {
        feed = try FeedParser.parse(bytes, baseURL: "https://feeds.example.org/show.xml")
    }
    print(
        "large feed: \(bytes.count / 1_048_576) MiB, \(feed.episodes.count) episodes in \(elapsed), peak RSS \(LargeFeed.peakResidentMiB()) MiB"
    )
    #expect(bytes.count > 20_000_000)
    #expect(feed.episodes.count == 12_000)
    #expect(feed.episodes.last?.guid == "large-11999")
    #expect(feed.episodes.last?.durationSeconds == 3723)
    #expect(feed.episodes.last?.transcripts.count == 1)
    #expect(feed.recoveredError == nil)
    #expect(feed.duplicateGUIDs.isEmpty)
}

/// Manual benchmark: `MEDIASYNC_FEEDS_BENCH=/path/feed.xml swift test -c release --filter benchmarkFile`
/// (or `MEDIASYNC_FEEDS_BENCH=generate:50000` to generate one in memory).
@Test(
    "benchmark a feed file named by MEDIASYNC_FEEDS_BENCH",
    .enabled(if: ProcessInfo.processInfo.environment["MEDIASYNC_FEEDS_BENCH"] != nil))
func benchmarkFile() throws {
    let spec = ProcessInfo.processInfo.environment["MEDIASYNC_FEEDS_BENCH"] ?? ""
    let bytes: [UInt8]
    if spec.hasPrefix("generate:"), let items = Int(spec.dropFirst("generate:".count)) {
        bytes = LargeFeed.make(items: items)
    } else {
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: spec)))
    }
    let before = LargeFeed.peakResidentMiB()
    let clock = ContinuousClock()
    var count = 0
    let elapsed = try clock.measure {
        count = try FeedParser.parse(bytes, baseURL: "https://feeds.example.org/show.xml").episodes.count
    }
    print(
        "benchmark: \(bytes.count / 1_048_576) MiB, \(count) episodes in \(elapsed), peak RSS before \(before) MiB, after \(LargeFeed.peakResidentMiB()) MiB"
    )
}
