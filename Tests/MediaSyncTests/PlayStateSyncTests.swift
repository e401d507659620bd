import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import Testing

/// Played state both ways, rolling selections, played cleanup and a storage budget, over loopback to
/// the test server answering as each Jellyfin version does.
@Suite struct PlayStateSyncTests {
    static func library() -> TestLibrary {
        TestLibrary(movies: 3, series: 1, seasonsPerSeries: 1, episodesPerSeason: 4, mediaSize: 10_000, seed: 13)
    }

    static let watched = Date(timeIntervalSince1970: 1_790_000_000)

    /// A series' episodes in play order (the library has one season).
    static func episodes(of series: TestItem, in library: TestLibrary) -> [TestItem] {
        library.episodes.filter { $0.seriesId == series.id }.sorted { ($0.indexNumber ?? 0) < ($1.indexNumber ?? 0) }
    }

    static func book(_ fixture: MirrorFixture) -> PlayStateBook {
        Mirror.using(root: fixture.root, index: fixture.index, durable: false).playState
    }

    /// Selects the movie, syncs it, and marks it played here at ``watched``; the book that holds the mark.
    @discardableResult
    static func syncedAndMarkedPlayed(_ movie: TestItem, _ fixture: MirrorFixture) async throws -> PlayStateBook {
        try fixture.select(.movie, movie.id)
        _ = try await fixture.sync()
        return try markPlayed(movie.id, fixture)
    }

    /// Marks the item `id` played offline at ``watched``; returns the book it is marked in.
    @discardableResult
    static func markPlayed(_ id: String, _ fixture: MirrorFixture) throws -> PlayStateBook {
        let book = Self.book(fixture)
        try book.mark(try book.target(id, root: fixture.root), .played, at: Self.watched)
        return book
    }

    /// Selects the library's series with a window of the next two unplayed episodes, each removed once played, and
    /// syncs; returns the series' episodes.
    static func syncedWindowOfTwo(_ fixture: MirrorFixture, _ library: TestLibrary) async throws -> [TestItem] {
        let series = library.series[0]
        try fixture.select(.series, series.id, nextUnplayed: 2, deletePlayedAfter: 0)
        _ = try await fixture.sync()
        return Self.episodes(of: series, in: library)
    }

    /// The movie's `metadata.json` as written.
    static func metadataUserData(_ fixture: MirrorFixture, _ id: String) -> [String: Any]? {
        guard let path = fixture.tree().first(where: { $0.hasSuffix("metadata.json") && $0.contains(id) }) else {
            return nil
        }
        return (fixture.json(path)?["item"] as? [String: Any])?["UserData"] as? [String: Any]
    }

