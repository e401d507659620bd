import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncServer
import MediaSyncTestServer
import Testing

/// What real Jellyfin servers answer that our own test server did not, and what the mirror must do
/// (the table in docs/jellyfin-versions.md).
@Suite struct ConfirmedDeletionTests {
    /// Ten movies in one library, listed three a page, sorted by name as the client asks.
    private static func library() -> TestLibrary {
        TestLibrary(movies: 10, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 2_000, seed: 7)
    }

    /// The movies in the order the listing returns them (`sortBy=SortName,DateCreated`).
    private static func sorted(_ library: TestLibrary) -> [TestItem] {
        library.movies.sorted { ($0.name.lowercased(), $0.dateCreated) < ($1.name.lowercased(), $1.dateCreated) }
    }

    private static func held(_ fixture: MirrorFixture, _ movie: TestItem) -> Bool {
        fixture.tree().contains { $0.hasPrefix("Downloads/\(movie.id)/\(movie.id)-") && $0.hasSuffix(".mkv") }
    }

    enum Scan: String, CaseIterable, Sendable {
        /// An early item is deleted after page 1: every later item moves up one place, one is skipped.
        case deleteBeforeThePage
        /// A late item is renamed to sort first after page 1: it is never listed, another is listed twice.
        case renameToTheFront
    }

    @Test(arguments: Scan.allCases)
    func aLibraryScanDuringTheListingDeletesNothingStillOnTheServer(_ scan: Scan) async throws {
        let library = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.library, library.moviesViewId)
        let first = try await fixture.sync(SyncOptions(delete: true), listingPageSize: 3)
        #expect(first.failed.isEmpty, "\(first.failed)")
        let order = Self.sorted(library)
        #expect(order.allSatisfy { Self.held(fixture, $0) })

        let removed = order[0]
        let renamed = order[8]
        fixture.server.scanDuringListing(afterPages: 1) { library in
            switch scan {
            case .deleteBeforeThePage:
                library.removeItem(withId: removed.id)
            case .renameToTheFront:
                if let index = library.items.firstIndex(where: { $0.id == renamed.id }) {
                    library.items[index].name = "AAA moved by a scan"
                }
            }
        }
        fixture.server.resetStatistics()
        let during = try await fixture.sync(SyncOptions(delete: true), listingPageSize: 3)
        // Nothing of an item still on the server is deleted.
        #expect(during.deleted.isEmpty, "\(during.deleted)")
        #expect(order.allSatisfy { Self.held(fixture, $0) })
        let listings = fixture.server.allRequests.filter {
            $0.path == "/Items" && $0.queryValue("parentId") != nil && $0.queryValue("ids") == nil
        }
        #expect(listings.allSatisfy { $0.queryValue("sortBy") == "SortName,DateCreated" })
        switch scan {
        case .deleteBeforeThePage:
            // The item after the first page was skipped: absent, asked about by id, still there, kept.
            let skipped = order[3]
            #expect(
                during.keptUnconfirmed.count == 1 && during.keptUnconfirmed[0].contains(skipped.id),
                "\(during.keptUnconfirmed)")
            let asked = fixture.server.allRequests.filter { $0.path == "/Items" && $0.queryValue("ids") != nil }
            #expect(asked.contains { $0.queryValue("ids")?.contains(skipped.id) == true })
        case .renameToTheFront:
            // Fewer distinct items than TotalRecordCount: listed again, which finds the moved item; nothing to ask.
            #expect(listings.filter { $0.queryValue("startIndex") == "0" }.count == 2)
            #expect(during.keptUnconfirmed.isEmpty, "\(during.keptUnconfirmed)")
        }

        // The next sync sees a settled library: the deleted item goes (confirmed gone by id), the rest stays.
        let after = try await fixture.sync(SyncOptions(delete: true), listingPageSize: 3)
        #expect(after.keptUnconfirmed.isEmpty, "\(after.keptUnconfirmed)")
        #expect(after.failed.isEmpty, "\(after.failed)")
        for movie in order {
            let gone = scan == .deleteBeforeThePage && movie.id == removed.id
            #expect(Self.held(fixture, movie) == !gone, "\(movie.name)")
        }
        if scan == .deleteBeforeThePage {
            #expect(after.deleted.contains { $0.hasPrefix("Downloads/\(removed.id)/") })
            #expect(!fixture.tree().contains { $0.hasPrefix("Downloads/\(removed.id)/") })
        } else {
            #expect(after.deleted.isEmpty)
        }
    }
}

