import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct JellyfinMirrorTests {
    /// The tree seed 000 prescribes for the golden library, written out from the library itself.
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
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
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

        // metadata.json at each level, with seed 000's keys.
        let movie = try #require(fixture.json("Downloads/\(library.movies[0].id)/metadata.json"))
        #expect(Set(movie.keys) == ["itemId", "itemType", "displayTitle", "item", "versions"])
        #expect(movie["itemType"] as? String == "Movie")
        let versions = try #require(movie["versions"] as? [[String: Any]])
        #expect(
            Set(versions.compactMap { $0["versionId"] as? String }) == Set(library.movies[0].mediaSources.map(\.id)))
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
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
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

@Suite struct LibrarySelectionTests {
    @Test func aWholeLibrarySelectionMirrorsEveryMovieOnce() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.library, library.moviesViewId)
        try fixture.select(.movie, library.movies[0].id)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        let media = fixture.tree().filter { $0.hasSuffix(".mkv") || $0.hasSuffix(".mp4") }
        // Primary versions only, each movie once although movie 0 is selected twice.
        #expect(media.count == library.movies.count)
        for movie in library.movies {
            #expect(media.contains { $0.hasPrefix("Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).") })
        }
    }
}

@Suite struct PlantedSymlinkTests {
    @Test func aSymlinkPlantedInTheMirrorDoesNotLeadDownloadsOutside() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        let movie = library.movies[1]
        try FileManager.default.createSymbolicLink(
            atPath: fixture.root.path + "/Downloads/\(movie.id)", withDestinationPath: outside.path)
        try fixture.select(.movie, movie.id)
        let report = try await fixture.sync()
        #expect(report.failed.contains { $0.message.contains("outside the mirror") })
        #expect(outside.allFiles().isEmpty)
    }
}

@Suite struct PlantedFolderDeletionTests {
    @Test func syncDeleteNeverDeletesThroughAFolderThatIsASymlinkOutOfTheRoot() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[1]
        try fixture.select(.movie, movie.id)
        #expect(try await fixture.sync().failed.isEmpty)
        // The movie's folder, copied outside with the same names and sizes, and swapped for a link to the copy.
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        let folder = fixture.root.path + "/Downloads/\(movie.id)"
        try FileManager.default.removeItem(atPath: outside.path)
        try FileManager.default.copyItem(atPath: folder, toPath: outside.path)
        let copies = outside.allFiles()
        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: outside.path)
        #expect(try fixture.index.unselect(id: movie.id))

        let report = try await fixture.sync(delete: true)
        #expect(report.deleted.isEmpty, "\(report.deleted)")
        #expect(report.failed.count == copies.count, "\(report.failed)")
        #expect(report.failed.allSatisfy { $0.message.contains("outside the mirror") })
        #expect(outside.allFiles() == copies)
        #expect(!copies.isEmpty)
    }
}

@Suite struct PlantedStagingTests {
    @Test func aStagingFolderThatIsASymlinkStopsTheSyncBeforeAnyWrite() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        try? FileManager.default.removeItem(atPath: fixture.root.stagingDirectory)
        try FileManager.default.createSymbolicLink(
            atPath: fixture.root.stagingDirectory, withDestinationPath: outside.path)
        try fixture.select(.movie, library.movies[1].id)
        let error = await #expect(throws: SyncError.self) { try await fixture.sync() }
        #expect(error?.isUnsafePath == true)
        #expect(error?.description.contains("is a symbolic link") == true)
        #expect(outside.allFiles().isEmpty)
        #expect(fixture.tree().isEmpty)
        #expect(fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.isEmpty)
    }
}

