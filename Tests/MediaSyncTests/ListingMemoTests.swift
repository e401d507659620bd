import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// A sync that finds the Jellyfin side where the last complete one left it asks the same questions, compares the
/// answers and does nothing more for it; anything that changed makes it list, plan and compose as always.
@Suite struct ListingMemoTests {
    /// The golden library's movies view and first series selected, synced once.
    private func synced(_ fixture: MirrorFixture, _ library: TestLibrary) async throws -> SyncReport {
        try fixture.select(.library, library.moviesViewId)
        try fixture.select(.series, library.series[0].id)
        let first = try await fixture.sync()
        #expect(first.failed.isEmpty, "\(first.failed)")
        #expect(!first.listingUnchanged)
        return first
    }

    @Test func aSyncWithNothingToDoAsksTheSameQuestionsAndListsNothingElse() async throws {
        try await MirrorFixture.with { fixture, library in
            let first = try await synced(fixture, library)
            let memo = try #require(try fixture.index.listingMemo())
            #expect(memo.wanted == first.downloaded.count)
            let tree = fixture.tree()
            fixture.server.resetStatistics()
            let second = try await fixture.sync(delete: true)
            #expect(second.listingUnchanged)
            #expect(second.changedNothing)
            #expect(second.unchanged == first.downloaded.count)
            #expect(fixture.tree() == tree)
            // The memo's questions, each once, and nothing else.
            let asked = fixture.server.allRequests.map { "\($0.method) \($0.path)" }
            #expect(asked.count == memo.exchanges.count, "\(asked)")
            #expect(asked.allSatisfy { $0.hasPrefix("GET ") })
            // Found unchanged again: a hit leaves the memo as it was.
            #expect(try fixture.index.listingMemo() == memo)
            #expect(try await fixture.sync().listingUnchanged)
        }
    }

