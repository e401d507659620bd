import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct JellyfinMirrorTests {
    /// The tree Swiftfin's offline layout prescribes for the golden library, written out from the library itself.
    private func expectedTree(_ library: TestLibrary) -> [String] {
        var paths: [String] = []
        let movie0 = library.movies[0]
        let movie1 = library.movies[1]
        let alternate = "Downloads/\(movie0.id)/\(movie0.id)-"
        for source in movie0.mediaSources {
            paths += [alternate + "\(source.id).mkv", alternate + "\(source.id).2.eng.srt"]
        }
        paths += [
            "Downloads/\(movie0.id)/Images/Primary.jpeg", "Downloads/\(movie0.id)/Images/Backdrop.jpeg",
            "Downloads/\(movie0.id)/metadata.json",
            // The container list "mov,mp4,…" and the MIME type video/mp4 both give .mp4.
            "Downloads/\(movie1.id)/\(movie1.id)-\(movie1.mediaSources[0].id).mp4",
            "Downloads/\(movie1.id)/\(movie1.id)-\(movie1.mediaSources[0].id).2.eng.srt",
            "Downloads/\(movie1.id)/Images/Primary.jpeg", "Downloads/\(movie1.id)/Images/Backdrop.jpeg",
            "Downloads/\(movie1.id)/metadata.json",
        ]
        let series = library.series[0]
        let top = "Downloads/\(series.id)"
        paths += [
            "\(top)/metadata.json", "\(top)/Images/Series-\(series.id)-Primary.jpeg",
            "\(top)/Images/Series-\(series.id)-Backdrop.jpeg",
        ]
        for season in library.seasons {
            let number = season.indexNumber ?? -1
            let folder = "\(top)/Season-\(number < 10 ? "0" : "")\(number)"
            paths += ["\(folder)/metadata.json", "\(folder)/Images/Season-\(season.id)-Primary.jpeg"]
            for episode in library.episodes where episode.seasonId == season.id && episode.locationType != "Virtual" {
                paths.append("\(folder)/Images/Episode-\(episode.id)-Primary.jpeg")
                for source in episode.mediaSources {
                    let ext = source.path.hasSuffix("episode-without-extension") ? "avi" : "mkv"
                    paths += [
                        "\(folder)/\(episode.id)-\(source.id).\(ext)", "\(folder)/\(episode.id)-\(source.id).2.eng.srt",
                    ]
                }
            }
        }
        return paths.sorted()
    }

    @Test(arguments: JellyfinProfile.allCases)
    func mirrorsTheGoldenLibraryIntoSeed000sLayoutAndASecondSyncIsANoOp(_ profile: JellyfinProfile) async throws {
        try await MirrorFixture.with(profile: profile) { fixture, library in
            let series = library.series[0]
            try fixture.select(.movie, library.movies[0].id, allVersions: true)
            try fixture.select(.movie, library.movies[1].id)
            try fixture.select(.series, series.id, allVersions: true)

            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            #expect(report.rejected.isEmpty, "\(report.rejected)")
            #expect(fixture.tree() == expectedTree(library))

            // Every media file holds the server's bytes.
            for source in library.allMediaSources {
                guard let path = fixture.tree().first(where: { $0.contains("-\(source.id).") && !$0.hasSuffix(".srt") })
                else {
                    // Only the virtual episode has no source; every real one must be there.
                    Issue.record("no file for media source \(source.id)")
                    continue
                }
                let same = fixture.bytes(path) == library.mediaBytes(forMediaSourceId: source.id)
                #expect(same, "bytes of \(path)")
            }
            // Images are the server's PNG bytes.
            for path in fixture.tree() where path.hasSuffix(".jpeg") {
                #expect(fixture.bytes(path)?.prefix(4) == [0x89, 0x50, 0x4E, 0x47])
            }
            // The virtual episode was neither downloaded nor asked for.
            #expect(fixture.server.requests(to: "/Items/7e500000000000000000000000000009/Download").isEmpty)

            // metadata.json at each level, with the keys Swiftfin reads.
            let movie = try #require(fixture.json("Downloads/\(library.movies[0].id)/metadata.json"))
            #expect(Set(movie.keys) == ["itemId", "itemType", "displayTitle", "item", "versions"])
            #expect(movie["itemType"] as? String == "Movie")
            let versions = try #require(movie["versions"] as? [[String: Any]])
            #expect(
                Set(versions.compactMap { $0["versionId"] as? String }) == Set(library.movies[0].mediaSources.map(\.id))
            )
            #expect(
                versions.allSatisfy {
                    Set($0.keys).isSuperset(of: [
                        "versionId", "container", "isStatic", "mediaSourceId", "downloadDate", "taskId",
                    ])
                })
            let unicode = try #require(fixture.json("Downloads/\(library.movies[1].id)/metadata.json"))
            #expect((unicode["item"] as? [String: Any])?["Name"] as? String == "Amélie – 東京 ✨")
            #expect((unicode["versions"] as? [[String: Any]])?.first?["container"] as? String == "mp4")
            let seriesMetadata = try #require(fixture.json("Downloads/\(series.id)/metadata.json"))
            let realEpisodeSources = library.episodes.filter { $0.locationType != "Virtual" }.flatMap(\.mediaSources)
            #expect((seriesMetadata["versions"] as? [Any])?.count == realEpisodeSources.count)
            let specials = try #require(fixture.json("Downloads/\(series.id)/Season-00/metadata.json"))
            #expect(specials["itemType"] as? String == "Season")
            #expect((specials["episodes"] as? [[String: Any]])?.first?["Name"] as? String == "Behind the Scenes")

            // A second sync downloads and writes nothing.
            let downloadsBefore = fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.count
            let treeBefore = fixture.tree().map { ($0, fixture.bytes($0)) }
            let second = try await fixture.sync()
            #expect(second.changedNothing)
            #expect(second.failed.isEmpty)
            #expect(fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.count == downloadsBefore)
            let treeAfter = fixture.tree().map { ($0, fixture.bytes($0)) }
            #expect(treeAfter.map(\.0) == treeBefore.map(\.0))
            #expect(zip(treeAfter, treeBefore).allSatisfy { $0.1 == $1.1 })
        }
    }

    @Test func selectsOneSeasonThePrimaryVersionOrTheNextUnplayedEpisodes() async throws {
        var library = TestLibrary.golden()
        let season1 = library.seasons[0]
        let episodes1 = library.episodes.filter { $0.seasonId == season1.id }.sorted {
            ($0.indexNumber ?? 0) < ($1.indexNumber ?? 0)
        }
        // Only the first episode of season 1 has been watched.
        for index in library.items.indices where library.items[index].type == "Episode" {
            library.items[index].played = library.items[index].id == episodes1[0].id
        }
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let series = library.series[0]
        try fixture.select(.series, series.id, season: 1)
        _ = try await fixture.sync()
        let media = fixture.tree().filter { $0.hasSuffix(".mkv") || $0.hasSuffix(".avi") }
        // Season 1 only, primary version only: one file per season-1 episode.
        #expect(media.count == episodes1.count)
        #expect(media.allSatisfy { $0.contains("/Season-01/") })
        #expect(!media.contains { $0.contains("7e500000000000000000000000000002") })

        try fixture.index.unselect(id: series.id)
        try fixture.select(.series, series.id, nextUnplayed: 1)
        let report = try await fixture.sync()
        // The first episode is played: the window is the second episode of season 1 (already held).
        #expect(report.downloaded.filter { $0.hasSuffix(".mkv") || $0.hasSuffix(".avi") }.isEmpty)
        #expect(report.extraneous.contains { $0.contains(episodes1[0].id) && $0.hasSuffix(".mkv") })
        #expect(!report.extraneous.contains { $0.contains(episodes1[1].id) })

        let deleting = try await fixture.sync(delete: true)
        #expect(deleting.deleted.contains { $0.contains(episodes1[0].id) })
        #expect(!fixture.tree().contains { $0.contains(episodes1[0].id) })
        #expect(fixture.tree().contains { $0.contains(episodes1[1].id) && $0.hasSuffix(".mkv") })
    }

    @Test func refusesHostileIdsAndWritesNothingOutsideTheRoot() async throws {
        var library = TestLibrary.golden()
        let movie = library.movies[1]
        library.updateMediaSource(movie.mediaSources[0].id) { $0.id = "../../../../tmp/evil" }
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.movie, movie.id)
        let report = try await fixture.sync()
        // One line for the one refused item (not a second one for the movie left without a version).
        #expect(report.rejected.count == 1, "\(report.rejected)")
        #expect(report.rejected.first?.contains("unusable id \"../../../../tmp/evil\"") == true)
        #expect(fixture.tree().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil"))
    }

    @Test(.enabled(if: SmallTmpfs.canMount, "needs root to mount a small tmpfs"))
    func refusesUpFrontWhenThePlanDoesNotFitWithTheMargin() async throws {
        let library = TestLibrary.golden()
        guard let disk = SmallTmpfs(bytes: 8 << 20) else { return }
        defer { disk.unmount() }
        let server = try TestServer(library: library)
        defer { server.shutdown() }
        let root = MirrorRoot(path: disk.path + "/mirror")
        try root.prepare()
        let index = try MirrorIndex(path: root.indexPath)
        try index.select(Selection(id: library.movies[0].id, kind: .movie, addedAt: "2026-01-01T00:00:00Z"))
        let anonymous = try JellyfinClient(
            serverURL: server.baseURL, identity: ClientIdentity(device: "t", deviceId: "t"))
        let client = anonymous.signedIn(try await anonymous.authenticate(username: "demo", password: "demo"))
        let error = await #expect(throws: SyncError.self) {
            try await MirrorSync(root: root, index: index, server: client).run()
        }
        #expect(error?.isNotEnoughSpace == true)
        #expect(error?.description.contains("not enough free space") == true)
        #expect(server.allRequests.filter { $0.path.hasSuffix("/Download") }.isEmpty)
    }
}