@Suite struct DryRunAndMaxDeleteTests {
    @Test func aDryRunPlansAndLeavesTheTreeByteForByte() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.movie, library.movies[0].id, allVersions: true)
        let snapshot = { fixture.tree().map { ($0, fixture.bytes($0)) } }
        let before = snapshot()
        let plan = try await fixture.sync(SyncOptions(dryRun: true))
        #expect(plan.dryRun)
        #expect(plan.planned.filter { $0.action == "download" }.count == 6)
        #expect(plan.planned.allSatisfy { $0.reason == "new" })
        #expect(fixture.tree().isEmpty && before.isEmpty)
        #expect(try fixture.index.entries().isEmpty)
        #expect(fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.isEmpty)

        _ = try await fixture.sync()
        try fixture.index.unselect(id: library.movies[0].id)
        let held = snapshot()
        let deletions = try await fixture.sync(SyncOptions(delete: true, dryRun: true))
        #expect(deletions.planned.filter { $0.action == "delete" }.count == held.count)
        let after = snapshot()
        #expect(after.map(\.0) == held.map(\.0))
        #expect(zip(after, held).allSatisfy { $0.1 == $1.1 })
    }

    @Test func maxDeleteAbortsTheDeletionsWhenMoreWouldGo() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.movie, library.movies[0].id, allVersions: true)
        _ = try await fixture.sync()
        let held = fixture.tree()
        try fixture.index.unselect(id: library.movies[0].id)
        let report = try await fixture.sync(SyncOptions(delete: true, maxDelete: 2))
        #expect(report.deleted.isEmpty)
        #expect(report.deletionAborted?.contains("more than --max-delete 2") == true)
        #expect(report.hasEssentialFailures)
        #expect(fixture.tree() == held)
    }
}

@Suite struct StorageQueriesTests {
    @Test func findsTheMediaOfAnItemAndSumsUsage() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[0]
        try fixture.select(.movie, movie.id, allVersions: true)
        _ = try await fixture.sync()
        let queries = StorageQueries(root: fixture.root, index: fixture.index)
        #expect(
            try queries.mediaPath(id: movie.id) == fixture.root.path
                + "/Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv")
        let second = movie.mediaSources[1].id
        #expect(try queries.mediaPath(id: movie.id, version: second).hasSuffix("\(movie.id)-\(second).mkv"))
        #expect(throws: SyncError.self) { try queries.mediaPath(id: library.movies[1].id) }
        // A damaged file is not handed to a player.
        try Data([1, 2, 3]).write(
            to: URL(fileURLWithPath: fixture.root.path + "/Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"))
        #expect(try queries.mediaPath(id: movie.id).hasSuffix("\(movie.id)-\(second).mkv"))

        let problems = try queries.verify(fix: false)
        #expect(problems.map(\.problem) == ["damaged"])
        #expect(try queries.verify(fix: true).count == 1)
        #expect(try queries.verify(fix: false).isEmpty)
        let repaired = try await fixture.sync()
        #expect(repaired.downloaded.contains("Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"))
        #expect(try queries.mediaPath(id: movie.id).hasSuffix("\(movie.id)-\(movie.id).mkv"))

        // Issue 16: every placed file has its content hash; a file of the right size with other bytes is found by
        // a deep check only, and --fix has the next sync fetch it again.
        let entries = try fixture.index.entries()
        #expect(!entries.isEmpty && entries.allSatisfy { $0.contentHash?.count == 16 }, "\(entries.map(\.contentHash))")
        let mediaFile = fixture.root.path + "/Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"
        var flipped = try [UInt8](Data(contentsOf: URL(fileURLWithPath: mediaFile)))
        flipped[flipped.count / 2] ^= 0xff
        try Data(flipped).write(to: URL(fileURLWithPath: mediaFile))
        #expect(try queries.verify(fix: false).isEmpty)
        let deep = try queries.verifyDeep(fix: false, deep: true)
        #expect(deep.problems.map(\.path) == ["Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"])
        #expect(deep.problems.map(\.problem) == ["damaged"] && deep.hashed == entries.count - 1 && deep.unhashed == 0)
        #expect(try queries.verify(fix: true, deep: true).count == 1)
        let refetched = try await fixture.sync()
        #expect(refetched.downloaded.contains("Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"))
        #expect(try queries.verify(fix: false, deep: true).isEmpty)

        let usage = try queries.usage()
        #expect(usage.entries.map(\.id) == [movie.id])
        #expect(usage.entries.first?.type == "Movie")
        #expect(usage.entries.first?.title == movie.name)
        let recorded = try fixture.index.entries().reduce(Int64(0)) { $0 + $1.file.size }
        #expect(usage.totalBytes == recorded)
        #expect(usage.freeBytes > 0)
    }
}