@Suite struct DeselectionTests {
    @Test func aDeselectedMovieGoesWithDeleteWhileALibraryOfShowsStaysSelected() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try fixture.select(.movie, movie.id)
            try fixture.select(.library, library.showsViewId)
            #expect(try await fixture.sync().failed.isEmpty)
            try fixture.index.unselect(id: movie.id)
            fixture.server.resetStatistics()
            let report = try await fixture.sync(delete: true)
            // Asked by id: still on the server, but not below the selected library: deselected, deleted.
            #expect(report.keptUnconfirmed.isEmpty, "\(report.keptUnconfirmed)")
            #expect(report.deleted.contains { $0.hasPrefix("Downloads/\(movie.id)/") })
            let asked = fixture.server.allRequests.filter { $0.path == "/Items" && $0.queryValue("ids") == movie.id }
            #expect(asked.map { $0.queryValue("parentId") } == [nil, library.showsViewId])
            #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(library.series[0].id)/") })
        }
    }

    @Test func anEpisodeTheListingMissesIsKeptWhileItsSeriesIsSelected() async throws {
        try await MirrorFixture.with { fixture, library in
            let series = library.series[0]
            try fixture.select(.series, series.id)
            #expect(try await fixture.sync().failed.isEmpty)
            let listed = try await fixture.client.episodes(seriesId: series.id)
            let missed = try #require(listed.first)
            // The episode listing leaves it out (a scan moving it between two page reads); asked by id, it is there.
            let rest = listed.dropFirst().map(\.raw)
            var body: [UInt8] = []
            JSONWriter.write(
                .object([
                    "Items": .array(rest), "TotalRecordCount": .number(Double(rest.count)), "StartIndex": .number(0),
                ]),
                indent: 0, into: &body)
            fixture.server.inject(
                .body(status: 200, contentType: "application/json", bytes: body), path: "/Shows/\(series.id)/Episodes")
            let report = try await fixture.sync(delete: true)
            #expect(report.deleted.isEmpty, "\(report.deleted)")
            #expect(
                report.keptUnconfirmed.count == 1 && report.keptUnconfirmed[0].contains(missed.id),
                "\(report.keptUnconfirmed)")
            #expect(fixture.tree().contains { $0.contains("/\(missed.id)-") && $0.hasSuffix(".mkv") })
            // Settled again: nothing to keep, nothing deleted.
            let next = try await fixture.sync(delete: true)
            #expect(next.deleted.isEmpty && next.keptUnconfirmed.isEmpty)
        }
    }
}

/// A 401 is not always a bad token (Jellyfin answers one for a library the user may no longer access too); a
/// library or item the server does not know is reported.
@Suite struct ListingRefusalTests {
    private static func library() -> TestLibrary {
        TestLibrary(movies: 3, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 2_000, seed: 9)
    }

    /// Runs `body` with a mirror of ``library()`` that selected the movies library (and the shows library with
    /// `shows`) and synced them, failing nothing.
    private static func withSyncedLibraries(
        shows: Bool, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (MirrorFixture, TestLibrary) async throws -> Void
    ) async throws {
        try await MirrorFixture.with(library()) { fixture, library in
            try fixture.select(.library, library.moviesViewId)
            if shows { try fixture.select(.library, library.showsViewId) }
            #expect(try await fixture.sync().failed.isEmpty, sourceLocation: sourceLocation)
            try await body(fixture, library)
        }
    }