@Suite struct MixedSourcesTests {
    @Test func theJellyfinTokenNeverGoesToAPodcastHostEvenOnTheSameServer() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.movie, library.movies[1].id)
            let feed = """
                <rss version="2.0"><channel><title>P</title><item><title>E</title><guid>e-1</guid>
                <enclosure url="\(fixture.server.baseURL)/pod/e1.mp3" type="audio/mpeg"/></item></channel></rss>
                """
            fixture.server.setFile("/pod/feed.xml", contents: Array(feed.utf8))
            fixture.server.setFile("/pod/e1.mp3", contents: Array(repeating: 1, count: 2048))
            try await Subscriptions(index: fixture.index, client: HTTPClient()).add(
                url: fixture.server.baseURL + "/pod/feed.xml", retention: .all)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty && report.sourceErrors.isEmpty, "\(report)")
            #expect(fixture.server.requests(to: "/pod/e1.mp3").first?.headers["authorization"] == nil)
            #expect(fixture.server.requests(to: "/pod/feed.xml").allSatisfy { $0.headers["authorization"] == nil })
            let media = fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }
            #expect(!media.isEmpty && media.allSatisfy { $0.headers["authorization"]?.contains("Token=") == true })

            // Syncing only podcasts leaves the Jellyfin files alone, even with --delete.
            let podcastsOnly = try await MirrorSync(root: fixture.root, index: fixture.index, server: nil).run(
                options: SyncOptions(delete: true), only: .podcasts)
            #expect(podcastsOnly.deleted.isEmpty)
            #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(library.movies[1].id)/") })
        }
    }
}

@Suite struct LibrarySelectionTests {
    @Test func aWholeLibrarySelectionMirrorsEveryMovieOnce() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.library, library.moviesViewId)
            try fixture.select(.movie, library.movies[0].id)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let media = fixture.tree().filter { $0.hasSuffix(".mkv") || $0.hasSuffix(".mp4") }
            // Primary versions only, each movie once although movie 0 is selected twice.
            #expect(media.count == library.movies.count)
            for movie in library.movies {
                #expect(
                    media.contains { $0.hasPrefix("Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).") })
            }
        }
    }
}