@Suite struct RemovalTests {
    @Test func removingAnEpisodeOfASelectedSeriesKeepsItAwayUntilSelectedAgain() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let series = library.series[0]
        try fixture.select(.series, series.id)
        _ = try await fixture.sync()
        let episode = library.episodes.first { $0.parentIndexNumber == 1 && $0.locationType != "Virtual" }
        let episodeId = try #require(episode?.id)
        let removed = try Removal(root: fixture.root, index: fixture.index).remove(id: episodeId)
        #expect(!removed.deleted.isEmpty)
        #expect(removed.unselected.isEmpty)
        #expect(!fixture.tree().contains { $0.contains(episodeId) })
        let again = try await fixture.sync()
        #expect(!again.downloaded.contains { $0.contains(episodeId) })
        #expect(!fixture.tree().contains { $0.contains(episodeId) })
        // The season's metadata no longer lists it.
        let season = try #require(fixture.json("Downloads/\(series.id)/Season-01/metadata.json"))
        #expect(!((season["episodes"] as? [[String: Any]]) ?? []).contains { $0["Id"] as? String == episodeId })

        // Selecting the series again brings it back.
        try fixture.select(.series, series.id)
        let back = try await fixture.sync()
        #expect(back.downloaded.contains { $0.contains(episodeId) })
    }

    @Test func removingASelectedMovieUnselectsItAndGcFindsOrphans() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[0]
        try fixture.select(.movie, movie.id, allVersions: true)
        _ = try await fixture.sync()
        try Data("stray".utf8).write(to: URL(fileURLWithPath: fixture.root.path + "/Downloads/\(movie.id)/stray.txt"))
        try FileManager.default.createDirectory(
            atPath: fixture.root.stagingDirectory, withIntermediateDirectories: true)
        try Data([1]).write(to: URL(fileURLWithPath: fixture.root.stagingDirectory + "/old.part"))
        let collector = GarbageCollector(root: fixture.root, index: fixture.index)
        #expect(try collector.garbage() == [".mediasync/staging/old.part", "Downloads/\(movie.id)/stray.txt"])
        #expect(try collector.collect().count == 2)
        #expect(try collector.garbage().isEmpty)

        // The dry run is the plan: it names what the real run then deletes, and changes nothing.
        let treeBefore = fixture.tree()
        let planned = try Removal(root: fixture.root, index: fixture.index).remove(id: movie.id, dryRun: true)
        #expect(planned.dryRun == true && planned.unselected == [movie.id] && !planned.deleted.isEmpty)
        #expect(fixture.tree() == treeBefore)
        #expect(try fixture.index.selections().map(\.id) == [movie.id])
        let removed = try Removal(root: fixture.root, index: fixture.index).remove(id: movie.id)
        #expect(removed.deleted == planned.deleted)
        #expect(removed.unselected == [movie.id])
        #expect(fixture.tree().isEmpty)
        #expect(try fixture.index.selections().isEmpty)
        #expect(throws: SyncError.self) { try Removal(root: fixture.root, index: fixture.index).remove(id: "nothing") }
    }
}

@Suite struct ReindexTests {
    @Test func aLostIndexIsRebuiltFromTheMetadataAndCostsNoDownload() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.movie, library.movies[0].id, allVersions: true)
        try fixture.select(.movie, library.movies[1].id)
        try fixture.select(.series, library.series[0].id, allVersions: true)
        _ = try await fixture.sync()
        let before = try fixture.index.entries()
        let tree = fixture.tree().map { ($0, fixture.bytes($0)) }

        // The index is lost.
        try FileManager.default.removeItem(atPath: fixture.root.indexPath)
        let index = try MirrorIndex(path: fixture.root.indexPath)
        let result = try Reindexer(root: fixture.root, index: index).rebuild()
        #expect(result.files == before.count)
        #expect(Set(try index.entries().map(\.file.path)) == Set(before.map(\.file.path)))
        #expect(try index.selections().count == 2 + library.seasons.count)

        let downloads = fixture.server.allRequests.filter {
            $0.path.hasSuffix("/Download") || $0.path.contains("/Images/")
        }.count
        let report = try await MirrorSync(root: fixture.root, index: index, server: fixture.client).run()
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(report.downloaded.isEmpty, "\(report.downloaded)")
        #expect(report.written.isEmpty, "\(report.written)")
        #expect(
            fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") || $0.path.contains("/Images/") }.count
                == downloads)
        let after = fixture.tree().map { ($0, fixture.bytes($0)) }
        #expect(after.map(\.0) == tree.map(\.0))
        #expect(zip(after, tree).allSatisfy { $0.1 == $1.1 })
    }
}

