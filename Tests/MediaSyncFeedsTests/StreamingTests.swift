import Foundation
import Testing

@testable import MediaSyncFeeds

/// The streaming entry points agree with the in-memory parser, whatever the chunk size.
struct StreamingTests {
    /// Parses a fixture file through the streaming path with a given chunk size, collecting the episodes.
    static func streamed(_ path: String, chunkSize: Int, baseURL: String? = FeedFixture.defaultBaseURL) throws -> Feed {
        var episodes: [Episode] = []
        var feed = try FeedParser.parse(
            contentsOfFile: path, baseURL: baseURL, maximumSize: FeedParser.defaultMaximumSize,
            chunkSize: chunkSize, replayAfterRecovery: nil
        ) { episodes.append($0) }
        #expect(feed.episodes.isEmpty)
        feed.episodes = episodes
        return feed
    }

    @Test("every fixture streams to the same feed as the in-memory parser", arguments: [1, 2, 3, 7, 64, 1 << 18])
    func fixturesStream(chunkSize: Int) throws {
        for name in FeedFixture.names {
            let path = FeedFixture.folder.appendingPathComponent("\(name).xml").path
            let expected = try FeedParser.parse(try FeedFixture.bytes(name), baseURL: FeedFixture.defaultBaseURL)
            let actual = try Self.streamed(path, chunkSize: chunkSize)
            #expect(actual == expected, "\(name) with \(chunkSize)-byte chunks")
        }
    }

    @Test("the streaming JSON writer matches the golden files")
    func goldenThroughWriter() throws {
        for name in FeedFixture.names {
            let path = FeedFixture.folder.appendingPathComponent("\(name).xml").path
            let expected = try String(
                contentsOf: FeedFixture.folder.appendingPathComponent("\(name).json"), encoding: .utf8)
            #expect(try Self.written(path) == expected, "\(name)")
        }
    }

    /// Runs ``FeedJSON/write(feedAtPath:baseURL:to:)`` into a pipe-free temporary file and reads it back.
    static func written(_ path: String, baseURL: String? = FeedFixture.defaultBaseURL) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("feedjson-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out) }
        let handle = try FileHandle(forWritingTo: out)
        try FeedJSON.write(feedAtPath: path, baseURL: baseURL, to: handle.fileDescriptor)
        try handle.close()
        return try String(contentsOf: out, encoding: .utf8)
    }

    @Test("a broken feed streams, is recovered, and every episode is delivered exactly once")
    func recoveryDeliversOnce() throws {
        let xml = """
            <rss version="2.0"><channel><title>Unquoted</title>
            <item><guid>0</guid></item>
            <item><guid>1</guid><enclosure url=https://cdn.example.org/1.mp3 type="audio/mpeg"/></item>
            <item><guid>2</guid><title>Two</title></item></channel></rss>
            """
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).xml")
        try Data(xml.utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        for chunk in [1, 5, 4096] {
            let feed = try Self.streamed(path.path, chunkSize: chunk, baseURL: nil)
            #expect(feed.episodes.map(\.guid) == ["0", "1", "2"])
            #expect(feed.recoveredError?.hasPrefix("line 3: ") == true)
        }
    }

    @Test("the JSON of a recovered feed is exactly the in-memory parser's")
    func recoveredJSON() throws {
        let items = (0..<300).map { "<item><guid>\($0)</guid><title>Episode \($0)</title></item>" }.joined()
        let xml =
            "<rss version=\"2.0\"><channel><title>Unquoted</title>\n" + items
            + "<item><guid>x</guid><enclosure url=https://cdn.example.org/1.mp3 type=\"audio/mpeg\"/></item>\n"
            + items + "</channel></rss>"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).xml")
        try Data(xml.utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let expected = try FeedJSON.encode(try FeedParser.parse(Array(xml.utf8), baseURL: FeedFixture.defaultBaseURL))
        #expect(try Self.written(path.path) == expected + "\n")
        #expect(expected.contains("recoveredError"))
    }

    @Test("a missing file is reported as unreadable")
    func missingFile() {
        #expect(throws: FeedError.unreadable) {
            try FeedParser.parse(contentsOfFile: "/nonexistent/feed.xml", baseURL: nil) { _ in }
        }
    }

    @Test("FeedJSON matches JSONEncoder on awkward values")
    func encoderParity() throws {
        var strings = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        strings += ["", "a/b\\c\"d", "café — 🎙", "\u{2028}\u{2029}\u{7F}\u{FEFF}", "line\nbreak\ttab\r"]
        let dates: [Double] = [
            0, -1, 1_700_000_000, -12_219_292_800, -12_219_292_801, -62_135_596_800, 253_402_300_799, 951_782_400,
            1.5, -0.5,
        ]
        var episodes: [Episode] = []
        for (index, text) in strings.enumerated() {
            episodes.append(
                Episode(
                    guid: text, guidIsFallback: index % 2 == 0, title: text, link: "x", description: text,
                    published: Date(timeIntervalSince1970: dates[index % dates.count]),
                    durationSeconds: index % 3 == 0 ? nil : -index, season: Int.max, episode: Int.min,
                    episodeType: "full", explicit: index % 2 == 1, block: false,
                    enclosure: index % 4 == 0
                        ? nil : Enclosure(url: text, length: index % 3 == 0 ? nil : Int64.max, type: text),
                    imageURL: text,
                    transcripts: index % 5 == 0 ? [] : [Transcript(url: text), Transcript(url: "u", type: text)],
                    chaptersURL: text))
        }
        episodes.append(Episode())
        let feeds = [
            Feed(),
            Feed(
                title: "t", link: "l", description: "d\u{1}", author: "a", language: "en", imageURL: "i",
                newFeedURL: "n", podcastGUID: "g", locked: false, block: true,
                funding: [Funding(url: "u"), Funding(url: "v", title: "w")], episodes: episodes,
                duplicateGUIDs: ["a", "b"], recoveredError: "r"),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        for feed in feeds {
            let expected = String(decoding: try encoder.encode(feed), as: UTF8.self)
            let actual = try FeedJSON.encode(feed)
            if actual != expected {
                let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
                let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
                if let line = (0..<min(a.count, e.count)).first(where: { a[$0] != e[$0] }) {
                    Issue.record("first difference at line \(line): \(a[line]) vs \(e[line])")
                } else {
                    Issue.record("line counts differ: \(a.count) vs \(e.count)")
                }
            }
        }
    }
}
