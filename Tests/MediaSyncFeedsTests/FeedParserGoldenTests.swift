import Foundation
import MediaSyncFeeds
import Testing

/// One behaviour per fixture: `Fixtures/feeds/<behaviour>.xml` parses to exactly `<behaviour>.json`
/// (``FeedJSON`` output, base URL `https://feeds.example.org/show.xml`).
///
/// A missing `.json` fails the test and writes the actual output to `$TMPDIR/feeds-golden/<behaviour>.json` for review.
@Test("golden feed fixture", arguments: FeedFixture.names)
func goldenFeed(_ name: String) throws {
    let feed = try FeedParser.parse(try FeedFixture.bytes(name), baseURL: FeedFixture.defaultBaseURL)
    let actual = try FeedJSON.encode(feed) + "\n"
    let expectedURL = FeedFixture.folder.appendingPathComponent("\(name).json")
    guard let expected = try? String(contentsOf: expectedURL, encoding: .utf8) else {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("feeds-golden")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try actual.write(to: out.appendingPathComponent("\(name).json"), atomically: true, encoding: .utf8)
        Issue.record("no golden file for \(name); wrote the actual output to \(out.path)")
        return
    }
    #expect(actual == expected)
}

@Test("the fixture folder is found and every fixture has a golden file")
func fixtureFolderIsComplete() {
    let names = FeedFixture.names
    #expect(names.count >= 20)
    for name in names {
        #expect(FileManager.default.fileExists(atPath: FeedFixture.folder.appendingPathComponent("\(name).json").path))
    }
}