    @Test func aLibraryTheUserMayNoLongerAccessIsReportedKeptAndTheOthersSync() async throws {
        try await Self.withSyncedLibraries(shows: true) { fixture, library in
            let before = fixture.tree()
            // The administrator takes the movies away; a new episode arrives in the shows.
            let season = library.seasons[0]
            let episode = TestItem(
                id: "e0000000000000000000000000000003", name: "Episode 3", type: "Episode", parentId: season.id,
                seriesId: library.series[0].id, seriesName: library.series[0].name, seasonId: season.id,
                seasonName: season.name,
                indexNumber: 3, parentIndexNumber: 1, path: "/media/Shows/e3.mkv",
                mediaSources: [
                    TestMediaSource(
                        id: "e0000000000000000000000000000003", name: "e3", path: "/media/Shows/e3.mkv", size: 3_000,
                        etag: "etag-e3", runTimeTicks: 1, lastModified: Date(timeIntervalSince1970: 1_700_000_000))
                ], dateCreated: Date(timeIntervalSince1970: 1_700_000_000), etag: "etag-item-e3", isFolder: false)
            fixture.server.updateLibrary {
                $0.inaccessibleViews = [library.moviesViewId]
                $0.items.append(episode)
            }
            fixture.server.resetStatistics()
            let report = try await fixture.sync(delete: true)
            // The token holds (`/Users/Me` 200): the library is reported, the sign-in kept, nothing of it deleted.
            #expect(!report.needsSignIn)
            #expect(report.sourceErrors.count == 1, "\(report.sourceErrors)")
            #expect(report.sourceErrors.first?.contains("not accessible") == true)
            #expect(report.sourceErrors.first?.contains("not permitted to access Library Movies") == true)
            #expect(report.hasEssentialFailures)
            #expect(report.deleted.isEmpty, "\(report.deleted)")
            #expect(!fixture.server.requests(to: "/Users/Me").isEmpty)
            // The other selection synced: the new episode is there.
            #expect(report.downloaded.contains { $0.contains(episode.id) && $0.hasSuffix(".mkv") })
            #expect(Set(before).isSubset(of: Set(fixture.tree())))
        }
    }

    @Test func aRevokedTokenAsksForANewSignIn() async throws {
        try await Self.withSyncedLibraries(shows: false) { fixture, library in
            let before = fixture.tree()
            fixture.server.updateLibrary { $0.accessToken = "revoked" }
            let report = try await fixture.sync(delete: true)
            #expect(report.needsSignIn)
            #expect(report.deleted.isEmpty)
            #expect(fixture.tree() == before)
        }
    }

    @Test func aDeletedLibraryIsReportedAndItsFilesGoOnlyOnceConfirmedGone() async throws {
        try await Self.withSyncedLibraries(shows: true) { fixture, library in
            // The movies library is removed with its items, except one movie moved to another library first.
            let moved = library.movies[0]
            fixture.server.updateLibrary { library in
                let view = library.moviesViewId
                if let index = library.items.firstIndex(where: { $0.id == moved.id }) {
                    library.items[index].parentId = "f0000000000000000000000000000001"
                }
                library.removeItem(withId: view)
                library.views.removeAll { $0.id == view }
                library.items.removeAll { $0.parentId == view }
            }
            let report = try await fixture.sync(delete: true)
            #expect(!report.needsSignIn)
            #expect(report.sourceErrors.count == 1 && report.sourceErrors[0].contains("400"), "\(report.sourceErrors)")
            // Asked by id: the removed movies are gone and go; the moved one is still on the server and stays.
            for movie in library.movies {
                let held = fixture.tree().contains { $0.hasPrefix("Downloads/\(movie.id)/") && $0.hasSuffix(".mkv") }
                #expect(held == (movie.id == moved.id), "\(movie.name)")
            }
            #expect(report.keptUnconfirmed.count == 1 && report.keptUnconfirmed[0].contains(moved.id))
        }
    }
}

/// Items that cannot become a file (a remote stream, a disc folder, anything a user may not download) are
/// recognised before downloading.
@Suite struct UndownloadableItemTests {
    private static func library() -> TestLibrary {
        var library = TestLibrary(
            movies: 3, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 2_000, seed: 11)
        let strm = library.movies[1].mediaSources[0].id
        let disc = library.movies[2].mediaSources[0].id
        library.updateMediaSource(strm) { $0.strmURL = "https://cdn.example.org/movie.mp4" }
        library.updateMediaSource(disc) { $0.videoType = "Dvd" }
        return library
    }