@Suite struct LocalLibraryTests {
    @Test func listsWhatIsHeldAndWhatIsMissing() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[1]
        try fixture.select(.movie, movie.id)
        try fixture.select(.series, library.series[0].id)
        _ = try await fixture.sync()
        let items = try LocalLibrary(root: fixture.root, index: fixture.index).items()
        #expect(items.filter { $0.type == "movie" }.map(\.title) == ["Amélie – 東京 ✨"])
        #expect(items.filter { $0.type == "series" }.count == 1)
        let episodes = items.filter { $0.type == "episode" }
        #expect(episodes.count == library.episodes.filter { $0.locationType != "Virtual" }.count)
        #expect(items.allSatisfy { $0.downloaded })
        #expect(episodes.contains { $0.title == "Behind the Scenes" && $0.season == 0 })

        try FileManager.default.removeItem(
            atPath: fixture.root.path + "/Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mp4")
        let after = try LocalLibrary(root: fixture.root, index: fixture.index).items()
        #expect(after.first { $0.id == movie.id }?.downloaded == false)
        #expect(after.filter { !$0.downloaded }.map(\.id) == [movie.id])
    }
}

@Suite struct LegacyLayoutTests {
    @Test func reindexMovesSwiftfinsLegacyLayoutIntoTheCurrentOneWithoutDownloading() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[1]
        let episode = try #require(library.episodes.first { $0.parentIndexNumber == 1 })
        for (item, name) in [(movie, "Media.mp4"), (episode, "Media.mkv")] {
            let folder = fixture.root.path + "/Downloads/\(item.id)"
            try FileManager.default.createDirectory(atPath: folder + "/Metadata", withIntermediateDirectories: true)
            let raw = try await fixture.client.item(id: item.id)
            try JSONEncoder().encode(raw).write(to: URL(fileURLWithPath: folder + "/Metadata/Item.json"))
            try Data(library.mediaBytes(forMediaSourceId: item.mediaSources[0].id) ?? []).write(
                to: URL(fileURLWithPath: folder + "/" + name))
        }
        let result = try Reindexer.rebuildFresh(root: fixture.root)
        #expect(result.migrated.count == 2, "\(result.migrated)")
        let series = library.series[0].id
        let movieMedia = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mp4"
        let episodeMedia = "Downloads/\(series)/Season-01/\(episode.id)-\(episode.mediaSources[0].id).mkv"
        #expect(fixture.tree().contains(movieMedia))
        #expect(fixture.tree().contains(episodeMedia))
        #expect(!fixture.tree().contains { $0.contains("Metadata/") || $0.contains("Media.") })
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/Downloads/\(episode.id)"))
        let same = fixture.bytes(movieMedia) == library.mediaBytes(forMediaSourceId: movie.mediaSources[0].id)
        #expect(same)

        // The movie comes back as a selection, and its media is not fetched again.
        let index = try MirrorIndex(path: fixture.root.indexPath)
        #expect(try index.selections().map(\.id) == [movie.id])
        let report = try await MirrorSync(root: fixture.root, index: index, server: fixture.client).run()
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(!report.downloaded.contains(movieMedia))
        #expect(fixture.server.requests(to: "/Items/\(movie.mediaSources[0].id)/Download").isEmpty)
    }
}