    /// A client of the same user at an address nothing answers: the server is down.
    static func unreachable(_ fixture: MirrorFixture) throws -> JellyfinClient {
        try JellyfinClient(
            serverURL: "http://127.0.0.1:9", identity: ClientIdentity(device: "tests", deviceId: "d"),
            http: HTTPClient(retryPolicy: RetryPolicy(maxAttempts: 1))
        )
        .signedIn(accessToken: fixture.client.accessToken ?? "", userId: fixture.client.userId)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func anOfflineMarkIsSentOnceWhenTheServerIsBack(profile: JellyfinProfile) async throws {
        try await MirrorFixture.with(Self.library(), profile: profile) { fixture, library in
            let movie = library.movies[0]
            try await Self.syncedAndMarkedPlayed(movie, fixture)

            let offline = try await fixture.sync(SyncOptions(), server: try Self.unreachable(fixture))
            #expect(offline.sourceErrors.contains { $0.contains("play state of 1 items not sent") })
            #expect(try fixture.index.playEvents(state: .pending).count == 1)
            #expect(fixture.server.userData(of: movie.id)?.played == false)

            let online = try await fixture.sync()
            #expect(online.playStateSent == 1)
            let data = try #require(fixture.server.userData(of: movie.id))
            #expect(data.played && data.playCount == 1 && data.lastPlayedDate == Self.watched)
            // 10.8 has only the user's route; 10.9+ the unified one.
            let route =
                profile == .v10_8 ? "/Users/\(library.userId)/PlayedItems/\(movie.id)" : "/UserPlayedItems/\(movie.id)"
            #expect(fixture.server.requests(to: route).filter { $0.method == "POST" }.count == 1)
            // The server's state comes back into metadata.json although the item's Etag did not change.
            #expect(Self.metadataUserData(fixture, movie.id)?["Played"] as? Bool == true)

            let again = try await fixture.sync()
            #expect(again.playStateSent == 0)
            #expect(fixture.server.userData(of: movie.id)?.playCount == 1)
            #expect(fixture.server.requests(to: route).filter { $0.method == "POST" }.count == 1)
            #expect(try fixture.index.playEvents(state: .pending).isEmpty)
        }
    }

    @Test func aMarkTheServerAlreadyHasIsNotSentTwice() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try await Self.syncedAndMarkedPlayed(movie, fixture)
            // An earlier sync sent it and was killed before it noted that.
            try await fixture.client.send(.played(at: Self.watched), itemId: movie.id, routes: .unified)
            #expect(fixture.server.userData(of: movie.id)?.playCount == 1)
            let report = try await fixture.sync()
            #expect(report.playStateSent == 0)
            #expect(fixture.server.userData(of: movie.id)?.playCount == 1)
            #expect(fixture.server.requests(to: "/UserPlayedItems/\(movie.id)").count == 1)
            #expect(try fixture.index.playEvents().last?.state == .pushed)
        }
    }

    @Test func aPositionIsSentAsEachVersionTakesIt() async throws {
        for profile in [JellyfinProfile.v10_8, .v10_11] {
            try await MirrorFixture.with(Self.library(), profile: profile) { fixture, library in
                let movie = library.movies[2]
                try fixture.select(.movie, movie.id)
                _ = try await fixture.sync()
                let book = Self.book(fixture)
                let position: Int64 = 12_000_000_000  // 20 minutes of 60
                try book.mark(
                    try book.target(movie.id, root: fixture.root), .position, positionTicks: position, at: Self.watched)
                let report = try await fixture.sync()
                #expect(report.playStateSent == 1)
                let data = try #require(fixture.server.userData(of: movie.id))
                #expect(data.playbackPositionTicks == position)
                if profile == .v10_8 {
                    // A playback-stop report: the server keeps its own date.
                    #expect(
                        fixture.server.requests(to: "/Users/\(library.userId)/PlayingItems/\(movie.id)").map(\.method)
                            == ["DELETE"])
                } else {
                    #expect(data.lastPlayedDate == Self.watched)
                    #expect(fixture.server.requests(to: "/UserItems/\(movie.id)/UserData").map(\.method) == ["POST"])
                }
            }
        }
    }

    @Test func aConflictGoesToTheNewerDateAndIsReported() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let (first, second) = (library.movies[0], library.movies[2])
            try fixture.select(.movie, first.id)
            try fixture.select(.movie, second.id)
            _ = try await fixture.sync()
            let book = Self.book(fixture)
            // Unplayed here at t0, then watched on the television an hour later: the server wins.
            fixture.server.setUserData(
                of: first.id,
                TestUserData(
                    played: true, playCount: 3, playbackPositionTicks: 0,
                    lastPlayedDate: Self.watched.addingTimeInterval(3600)))
            try book.mark(try book.target(first.id, root: fixture.root), .unplayed, at: Self.watched)
            // Watched here at t0 + 2 h; the server last saw it played at t0 − 1 day: this side wins.
            fixture.server.setUserData(
                of: second.id,
                TestUserData(
                    played: false, playCount: 1, playbackPositionTicks: 77,
                    lastPlayedDate: Self.watched.addingTimeInterval(-86_400)))
            try book.mark(
                try book.target(second.id, root: fixture.root), .played, at: Self.watched.addingTimeInterval(7200))

            let report = try await fixture.sync()
            #expect(report.playStateSent == 1)
            #expect(fixture.server.userData(of: first.id)?.played == true)
            #expect(fixture.server.userData(of: first.id)?.playCount == 3)
            #expect(report.playState.contains { $0.contains(first.id) && $0.contains("the server's state is kept") })
            #expect(fixture.server.userData(of: second.id)?.played == true)
            #expect(fixture.server.userData(of: second.id)?.playCount == 2)
            #expect(report.playState.contains { $0.contains(second.id) && $0.contains("replaced it") })
            let states = Dictionary(try fixture.index.playEvents().map { ($0.itemId, $0.state) }) { _, last in last }
            #expect(states[first.id] == .lost && states[second.id] == .pushed)
        }
    }

    @Test func anEventForAnItemGoneFromTheServerIsDroppedWithOneLine() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try await Self.syncedAndMarkedPlayed(movie, fixture)
            fixture.server.updateLibrary { $0.removeItem(withId: movie.id) }
            let report = try await fixture.sync()
            #expect(report.playState.filter { $0.contains(movie.id) }.count == 1)
            #expect(try fixture.index.playEvents().last?.state == .dropped)
            // Nothing was sent to a route that would answer 404 (or 500 on 10.8).
            #expect(fixture.server.requests(to: "/UserPlayedItems/\(movie.id)").isEmpty)
        }
    }

    @Test func aShortAnswerIsNoProofThatAnItemIsGone() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try await Self.syncedAndMarkedPlayed(movie, fixture)
            // The batch question by id comes back empty (a proxy, a server glitch): the item is asked for alone.
            fixture.server.inject(
                .body(
                    status: 200, contentType: "application/json",
                    bytes: Array(#"{"Items":[],"TotalRecordCount":0,"StartIndex":0}"#.utf8)),
                path: "/Items")
            let report = try await fixture.sync()
            #expect(report.playStateSent == 1)
            #expect(fixture.server.userData(of: movie.id)?.played == true)
            #expect(try fixture.index.playEvents().last?.state == .pushed)
        }
    }

    @Test func aRefusedMarkStaysPendingAndIsSentByALaterSync() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try await Self.syncedAndMarkedPlayed(movie, fixture)
            fixture.server.inject(.status(403), path: "/UserPlayedItems/\(movie.id)")
            let refused = try await fixture.sync()
            #expect(refused.hasEssentialFailures)
            #expect(refused.sourceErrors.filter { $0.contains("refused the played state") }.count == 1)
            #expect(try fixture.index.playEvents(state: .pending).count == 1)
            // Meanwhile the metadata written shows the mark made here.
            #expect(Self.metadataUserData(fixture, movie.id)?["Played"] as? Bool == true)
            let later = try await fixture.sync()
            #expect(later.playStateSent == 1)
            #expect(fixture.server.userData(of: movie.id)?.playCount == 1)
        }
    }

    /// A rolling window: the episode watched offline leaves and the next arrives in the same sync, without
    /// `--delete`, once the server has the played state.
    @Test func aWatchedEpisodeMakesRoomForTheNextInOneSync() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            // The first episode is played on the server (generated so); the window is the next two.
            let episodes = try await Self.syncedWindowOfTwo(fixture, library)
            func held(_ episode: TestItem) -> Bool {
                fixture.tree().contains { $0.contains(episode.id) && $0.hasSuffix(".mkv") }
            }
            #expect(!held(episodes[0]) && held(episodes[1]) && held(episodes[2]) && !held(episodes[3]))

            try Self.markPlayed(episodes[1].id, fixture)
            let report = try await fixture.sync(SyncOptions(), now: Self.watched.addingTimeInterval(60))
            #expect(report.playStateSent == 1)
            #expect(!held(episodes[1]) && held(episodes[2]) && held(episodes[3]))
            #expect(report.deleted.contains { $0.contains(episodes[1].id) })
            #expect(fixture.server.userData(of: episodes[1].id)?.played == true)
        }
    }

    @Test func nothingWatchedOfflineLeavesBeforeTheServerHasIt() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let episodes = try await Self.syncedWindowOfTwo(fixture, library)
            try Self.markPlayed(episodes[1].id, fixture)
            fixture.server.inject(.status(503), path: "/UserPlayedItems/\(episodes[1].id)", count: 10)
            let report = try await fixture.sync(SyncOptions(delete: true), now: Self.watched.addingTimeInterval(60))
            #expect(report.playStateSent == 0)
            // Kept even with --delete; the window still moved on (the offline mark applies over the listing).
            #expect(fixture.tree().contains { $0.contains(episodes[1].id) && $0.hasSuffix(".mkv") })
            #expect(fixture.tree().contains { $0.contains(episodes[3].id) && $0.hasSuffix(".mkv") })
            #expect(!report.deleted.contains { $0.contains(episodes[1].id) })
        }
    }

    @Test func aGracePeriodKeepsAPlayedEpisodeUntilItPasses() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let series = library.series[0]
            let episodes = Self.episodes(of: series, in: library)
            try fixture.select(.series, series.id, deletePlayedAfter: 86_400)
            _ = try await fixture.sync()
            try Self.markPlayed(episodes[2].id, fixture)
            let soon = try await fixture.sync(SyncOptions(delete: true), now: Self.watched.addingTimeInterval(3600))
            #expect(!soon.deleted.contains { $0.contains(episodes[2].id) })
            #expect(fixture.tree().contains { $0.contains(episodes[2].id) && $0.hasSuffix(".mkv") })
            // --max-delete counts played cleanup too.
            let capped = try await fixture.sync(
                SyncOptions(maxDelete: 0), now: Self.watched.addingTimeInterval(2 * 86_400))
            #expect(capped.deleted.isEmpty && capped.deletionAborted != nil)
            let later = try await fixture.sync(SyncOptions(), now: Self.watched.addingTimeInterval(2 * 86_400))
            #expect(later.deleted.contains { $0.contains(episodes[2].id) && $0.hasSuffix(".mkv") })
            #expect(!fixture.tree().contains { $0.contains(episodes[2].id) })
            // Other episodes were never touched.
            #expect(fixture.tree().contains { $0.contains(episodes[3].id) && $0.hasSuffix(".mkv") })
        }
    }

    @Test func aBudgetFillsInPriorityOrderAndNeverDeletes() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movies = library.movies
            try fixture.select(.movie, movies[0].id, addedAt: "2026-01-01T00:00:00Z")
            try fixture.select(.movie, movies[1].id, addedAt: "2026-01-02T00:00:00Z")
            try fixture.select(.movie, movies[2].id, priority: 1, addedAt: "2026-01-03T00:00:00Z")
            // Room for one movie and its images, not two.
            let size = Int64(library.mediaBytes(forMediaSourceId: movies[2].mediaSources[0].id)?.count ?? 0)
            let first = try await fixture.sync(SyncOptions(budget: size + size / 2))
            func held(_ item: TestItem) -> Bool {
                fixture.tree().contains { $0.contains(item.id) && $0.hasSuffix(".mkv") }
            }
            #expect(held(movies[2]) && !held(movies[0]) && !held(movies[1]))
            #expect(first.waiting.count == 2)
            #expect(first.waiting.first?.contains(movies[0].id) == true)
            #expect(first.waitingBytes > 0)
            // A budget smaller than what is held deletes nothing and fetches nothing.
            let tight = try await fixture.sync(SyncOptions(budget: 1))
            #expect(tight.deleted.isEmpty && tight.downloaded.isEmpty && held(movies[2]))
            #expect(tight.waiting.count == 2)
            // Without a budget, the rest arrives.
            let open = try await fixture.sync()
            #expect(open.waiting.isEmpty && held(movies[0]) && held(movies[1]))
        }
    }

    @Test func playedPodcastEpisodesLeaveAfterTheirGracePeriod() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, _ in
            let episodes = (1...3).map {
                PodcastSyncTests.Episode(guid: "ep-\($0)", title: "Episode \($0)", day: $0, path: "/pod/ep\($0).mp3")
            }
            for episode in episodes {
                fixture.server.setFile(
                    episode.path, contents: Array(repeating: 7, count: 3000) + Array(episode.guid.utf8),
                    contentType: "audio/mpeg")
            }
            fixture.server.setFile(
                "/pod/feed.xml",
                contents: PodcastSyncTests.feed(title: "Pod", episodes: episodes, base: fixture.server.baseURL),
                contentType: "application/rss+xml", etag: "\"f1\"")
            let subscription = try await Subscriptions(index: fixture.index, client: HTTPClient()).add(
                url: fixture.server.baseURL + "/pod/feed.xml", retention: .all, deletePlayedAfter: 3600)
            _ = try await fixture.sync(SyncOptions(), now: Self.watched)
            let book = Self.book(fixture)
            let first = try book.target(PodcastLayout.episodeId(guid: "ep-1"), root: fixture.root)
            #expect(first.isPodcast)
            let event = try book.mark(first, .played, at: Self.watched)
            #expect(event.state == .local)
            func held(_ guid: String) -> Bool {
                fixture.tree().contains { $0.contains(PodcastLayout.episodeId(guid: guid)) && $0.hasSuffix(".mp3") }
            }
            let soon = try await fixture.sync(SyncOptions(), now: Self.watched.addingTimeInterval(60))
            #expect(soon.deleted.isEmpty && held("ep-1"))
            let later = try await fixture.sync(SyncOptions(), now: Self.watched.addingTimeInterval(7200))
            #expect(!held("ep-1") && held("ep-2") && held("ep-3"))
            #expect(later.deleted.contains { $0.contains(PodcastLayout.episodeId(guid: "ep-1")) })
            // Nothing was sent anywhere: a podcast has no server.
            #expect(later.playStateSent == 0)
            #expect(try fixture.index.playEvents().last?.state == .local)
            #expect(try fixture.index.subscriptions().first { $0.id == subscription.id }?.deletePlayedAfter == 3600)
        }
    }
}
