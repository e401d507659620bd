import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// Chapters, trickplay and media segments kept with the videos they belong to.
@Suite struct RichMediaSyncTests {
    /// One movie (two versions) and one series (one season of two episodes), each video with 3 chapter images,
    /// trickplay at 160 and 320 (12 thumbnails: one 10 × 10 tile each) and an intro and an outro.
    static func library(thumbnails: Int = 12) -> TestLibrary {
        var library = TestLibrary(movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 4_000)
        library.addRichMedia(chapters: 3, trickplayWidths: [320, 160], thumbnailCount: thumbnails)
        return library
    }

    static func tiles(_ requests: [RecordedRequest]) -> [RecordedRequest] {
        requests.filter { $0.path.lowercased().contains("/trickplay/") }
    }

    @Test func keepsChaptersTrickplayAndSegmentsBesideEachVideoAndAsksNothingAgain() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            let episode = library.episodes[0]
            try fixture.select(.movie, movie.id)
            try fixture.select(.series, library.series[0].id)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let tree = Set(fixture.tree())
            // Chapter images beside the item's other images, fetched with their tags.
            for index in 0..<3 {
                #expect(tree.contains("Downloads/\(movie.id)/Images/Chapter-\(index).jpeg"))
                #expect(
                    tree.contains(
                        "Downloads/\(library.series[0].id)/Season-01/Images/Episode-\(episode.id)-Chapter-\(index).jpeg"
                    ))
            }
            let tag = try #require(library.chapterImageTagForTests(movie.id, 1))
            #expect(
                fixture.bytes("Downloads/\(movie.id)/Images/Chapter-1.jpeg") == TestServer.chapterImageBytes(tag: tag))
            // Trickplay at the server's smallest width only, the primary version's (one version selected).
            let movieTile = "Downloads/\(movie.id)/\(movie.id)-\(movie.id).trickplay/160/0.jpg"
            #expect(tree.contains(movieTile))
            #expect(!tree.contains { $0.contains(".trickplay/320/") })
            let source = movie.mediaSources[0]
            let info = try #require(source.trickplay.first { $0.width == 160 })
            #expect(
                fixture.bytes(movieTile)
                    == TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: 0))
            #expect(
                tree.contains(
                    "Downloads/\(library.series[0].id)/Season-01/\(episode.id)-\(episode.id).trickplay/160/0.jpg"))
            // The segments as the server answered them, beside the media.
            let segments = try #require(fixture.json("Downloads/\(movie.id)/\(movie.id)-\(movie.id).segments.json"))
            let types = (segments["Items"] as? [[String: Any]])?.compactMap { $0["Type"] as? String }
            #expect(types == ["Intro", "Outro"])
            // The item's metadata keeps the chapters and trickplay as listed.
            let metadata = try #require(fixture.json("Downloads/\(movie.id)/metadata.json"))
            let item = try #require(metadata["item"] as? [String: Any])
            #expect((item["Chapters"] as? [Any])?.count == 3)
            #expect((item["Trickplay"] as? [String: Any])?[source.id] != nil)

            // A no-op: no tile, chapter image or segments asked for again.
            fixture.server.resetStatistics()
            let again = try await fixture.sync()
            #expect(again.downloaded.isEmpty, "\(again.downloaded)")
            let asked = fixture.server.allRequests.filter {
                $0.path.lowercased().contains("/trickplay/") || $0.path.lowercased().contains("/chapter/")
                    || $0.path.lowercased().hasPrefix("/mediasegments")
            }
            #expect(asked.isEmpty, "\(asked.map(\.path))")
        }
    }

    @Test func aHomeVideosLibraryKeepsChaptersTrickplayAndSegmentsAsMoviesDo() async throws {
        var library = TestLibrary(movies: 0, series: 0, mediaSize: 4_000)
        let ids = library.addHomeVideos(2)
        library.addRichMedia(chapters: 3, trickplayWidths: [320, 160], thumbnailCount: 12)
        try await MirrorFixture.with(library) { fixture, library in
            try fixture.select(.library, library.homeVideosViewId)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let tree = Set(fixture.tree())
            for (position, id) in ids.enumerated() {
                let video = library.homeVideos[position]
                #expect(video.type == "Video" && video.id == id)
                #expect(tree.contains("Downloads/\(id)/\(id)-\(id).mp4"))
                for index in 0..<3 { #expect(tree.contains("Downloads/\(id)/Images/Chapter-\(index).jpeg")) }
                let source = video.mediaSources[0]
                let info = try #require(source.trickplay.first { $0.width == 160 })
                let tile = "Downloads/\(id)/\(id)-\(id).trickplay/160/0.jpg"
                #expect(fixture.bytes(tile) == TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: 0))
                let segments = try #require(fixture.json("Downloads/\(id)/\(id)-\(id).segments.json"))
                #expect(
                    (segments["Items"] as? [[String: Any]])?.compactMap { $0["Type"] as? String } == ["Intro", "Outro"])
                let metadata = try #require(fixture.json("Downloads/\(id)/metadata.json"))
                #expect(metadata["itemType"] as? String == "Video")
            }
            // A no-op asks for none of it again.
            fixture.server.resetStatistics()
            let again = try await fixture.sync()
            #expect(again.downloaded.isEmpty, "\(again.downloaded)")
            #expect(Self.tiles(fixture.server.allRequests).isEmpty)
        }
    }

    @Test func aChapterImageMadeAgainIsTheOnlyFileFetchedAgain() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id)
            _ = try await fixture.sync()
            fixture.server.updateLibrary { library in
                guard let position = library.items.firstIndex(where: { $0.id == movie.id }) else { return }
                library.items[position].chapters[2].imageDateModified = Date(timeIntervalSince1970: 1_800_000_000)
            }
            fixture.server.resetStatistics()
            let report = try await fixture.sync()
            #expect(
                report.downloaded.sorted() == ["Downloads/\(movie.id)/Images/Chapter-2.jpeg"], "\(report.downloaded)")
            let tag = try #require(fixture.server.library.chapterImageTagForTests(movie.id, 2))
            #expect(
                fixture.bytes("Downloads/\(movie.id)/Images/Chapter-2.jpeg") == TestServer.chapterImageBytes(tag: tag))
        }
    }

    @Test func aSelectionKeepsTheTrickplayWidthItAsksForOrNone() async throws {
        try await MirrorFixture.with(Self.library(thumbnails: 250)) { fixture, library in
            let movie = library.movies[0]
            let series = library.series[0]
            try fixture.index.select(
                Selection(id: movie.id, kind: .movie, addedAt: "2026-01-01T00:00:00Z", trickplay: .width(300)))
            try fixture.index.select(
                Selection(id: series.id, kind: .series, addedAt: "2026-01-01T00:00:00Z", trickplay: .none))
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let tree = fixture.tree()
            // 250 thumbnails in 10 × 10 tiles: 3 tiles, at 320 (the nearest to 300).
            let tiles = tree.filter { $0.contains(".trickplay/") }
            #expect(
                tiles.sorted()
                    == (0..<3).map { "Downloads/\(movie.id)/\(movie.id)-\(movie.id).trickplay/320/\($0).jpg" }.sorted(),
                "\(tiles)")
            #expect(try fixture.index.selections().first { $0.id == movie.id }?.trickplay == .width(300))
            // Told none afterwards: the next sync lets the tiles go (with --delete, as any file nothing wants).
            try fixture.index.select(
                Selection(id: movie.id, kind: .movie, addedAt: "2026-01-01T00:00:00Z", trickplay: .none))
            _ = try await fixture.sync(delete: true)
            #expect(!fixture.tree().contains { $0.contains(".trickplay/") })
        }
    }

    /// Every version keeps its own tiles, asked under its own id: 10.9 and 10.10 read the path's id, 10.11
    /// `mediaSourceId`, and both name the version.
    @Test(arguments: [JellyfinProfile.v10_10, .v10_11])
    func everyVersionKeepsItsOwnTiles(profile: JellyfinProfile) async throws {
        try await MirrorFixture.with(Self.library(), profile: profile) { fixture, library in
            let movie = library.movies[0]
            #expect(movie.mediaSources.count == 2)
            try fixture.select(.movie, movie.id, allVersions: true)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            for source in movie.mediaSources {
                let info = try #require(source.trickplay.first { $0.width == 160 })
                let path = "Downloads/\(movie.id)/\(movie.id)-\(source.id).trickplay/160/0.jpg"
                #expect(
                    fixture.bytes(path) == TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: 0),
                    "\(path)")
            }
        }
    }

    /// A budget counts a movie's tiles (each at the most a tile can have, from the width's `Bandwidth`): the second
    /// movie's media would fit, its media and tiles do not, so it waits.
    @Test func aBudgetCountsTheTiles() async throws {
        var library = TestLibrary(movies: 2, series: 0, mediaSize: 4_000)
        library.addRichMedia(chapters: 0, trickplayWidths: [160], thumbnailCount: 2_000, segments: false)
        try await MirrorFixture.with(library) { fixture, library in
            let first = library.movies[0]
            let second = library.movies[1]
            try fixture.select(.movie, first.id)
            try fixture.select(.movie, second.id)
            let listed = try await fixture.client.item(id: second.id, fields: SelectionExpander.fields)
            let info = try #require(listed.trickplay[second.id]?[160])
            #expect(info.tileCount == 20)
            let bound = try #require(MirrorFiles.trickplayTileBound(info))
            let served = try #require(second.mediaSources[0].trickplay.first)
            let largest =
                (0..<20).map { TestServer.trickplayTileSize(sourceId: second.id, info: served, index: $0) }.max() ?? 0
            #expect(bound >= Int64(largest))
            let media = Int64(first.mediaSources[0].size + second.mediaSources[0].size)
            // Both movies' media and the first's tiles fit; the second's tiles do not.
            let budget = media + 20 * bound + bound
            let report = try await fixture.sync(SyncOptions(budget: budget))
            #expect(report.failed.isEmpty, "\(report.failed)")
            let tree = fixture.tree()
            #expect(tree.filter { $0.hasPrefix("Downloads/\(first.id)/") && $0.contains(".trickplay/") }.count == 20)
            #expect(!tree.contains { $0.hasPrefix("Downloads/\(second.id)/") })
        }
    }

    @Test(arguments: [JellyfinProfile.v10_8, .v10_9])
    func anOlderServerGetsNoQuestionItCannotAnswer(profile: JellyfinProfile) async throws {
        try await MirrorFixture.with(Self.library(), profile: profile) { fixture, library in
            try fixture.select(.movie, library.movies[0].id)
            try fixture.select(.series, library.series[0].id)
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            let requests = fixture.server.allRequests
            #expect(!requests.contains { $0.path.lowercased().hasPrefix("/mediasegments") })
            #expect(!fixture.tree().contains { $0.hasSuffix(".segments.json") })
            let tiles = fixture.tree().filter { $0.contains(".trickplay/") }
            if profile == .v10_8 {
                #expect(Self.tiles(requests).isEmpty)
                #expect(tiles.isEmpty)
            } else {
                // 10.9 has trickplay: one tile per video at 160.
                #expect(tiles.count == 3, "\(tiles)")
            }
            // Chapters exist in every version.
            #expect(fixture.tree().contains { $0.hasSuffix("Chapter-0.jpeg") })
        }
    }

    @Test func reindexKnowsChapterImagesTilesAndSegmentsAndVerifyChecksThem() async throws {
        try await MirrorFixture.with(Self.library()) { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id)
            try fixture.select(.series, library.series[0].id)
            _ = try await fixture.sync()
            // A tile of the right size with other bytes: found by a deep check, fetched again after --fix.
            let tile = "Downloads/\(movie.id)/\(movie.id)-\(movie.id).trickplay/160/0.jpg"
            var bytes = try #require(fixture.bytes(tile))
            bytes[bytes.count / 2] ^= 0xff
            try Data(bytes).write(to: URL(fileURLWithPath: fixture.root.path + "/" + tile))
            let queries = Mirror.using(root: fixture.root, index: fixture.index).storage
            let deep = try queries.verifyDeep(fix: true, deep: true)
            #expect(deep.problems.map(\.path) == [tile])
            let repaired = try await fixture.sync()
            #expect(repaired.downloaded == [tile])
            #expect(try queries.verify(fix: false, deep: true).isEmpty)

            let before = try fixture.index.entries().map { "\($0.file.key.rawValue) \($0.file.signature)" }.sorted()
            #expect(before.contains { $0.hasPrefix("trickplay:") })
            #expect(before.contains { $0.hasPrefix("segments:") })
            #expect(before.contains { $0.hasPrefix("image:\(movie.id):Chapter-2 ") })
            let fresh = try Reindexer.rebuildFresh(root: fixture.root)
            #expect(fresh.skipped.isEmpty, "\(fresh.skipped)")
            let rebuilt = try MirrorIndex(path: fixture.root.indexPath)
            let after = try rebuilt.entries().map { "\($0.file.key.rawValue) \($0.file.signature)" }.sorted()
            #expect(after == before)
            let again = try await MirrorFixture(reusing: fixture, index: rebuilt).sync()
            #expect(again.downloaded.isEmpty, "\(again.downloaded)")
        }
    }
}

extension TestLibrary {
    /// The tag the server gives a chapter's image (nil without one).
    func chapterImageTagForTests(_ itemId: String, _ index: Int) -> String? {
        guard let item = item(withId: itemId), index < item.chapters.count else { return nil }
        return chapterImageTag(item, item.chapters[index])
    }
}