@Suite struct ServerChangeTests {
    @Test func aMovieDeletedOnTheServerIsLeftOverThenDeletedWithDelete() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[1]
        try fixture.select(.movie, movie.id)
        try fixture.select(.movie, library.movies[0].id)
        _ = try await fixture.sync()
        fixture.server.updateLibrary { $0.removeItem(withId: movie.id) }
        let kept = try await fixture.sync()
        #expect(kept.gone.count == 1)
        #expect(kept.sourceErrors.isEmpty)
        #expect(kept.extraneous.contains { $0.hasPrefix("Downloads/\(movie.id)/") })
        let deleted = try await fixture.sync(delete: true)
        #expect(deleted.deleted.contains { $0.hasPrefix("Downloads/\(movie.id)/") })
        #expect(!fixture.tree().contains { $0.hasPrefix("Downloads/\(movie.id)/") })
        #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(library.movies[0].id)/") })
    }

    @Test(arguments: ["/Items", "/Shows/{series}/Episodes", "/Shows/{series}/Seasons"])
    func a404FromAListingIsAFailedListingNotADeletion(_ endpoint: String) async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.series, library.series[0].id)
        try fixture.select(.movie, library.movies[0].id)
        #expect(try await fixture.sync().failed.isEmpty)
        let tree = fixture.tree()
        fixture.server.inject(
            .status(404), path: endpoint.replacingOccurrences(of: "{series}", with: library.series[0].id))
        let report = try await fixture.sync(delete: true)
        #expect(report.gone.isEmpty, "\(report.gone)")
        #expect(
            report.sourceErrors.count == 1 && report.sourceErrors.first?.contains("404") == true,
            "\(report.sourceErrors)")
        #expect(report.deleted.isEmpty && report.extraneous.isEmpty)
        #expect(fixture.tree() == tree)
    }

    @Test(arguments: [false, true])
    func aDownloadRefusedWith401AsksForANewSignInOnlyWhenTheTokenIsRefusedToo(_ revoked: Bool) async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[1]
        try fixture.select(.movie, movie.id)
        let server = fixture.server
        fixture.server.inject(.status(401), path: "/Items/\(movie.mediaSources[0].id)/Download") {
            // The token revoked while the run downloads: `/Users/Me` refuses it too.
            if revoked { server.updateLibrary { $0.accessToken = "revoked" } }
        }
        let report = try await fixture.sync()
        // `/Users/Me` answers 200 while the token holds: a refused file, reported (exit 3), the sign-in kept.
        #expect(report.needsSignIn == revoked)
        #expect(!fixture.server.requests(to: "/Users/Me").isEmpty)
        #expect(report.failed.map(\.path).contains("Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mp4"))
        #expect(report.failed.first?.message.contains("401") == true)
        if !revoked {
            #expect(!(try await fixture.sync().needsSignIn))
        }
    }

    @Test func changedMediaOnTheServerIsFetchedAgainAndReplacedAtomically() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let movie = library.movies[0]
        try fixture.select(.movie, movie.id)
        _ = try await fixture.sync()
        let source = movie.mediaSources[0].id
        fixture.server.updateLibrary { $0.changeMediaContent(ofMediaSourceId: source) }
        let report = try await fixture.sync()
        let path = "Downloads/\(movie.id)/\(movie.id)-\(source).mkv"
        #expect(report.downloaded.contains(path))
        let same = fixture.bytes(path) == fixture.server.library.mediaBytes(forMediaSourceId: source)
        #expect(same)
        #expect(report.written.contains("Downloads/\(movie.id)/metadata.json"))
    }
}

@Suite struct MovedRootTests {
    @Test func aRootMovedAsAWholeSyncsWithoutDownloading() async throws {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.series, library.series[0].id)
        _ = try await fixture.sync()
        let moved = MirrorRoot(path: fixture.root.path + "-moved")
        try FileManager.default.moveItem(atPath: fixture.root.path, toPath: moved.path)
        defer { try? FileManager.default.removeItem(atPath: moved.path) }
        let downloads = fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.count
        let report = try await MirrorSync(
            root: moved, index: MirrorIndex(path: moved.indexPath), server: fixture.client
        ).run()
        #expect(report.failed.isEmpty)
        #expect(report.changedNothing, "\(report.downloaded) \(report.written) \(report.moved)")
        #expect(fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.count == downloads)
        let path = try StorageQueries(root: moved, index: MirrorIndex(path: moved.indexPath))
            .mediaPath(id: library.episodes[0].id)
        #expect(path.hasPrefix(moved.path + "/Downloads/"))
    }
}