    @Test func aStrmAndADiscFolderAreReportedNeverFetchedNeverPlaced() async throws {
        let library = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.library, library.moviesViewId)
        for _ in 0..<2 {
            fixture.server.resetStatistics()
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            #expect(report.rejected.count == 2, "\(report.rejected)")
            #expect(report.rejected.contains { $0.contains(library.movies[1].name) && $0.contains("remote stream") })
            #expect(
                report.rejected.contains {
                    $0.contains(library.movies[2].name) && $0.contains("a DVD folder") && !$0.contains("Blu-ray")
                })
            for movie in library.movies[1...] {
                #expect(fixture.server.requests(to: "/Items/\(movie.mediaSources[0].id)/Download").isEmpty)
                #expect(!fixture.tree().contains { $0.hasPrefix("Downloads/\(movie.id)/") })
            }
            #expect(
                fixture.tree().contains { $0.hasPrefix("Downloads/\(library.movies[0].id)/") && $0.hasSuffix(".mkv") })
            // Asked for: CanDownload on the listing.
            let listing = fixture.server.allRequests.first { $0.path == "/Items" && $0.queryValue("parentId") != nil }
            #expect(listing?.queryValue("fields")?.contains("CanDownload") == true)
        }
    }

    @Test func theTestServerAnswersLikeJellyfinForThem() async throws {
        let library = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let strm = library.movies[1].mediaSources[0].id
        let disc = library.movies[2].mediaSources[0].id
        let client = HTTPClient()
        var headers = HTTPHeaders()
        headers.add(name: fixture.client.authorizationHeader.name, value: fixture.client.authorizationHeader.value)
        let strmAnswer = try await client.send(
            HTTPRequest(method: "GET", url: fixture.server.baseURL + "/Items/\(strm)/Download", headers: headers))
        #expect(
            strmAnswer.status == 200
                && String(decoding: strmAnswer.body, as: UTF8.self) == "https://cdn.example.org/movie.mp4\n")
        do {
            _ = try await client.send(
                HTTPRequest(method: "GET", url: fixture.server.baseURL + "/Items/\(disc)/Download", headers: headers))
            Issue.record("a disc folder's Download answered 2xx")
        } catch let error as HTTPError {
            #expect(error.status == 400 && error.message.contains("Error processing request."))
        }
        fixture.server.updateLibrary { $0.userMayDownload = false }
        do {
            _ = try await client.send(
                HTTPRequest(method: "GET", url: fixture.server.baseURL + "/Items/\(strm)/Download", headers: headers))
            Issue.record("a Download without permission answered 2xx")
        } catch let error as HTTPError {
            #expect(error.status == 403)
        }
    }

    @Test func aUserWithoutTheDownloadPermissionGetsOneLineNotOne403PerFile() async throws {
        let library = TestLibrary(
            movies: 3, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 2_000, seed: 12)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        fixture.server.updateLibrary { $0.userMayDownload = false }
        try fixture.select(.library, library.moviesViewId)
        try fixture.select(.series, library.series[0].id)
        let report = try await fixture.sync()
        #expect(
            report.sourceErrors.count == 1 && report.sourceErrors[0].contains("may not download"),
            "\(report.sourceErrors)")
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(report.hasEssentialFailures && !report.needsSignIn)
        #expect(!fixture.server.allRequests.contains { $0.path.hasSuffix("/Download") })
        #expect(fixture.tree().isEmpty)
        // Allowed again: the next sync does the job.
        fixture.server.updateLibrary { $0.userMayDownload = true }
        let next = try await fixture.sync()
        #expect(next.sourceErrors.isEmpty && next.failed.isEmpty)
        #expect(fixture.tree().contains { $0.hasSuffix(".mkv") })
    }
}

