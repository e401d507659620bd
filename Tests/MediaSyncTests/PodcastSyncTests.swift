import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct PodcastSyncTests {
    struct Episode {
        var guid: String
        var title: String
        var day: Int
        var path: String
        var type = "audio/mpeg"
    }

    static func feed(title: String, episodes: [Episode], base: String, extra: String = "") -> [UInt8] {
        let items = episodes.map { episode in
            """
            <item><title>\(episode.title)</title><guid isPermaLink="false">\(episode.guid)</guid>
            <pubDate>\(String(format: "%02d", episode.day)) Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(base)\(episode.path)" length="4000" type="\(episode.type)"/></item>
            """
        }.joined(separator: "\n")
        return Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
            <title>\(title)</title><link>https://example.org</link>\(extra)
            \(items)
            </channel></rss>
            """.utf8)
    }

    struct Fixture {
        let server: TestServer
        let folder: TemporaryDirectory
        let root: MirrorRoot
        let index: MirrorIndex

        init() throws {
            server = try TestServer()
            folder = try TemporaryDirectory()
            root = MirrorRoot(path: folder.path)
            try root.prepare()
            index = try MirrorIndex(path: root.indexPath)
        }

        func publish(_ path: String, title: String, episodes: [Episode], etag: String, extra: String = "") {
            for episode in episodes {
                server.setFile(episode.path, contents: audio(episode.guid), contentType: episode.type)
            }
            server.setFile(
                path,
                contents: PodcastSyncTests.feed(title: title, episodes: episodes, base: server.baseURL, extra: extra),
                contentType: "application/rss+xml", etag: etag)
        }

        func audio(_ guid: String) -> [UInt8] {
            Array(repeating: UInt8(truncatingIfNeeded: guid.hashValue & 0x7F), count: 4000) + Array(guid.utf8)
        }

        func subscribe(_ path: String, retention: Retention = .defaultForNewSubscriptions) async throws -> Subscription
        {
            try await Subscriptions(index: index, client: HTTPClient()).add(
                url: server.baseURL + path, retention: retention)
        }

        func sync(delete: Bool = false) async throws -> SyncReport {
            try await MirrorSync(
                root: root, index: index, server: nil,
                transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 1))
            ).run(options: SyncOptions(delete: delete))
        }

        func tearDown() {
            server.shutdown()
            folder.remove()
        }
    }

    static let five = (1...5).map {
        Episode(guid: "ep-\($0)", title: "Episode \($0)", day: $0, path: "/media/ep\($0).mp3")
    }

    @Test func subscribesAndKeepsTheNewestFewThenAsksConditionally() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/show.xml", title: "Show", episodes: Self.five, etag: "\"v1\"")
        let subscription = try await fixture.subscribe("/feeds/show.xml")
        let expectedId = PodcastLayout.podcastId(feedURL: fixture.server.baseURL + "/feeds/show.xml", declaredGUID: nil)
        #expect(subscription.id == expectedId)

        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.sourceErrors.isEmpty, "\(report)")
        let folder = "Downloads/\(subscription.id)"
        #expect(
            fixture.folder.allFiles().filter { $0.hasPrefix("Downloads/") } == [
                "\(folder)/ep-3.mp3", "\(folder)/ep-4.mp3", "\(folder)/ep-5.mp3", "\(folder)/metadata.json",
            ])
        #expect(readFile(fixture.folder.file("\(folder)/ep-5.mp3")) == fixture.audio("ep-5"))
        let metadata =
            try JSONSerialization.jsonObject(
                with: FileManager.default.contents(atPath: fixture.folder.file("\(folder)/metadata.json")) ?? Data())
            as? [String: Any]
        #expect(metadata?["podcastID"] as? String == subscription.id)
        #expect(metadata?["podcastTitle"] as? String == "Show")
        #expect(metadata?["totalSize"] as? Int == 3 * 4004)
        let episodes = metadata?["episodes"] as? [[String: Any]] ?? []
        #expect(episodes.map { $0["fileName"] as? String } == ["ep-3.mp3", "ep-4.mp3", "ep-5.mp3"])
        #expect(
            episodes.allSatisfy {
                Set($0.keys).isSuperset(of: ["episodeID", "title", "fileName", "fileSize", "downloadDate"])
            })

        let second = try await fixture.sync()
        #expect(second.changedNothing)
        let feedRequests = fixture.server.requests(to: "/feeds/show.xml")
        #expect(feedRequests.last?.headers["if-none-match"] == "\"v1\"")
        #expect(fixture.server.requests(to: "/media/ep5.mp3").count == 1)
    }

    @Test func aChangedEnclosureURLWithTheSameGuidIsTheSameEpisode() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/show.xml", title: "Show", episodes: Self.five, etag: "\"v1\"")
        _ = try await fixture.subscribe("/feeds/show.xml", retention: .all)
        _ = try await fixture.sync()
        var moved = Self.five
        moved[4].path = "/cdn/episode-5.mp3"
        fixture.publish("/feeds/show.xml", title: "Show", episodes: moved, etag: "\"v2\"")
        let report = try await fixture.sync()
        #expect(report.downloaded.isEmpty)
        #expect(fixture.server.requests(to: "/cdn/episode-5.mp3").isEmpty)
    }

    @Test func retentionKeepsTheNewestAndDeletesOnlyWhenAsked() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/show.xml", title: "Show", episodes: Array(Self.five.prefix(2)), etag: "\"v1\"")
        let subscription = try await fixture.subscribe("/feeds/show.xml", retention: .newest(1))
        _ = try await fixture.sync()
        fixture.publish("/feeds/show.xml", title: "Show", episodes: Array(Self.five.prefix(3)), etag: "\"v2\"")
        let report = try await fixture.sync()
        #expect(report.downloaded == ["Downloads/\(subscription.id)/ep-3.mp3"])
        #expect(report.extraneous == ["Downloads/\(subscription.id)/ep-2.mp3"])
        let deleting = try await fixture.sync(delete: true)
        #expect(deleting.deleted == ["Downloads/\(subscription.id)/ep-2.mp3"])
        #expect(!FileManager.default.fileExists(atPath: fixture.folder.file("Downloads/\(subscription.id)/ep-2.mp3")))
    }

    @Test func permanentRedirectsMoveTheFeedButTemporaryOnesDoNot() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/a.xml", title: "A", episodes: Array(Self.five.prefix(1)), etag: "\"a\"")
        fixture.publish("/feeds/b.xml", title: "A moved", episodes: Array(Self.five.prefix(1)), etag: "\"b\"")
        let subscription = try await fixture.subscribe("/feeds/a.xml")
        fixture.server.inject(.redirect(location: "/feeds/b.xml", status: 302), path: "/feeds/a.xml")
        _ = try await fixture.sync()
        #expect(try fixture.index.subscriptions().first?.feedURL == fixture.server.baseURL + "/feeds/a.xml")
        fixture.server.inject(.redirect(location: "/feeds/b.xml", status: 301), path: "/feeds/a.xml")
        _ = try await fixture.sync()
        let moved = try #require(try fixture.index.subscriptions().first)
        #expect(moved.feedURL == fixture.server.baseURL + "/feeds/b.xml")
        #expect(moved.id == subscription.id)
        #expect(try fixture.index.aliases(podcastId: subscription.id) == [fixture.server.baseURL + "/feeds/a.xml"])
        #expect(
            try fixture.index.subscription(matching: fixture.server.baseURL + "/feeds/a.xml")?.id == subscription.id)
    }

    @Test func newFeedURLMovesTheSubscriptionAndKeepsItsFolder() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/old.xml", title: "Old", episodes: Array(Self.five.prefix(1)), etag: "\"o\"")
        let subscription = try await fixture.subscribe("/feeds/old.xml")
        let newURL = fixture.server.baseURL + "/feeds/new.xml"
        fixture.publish(
            "/feeds/old.xml", title: "Old", episodes: Array(Self.five.prefix(1)), etag: "\"o2\"",
            extra: "<itunes:new-feed-url>\(newURL)</itunes:new-feed-url>")
        _ = try await fixture.sync()
        #expect(try fixture.index.subscriptions().first?.feedURL == newURL)
        #expect(try fixture.index.subscriptions().first?.id == subscription.id)
    }

    @Test func aBrokenFeedKeepsItsLastGoodStateAndDoesNotStopTheOthers() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/good.xml", title: "Good", episodes: Array(Self.five.prefix(1)), etag: "\"g1\"")
        let broken = [Episode(guid: "b-1", title: "B1", day: 1, path: "/media/b1.mp3")]
        fixture.publish("/feeds/broken.xml", title: "Broken", episodes: broken, etag: "\"b1\"")
        let good = try await fixture.subscribe("/feeds/good.xml")
        let bad = try await fixture.subscribe("/feeds/broken.xml")
        _ = try await fixture.sync()

        fixture.publish("/feeds/good.xml", title: "Good", episodes: Array(Self.five.prefix(2)), etag: "\"g2\"")
        fixture.server.setFile(
            "/feeds/broken.xml", contents: Array("<html><body>502 Bad Gateway</body></html>".utf8),
            contentType: "text/html")
        let report = try await fixture.sync()
        #expect(report.downloaded == ["Downloads/\(good.id)/ep-2.mp3"])
        #expect(report.sourceErrors.count == 1)
        #expect(report.sourceErrors.first?.contains("Broken") == true)
        #expect(report.sourceErrors.first?.contains("keeping the last good copy") == true)
        #expect(report.extraneous.isEmpty)
        #expect(FileManager.default.fileExists(atPath: fixture.folder.file("Downloads/\(bad.id)/b-1.mp3")))
        #expect(try fixture.index.subscriptions().first { $0.id == bad.id }?.lastError != nil)
    }

    private func readFile(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }
}

@Suite struct EmptiedFeedTests {
    @Test func aFeedThatSuddenlyListsNothingKeepsItsEpisodes() async throws {
        let fixture = try PodcastSyncTests.Fixture()
        defer { fixture.tearDown() }
        fixture.publish(
            "/feeds/show.xml", title: "Show", episodes: Array(PodcastSyncTests.five.prefix(2)), etag: "\"v1\"")
        let subscription = try await fixture.subscribe("/feeds/show.xml", retention: .all)
        _ = try await fixture.sync()
        fixture.publish("/feeds/show.xml", title: "Show", episodes: [], etag: "\"v2\"")
        let report = try await fixture.sync(delete: true)
        #expect(report.deleted.isEmpty)
        #expect(report.sourceErrors.first?.contains("no episodes") == true)
        #expect(FileManager.default.fileExists(atPath: fixture.folder.file("Downloads/\(subscription.id)/ep-1.mp3")))
    }
}

@Suite struct PodcastDryRunTests {
    @Test func aDryRunPlansTheNewEpisodeAndStoresNothingOfTheFeed() async throws {
        let fixture = try PodcastSyncTests.Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/show.xml", title: "Show", episodes: Array(PodcastSyncTests.five[0..<2]), etag: "\"v1\"")
        let subscription = try await fixture.subscribe("/feeds/show.xml", retention: .all)
        _ = try await fixture.sync()
        let before = try #require(try fixture.index.subscriptions().first)
        let storedBefore = try fixture.index.storedFeed(podcastId: subscription.id)

        // A third episode is published: the dry run plans it and leaves the feed's stored state as it was, so the
        // real run after it still sees the change (it is not told "not modified" against state the dry run stored).
        fixture.publish("/feeds/show.xml", title: "Show", episodes: Array(PodcastSyncTests.five[0..<3]), etag: "\"v2\"")
        let plan = try await MirrorSync(
            root: fixture.root, index: fixture.index, server: nil,
            transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 1))
        ).run(options: SyncOptions(dryRun: true))
        #expect(plan.planned.contains { $0.action == "download" && $0.path.hasSuffix("/ep-3.mp3") }, "\(plan.planned)")
        let after = try #require(try fixture.index.subscriptions().first)
        #expect(after.etag == before.etag && after.lastChecked == before.lastChecked)
        #expect(try fixture.index.storedFeed(podcastId: subscription.id) == storedBefore)

        let real = try await fixture.sync()
        #expect(real.downloaded.contains { $0.hasSuffix("/ep-3.mp3") }, "\(real.downloaded)")
        #expect(try fixture.index.subscriptions().first?.etag == "\"v2\"")
    }
}

@Suite struct PodcastReindexTests {
    @Test func aLostIndexKeepsTheSubscriptionsAndTheEpisodes() async throws {
        let fixture = try PodcastSyncTests.Fixture()
        defer { fixture.tearDown() }
        fixture.publish("/feeds/show.xml", title: "Show", episodes: PodcastSyncTests.five, etag: "\"v1\"")
        let subscription = try await fixture.subscribe("/feeds/show.xml")
        _ = try await fixture.sync()
        try FileManager.default.removeItem(atPath: fixture.root.indexPath)
        let result = try Reindexer.rebuildFresh(root: fixture.root)
        #expect(result.subscriptions == 1)
        #expect(result.files == 4)
        let index = try MirrorIndex(path: fixture.root.indexPath)
        #expect(try index.subscriptions().first?.id == subscription.id)
        let report = try await MirrorSync(
            root: fixture.root, index: index, server: nil,
            transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 1))
        ).run()
        #expect(report.downloaded.isEmpty, "\(report.downloaded)")
        #expect(report.written.isEmpty, "\(report.written)")
        #expect(fixture.server.requests(to: "/media/ep5.mp3").count == 1)
    }
}

@Suite struct EnclosureSchemeTests {
    @Test func anEnclosureThatIsNotHTTPIsRefusedWithOneLineNotDroppedSilently() async throws {
        let fixture = try PodcastSyncTests.Fixture()
        defer { fixture.tearDown() }
        let base = fixture.server.baseURL
        fixture.server.setFile("/media/ok.mp3", contents: fixture.audio("ok"), contentType: "audio/mpeg")
        let feed = """
            <rss version="2.0"><channel><title>Schemes</title>
            <item><title>Local</title><guid>local-file</guid><pubDate>03 Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="file:///etc/hostname" type="audio/mpeg"/></item>
            <item><title>FTP</title><guid>over-ftp</guid><pubDate>02 Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="ftp://127.0.0.1/x.mp3" type="audio/mpeg"/></item>
            <item><title>Fine</title><guid>fine</guid><pubDate>01 Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(base)/media/ok.mp3" type="audio/mpeg"/></item>
            <item><title>Text only</title><guid>no-enclosure</guid></item>
            </channel></rss>
            """
        fixture.server.setFile("/feeds/schemes.xml", contents: Array(feed.utf8), contentType: "application/rss+xml")
        let subscription = try await fixture.subscribe("/feeds/schemes.xml", retention: .all)
        let report = try await fixture.sync()
        #expect(report.downloaded == ["Downloads/\(subscription.id)/fine.mp3"])
        #expect(report.rejected.count == 2, "\(report.rejected)")
        #expect(report.rejected.filter { $0.contains("\"local-file\"") && $0.contains("\"file\"") }.count == 1)
        #expect(report.rejected.filter { $0.contains("\"over-ftp\"") && $0.contains("\"ftp\"") }.count == 1)
        #expect(!report.rejected.contains { $0.contains("/etc/hostname") })
        // Outside what the retention keeps, nothing is said.
        fixture.server.setFile(
            "/feeds/schemes.xml", contents: Array(feed.utf8), contentType: "application/rss+xml", etag: "again")
        try fixture.index.save(
            Subscription(
                id: subscription.id, feedURL: subscription.feedURL, title: subscription.title, retention: .newest(1),
                addedAt: subscription.addedAt), feed: nil)
        #expect(try await fixture.sync().rejected.count == 1)
    }
}