    @Test func aChangeOnTheServerIsListedAndTheAnswersAreNotAskedTwice() async throws {
        try await MirrorFixture.with { fixture, library in
            _ = try await synced(fixture, library)
            let episode = try #require(
                library.items.first { $0.type == "Episode" && $0.seriesId == library.series[0].id })
            fixture.server.updateLibrary { library in
                guard let position = library.items.firstIndex(where: { $0.id == episode.id }) else { return }
                library.items[position].name = "Renamed on the server"
            }
            fixture.server.resetStatistics()
            let report = try await fixture.sync()
            #expect(!report.listingUnchanged)
            #expect(report.failed.isEmpty, "\(report.failed)")
            #expect(report.written.contains { $0.contains(library.series[0].id) }, "\(report.written)")
            // The replay's answers were used by the listing: no URL was asked twice.
            let asked = fixture.server.allRequests.filter { $0.method == "GET" }.map {
                $0.path + "?" + $0.query.description
            }
            #expect(Set(asked).count == asked.count, "\(asked)")
            // The new answers are the memo now, and the next sync finds them unchanged.
            #expect(try await fixture.sync().listingUnchanged)
        }
    }

    @Test func aHeldFileGoneOrChangedLocallyIsFetchedAgain() async throws {
        try await MirrorFixture.with { fixture, library in
            _ = try await synced(fixture, library)
            let media = try #require(fixture.tree().first { $0.hasSuffix(".mkv") || $0.hasSuffix(".mp4") })
            try FileManager.default.removeItem(atPath: fixture.root.path + "/" + media)
            let report = try await fixture.sync()
            #expect(!report.listingUnchanged)
            #expect(report.downloaded == [media])
            #expect(try await fixture.sync().listingUnchanged)
            // The same size, other bytes: a size is what planning compares, as without the memo.
            let image = try #require(fixture.tree().first { $0.contains("/Images/") })
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: fixture.root.path + "/" + image))
            let again = try await fixture.sync()
            #expect(!again.listingUnchanged)
            #expect(again.downloaded == [image])
        }
    }

    @Test func whatTheListingDependsOnInTheIndexForgetsTheMemo() async throws {
        try await MirrorFixture.with { fixture, library in
            _ = try await synced(fixture, library)
            #expect(try fixture.index.listingMemo() != nil)
            // A selection added: forgotten by the index itself, whatever wrote it.
            try fixture.select(.movie, library.movies[0].id, allVersions: true)
            #expect(try fixture.index.listingMemo() == nil)
            let report = try await fixture.sync()
            #expect(!report.listingUnchanged)
            #expect(!report.downloaded.isEmpty)
            #expect(try fixture.index.listingMemo() != nil)
            // A play event recorded here: forgotten too.
            _ = try fixture.index.record(PlayEvent(itemId: library.movies[1].id, kind: .played, at: Date()))
            #expect(try fixture.index.listingMemo() == nil)
        }
    }

    @Test func aPodcastFileRecordKeepsItAndAMediaRecordForgetsIt() async throws {
        try await MirrorFixture.with { fixture, library in
            _ = try await synced(fixture, library)
            let memo = try #require(try fixture.index.listingMemo())
            func entry(_ key: FileKey, _ path: String) -> IndexEntry {
                IndexEntry(
                    file: LocalFile(key: key, path: path, kind: .media, size: 1, signature: "s", itemId: "i"),
                    versionId: nil, mediaSourceId: nil, container: nil, downloadedAt: "2026-01-01T00:00:00Z",
                    taskId: "t", validator: nil, contentHash: nil)
            }
            try fixture.index.record(entry(FileKey(rawValue: "podcast:p:e"), "Podcasts/p/e.mp3"))
            #expect(try fixture.index.listingMemo() == memo)
            try fixture.index.record(entry(.media(itemId: "i", versionId: "i"), "Downloads/i/i-i.mkv"))
            #expect(try fixture.index.listingMemo() == nil)
        }
    }

    /// A dead feed and an enclosure that fails are the podcasts' own troubles: the Jellyfin side still ends complete,
    /// and the next sync finds it unchanged.
    @Test func aPodcastsTroublesDoNotKeepTheJellyfinSideListingInFull() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.movie, library.movies[1].id)
            let feed = """
                <rss version="2.0"><channel><title>P</title><item><title>E</title><guid>e-1</guid>
                <enclosure url="\(fixture.server.baseURL)/pod/gone.mp3" type="audio/mpeg"/></item></channel></rss>
                """
            fixture.server.setFile("/pod/feed.xml", contents: Array(feed.utf8))
            try await Subscriptions(index: fixture.index, client: HTTPClient()).add(
                url: fixture.server.baseURL + "/pod/feed.xml", retention: .all)
            // Never set on the server: every request for it is answered 404.
            let first = try await fixture.sync()
            #expect(first.failed.contains { $0.message.contains("404") }, "\(first.failed)")
            #expect(!first.listingUnchanged)
            #expect(try fixture.index.listingMemo() != nil)
            let second = try await fixture.sync()
            #expect(second.listingUnchanged)
            #expect(second.failed.contains { $0.message.contains("404") }, "\(second.failed)")
            #expect(second.downloaded.isEmpty)
        }
    }

    /// A Jellyfin file that failed keeps the memo from being kept: the next sync lists in full and fetches it.
    @Test func aJellyfinFileThatFailedListsInFullNextTime() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try fixture.select(.movie, movie.id)
            fixture.server.inject(.status(404), path: "/Items/\(movie.mediaSources[0].id)/Download")
            let first = try await fixture.sync()
            #expect(!first.failed.isEmpty)
            #expect(try fixture.index.listingMemo() == nil)
            fixture.server.clearFaults()
            let second = try await fixture.sync()
            #expect(!second.listingUnchanged)
            #expect(second.failed.isEmpty, "\(second.failed)")
            #expect(second.downloaded.count == 1)
            #expect(try await fixture.sync().listingUnchanged)
        }
    }

    @Test func aMemoNamingAnotherServerIsNeverAsked() async throws {
        try await MirrorFixture.with { fixture, library in
            _ = try await synced(fixture, library)
            let memo = try #require(try fixture.index.listingMemo())
            // The same questions, addressed elsewhere: the token would go with them.
            var elsewhere = memo
            elsewhere.exchanges = memo.exchanges.map {
                var exchange = $0
                exchange.url = exchange.url.replacingOccurrences(of: fixture.server.baseURL, with: "http://127.0.0.2:9")
                return exchange
            }
            try fixture.index.saveListingMemo(elsewhere)
            let sync = MirrorSync(root: fixture.root, index: fixture.index, server: fixture.client)
            let replay = await sync.replay(elsewhere, server: fixture.client)
            guard case .unanswered = replay else {
                Issue.record("a memo naming another server was replayed: \(replay)")
                return
            }
            fixture.server.resetStatistics()
            let report = try await fixture.sync()
            #expect(!report.listingUnchanged)
            #expect(report.changedNothing)
        }
    }
}