/// The served bytes are the truth: `MediaSource.Size` comes from the server's database and stays
/// stale until its next scan, while Download serves the file as it is now (`GetVersionInfo` L1111–1130, v10.10.7).
@Suite struct StaleSizeTests {
    @Test(arguments: [-700, 900])
    func aFileReplacedBeforeTheServersScanIsKeptAsServedAndNotFetchedAgain(_ delta: Int) async throws {
        let library = TestLibrary(
            movies: 2, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 4_000, seed: 13)
        let movie = library.movies[1]
        let source = movie.mediaSources[0]
        let served = (0..<(source.size + delta)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        // The file on the server's disk changed; its database row (Size, ETag) did not.
        var changed = library
        changed.updateMediaSource(source.id) { $0.contentOverride = served }
        let fixture = try await MirrorFixture(library: changed)
        defer { fixture.tearDown() }
        try fixture.select(.movie, movie.id)
        let first = try await fixture.sync()
        #expect(first.failed.isEmpty, "\(first.failed)")
        let path = "Downloads/\(movie.id)/\(movie.id)-\(source.id).mkv"
        #expect(fixture.bytes(path) == served)
        let entry = try #require(try fixture.index.entries().first { $0.file.path == path })
        #expect(entry.file.size == Int64(served.count))
        #expect(entry.validator != nil)
        // The next run fetches nothing again and finds nothing damaged.
        fixture.server.resetStatistics()
        let second = try await fixture.sync()
        #expect(second.downloaded.isEmpty && second.failed.isEmpty, "\(second)")
        #expect(fixture.server.requests(to: "/Items/\(source.id)/Download").isEmpty)
        // The dry run plans with the server's Size (the free-space plan), not a refusal.
        let other = TestLibrary(
            movies: 2, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 4_000, seed: 13)
        try fixture.select(.movie, other.movies[0].id)
        let plan = try await fixture.sync(SyncOptions(dryRun: true))
        let planned = plan.planned.first {
            $0.action == "download" && $0.path.hasSuffix("-\(other.movies[0].mediaSources[0].id).mkv")
        }
        #expect(planned?.bytes == Int64(other.movies[0].mediaSources[0].size))
    }

    @Test func anErrorPageInsteadOfTheMediaIsNeverPlaced() async throws {
        let library = TestLibrary(
            movies: 1, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 4_000, seed: 14)
        let movie = library.movies[0]
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.movie, movie.id)
        let page = Array("<html><body>502 Bad Gateway</body></html>".utf8)
        for source in movie.mediaSources {
            fixture.server.inject(
                .body(status: 200, contentType: "text/html", bytes: page), path: "/Items/\(source.id)/Download",
                count: 100)
        }
        let report = try await fixture.sync()
        #expect(report.failed.contains { $0.message.contains("text/html instead of the media") }, "\(report.failed)")
        #expect(!fixture.tree().contains { $0.hasSuffix(".mkv") })
    }
}

/// Kept means usable: an episode kept without `--delete` stays listed in its season and series
/// `metadata.json` until its file is deleted.
@Suite struct KeptEpisodeMetadataTests {
    private func listed(_ fixture: MirrorFixture, _ path: String, episode: String) -> (episode: Bool, version: Bool) {
        let json = fixture.json(path) ?? [:]
        let episodes = (json["episodes"] as? [[String: Any]] ?? []).compactMap { $0["Id"] as? String }
        let versions = (json["versions"] as? [[String: Any]] ?? []).compactMap { $0["itemId"] as? String }
        return (episodes.contains(episode), versions.contains(episode))
    }

    @Test func anEpisodeGoneFromTheServerStaysInTheMetadataWhileItsFileIsKept() async throws {
        let library = TestLibrary(
            movies: 0, series: 1, seasonsPerSeries: 1, episodesPerSeason: 3, mediaSize: 2_000, seed: 15)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let series = library.series[0]
        try fixture.select(.series, series.id)
        #expect(try await fixture.sync().failed.isEmpty)
        let season = "Downloads/\(series.id)/Season-01/metadata.json"
        let seriesFile = "Downloads/\(series.id)/metadata.json"
        let gone = library.episodes[1]
        #expect(listed(fixture, season, episode: gone.id) == (true, true))
        // A new episode arrives (the metadata is rewritten) while one leaves the server.
        fixture.server.updateLibrary { $0.removeItem(withId: gone.id) }
        fixture.server.updateLibrary { library in
            if let index = library.items.firstIndex(where: { $0.id == library.episodes[0].id }) {
                library.items[index].name = "Renamed on the server"
            }
        }
        let kept = try await fixture.sync()
        #expect(kept.extraneous.contains { $0.contains(gone.id) })
        #expect(kept.written.contains(season))
        #expect(listed(fixture, season, episode: gone.id) == (true, true))
        #expect(
            ((fixture.json(seriesFile)?["versions"] as? [[String: Any]]) ?? []).contains {
                $0["itemId"] as? String == gone.id
            })
        // Deleted with --delete (confirmed gone): then it leaves the metadata too.
        let deleted = try await fixture.sync(delete: true)
        #expect(deleted.deleted.contains { $0.contains(gone.id) })
        #expect(listed(fixture, season, episode: gone.id) == (false, false))
        #expect(
            !((fixture.json(seriesFile)?["versions"] as? [[String: Any]]) ?? []).contains {
                $0["itemId"] as? String == gone.id
            })
    }
}

/// The test server answers like each Jellyfin version (its routes, methods and listing order), and the client
/// follows.
@Suite struct ProfileTests {
    private func raw(_ server: TestServer, _ client: JellyfinClient, _ method: String, _ path: String) async -> Int {
        var headers = HTTPHeaders()
        headers.add(name: client.authorizationHeader.name, value: client.authorizationHeader.value)
        do {
            return try await HTTPClient(retryPolicy: RetryPolicy(maxAttempts: 1))
                .send(HTTPRequest(method: method, url: server.baseURL + path, headers: headers)).status
        } catch let error as HTTPError {
            return error.status ?? -1
        } catch {
            return -1
        }
    }

    @Test(arguments: JellyfinProfile.allCases)
    func eachVersionAnswersItsRoutesAndTheClientFollows(_ profile: JellyfinProfile) async throws {
        let library = TestLibrary()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        let server = fixture.server
        let client = fixture.client
        let old = profile == .v10_8
        #expect(try await client.publicSystemInfo().version == profile.version)
        #expect(await raw(server, client, "GET", "/UserViews?userId=\(library.userId)") == (old ? 404 : 200))
        #expect(await raw(server, client, "GET", "/Users/\(library.userId)/Views") == 200)
        #expect(
            await raw(server, client, "GET", "/Items/\(library.movies[0].id)?userId=\(library.userId)")
                == (old ? 405 : 200))
        #expect(await raw(server, client, "POST", "/QuickConnect/Initiate") == (old ? 405 : 200))
        #expect(await raw(server, client, "GET", "/QuickConnect/Initiate") == 200)
        #expect(await raw(server, client, "GET", "/Items/\(library.movies[0].id)/PlaybackInfo") == (old ? 400 : 200))
        // The client takes the route the version has.
        #expect(try await client.userViews().count == 2)
        #expect(try await client.quickConnectInitiate().code?.count == 6)
        #expect(try await client.playbackInfo(itemId: library.movies[0].id).count == 2)
    }

    @Test func tiesInAnyOrderOn1011NeverCostAFileStillOnTheServer() async throws {
        var library = TestLibrary(
            movies: 9, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 1_000, seed: 16)
        for index in library.items.indices { library.items[index].name = "Same Name" }
        let fixture = try await MirrorFixture(library: library, profile: .v10_11)
        defer { fixture.tearDown() }
        try fixture.select(.library, library.moviesViewId)
        var held = Set<String>()
        for _ in 0..<4 {
            // Two items a page, ties shuffled on every request: pages skip and repeat items.
            let report = try await fixture.sync(SyncOptions(delete: true), listingPageSize: 2)
            #expect(report.deleted.isEmpty, "\(report.deleted)")
            #expect(report.failed.isEmpty, "\(report.failed)")
            let now = Set(fixture.tree().filter { $0.hasSuffix(".mkv") })
            #expect(held.isSubset(of: now))
            held = now
        }
        #expect(!held.isEmpty)
    }
}
