import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct StorageQueriesTests {
    @Test func findsTheMediaOfAnItemAndSumsUsage() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id, allVersions: true)
            _ = try await fixture.sync()
            let queries = Mirror.using(root: fixture.root, index: fixture.index).storage
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

            // Every placed file has its content hash; a file of the right size with other bytes is found by a deep
            // check only, and --fix has the next sync fetch it again.
            let entries = try fixture.index.entries()
            #expect(
                !entries.isEmpty && entries.allSatisfy { $0.contentHash?.count == 16 }, "\(entries.map(\.contentHash))")
            let mediaFile = fixture.root.path + "/Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"
            var flipped = try [UInt8](Data(contentsOf: URL(fileURLWithPath: mediaFile)))
            flipped[flipped.count / 2] ^= 0xff
            try Data(flipped).write(to: URL(fileURLWithPath: mediaFile))
            #expect(try queries.verify(fix: false).isEmpty)
            let deep = try queries.verifyDeep(fix: false, deep: true)
            #expect(deep.problems.map(\.path) == ["Downloads/\(movie.id)/\(movie.id)-\(movie.id).mkv"])
            #expect(
                deep.problems.map(\.problem) == ["damaged"] && deep.hashed == entries.count - 1 && deep.unhashed == 0)
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
}

@Suite struct RemovalTests {
    @Test func removingAnEpisodeOfASelectedSeriesKeepsItAwayUntilSelectedAgain() async throws {
        try await MirrorFixture.with { fixture, library in
            let series = library.series[0]
            try fixture.select(.series, series.id)
            _ = try await fixture.sync()
            let episode = library.episodes.first { $0.parentIndexNumber == 1 && $0.locationType != "Virtual" }
            let episodeId = try #require(episode?.id)
            let removed = try Mirror.using(root: fixture.root, index: fixture.index).removal.remove(id: episodeId)
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
    }

    @Test func removingASelectedMovieUnselectsItAndGcFindsOrphans() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id, allVersions: true)
            _ = try await fixture.sync()
            try Data("stray".utf8).write(
                to: URL(fileURLWithPath: fixture.root.path + "/Downloads/\(movie.id)/stray.txt"))
            try FileManager.default.createDirectory(
                atPath: fixture.root.stagingDirectory, withIntermediateDirectories: true)
            try Data([1]).write(to: URL(fileURLWithPath: fixture.root.stagingDirectory + "/old.part"))
            let collector = Mirror.using(root: fixture.root, index: fixture.index).garbageCollector
            #expect(try collector.garbage() == [".mediasync/staging/old.part", "Downloads/\(movie.id)/stray.txt"])
            #expect(try collector.collect().count == 2)
            #expect(try collector.garbage().isEmpty)

            // The dry run is the plan: it names what the real run then deletes, and changes nothing.
            let treeBefore = fixture.tree()
            let planned = try Mirror.using(root: fixture.root, index: fixture.index).removal.remove(
                id: movie.id, dryRun: true)
            #expect(planned.dryRun == true && planned.unselected == [movie.id] && !planned.deleted.isEmpty)
            #expect(fixture.tree() == treeBefore)
            #expect(try fixture.index.selections().map(\.id) == [movie.id])
            let removed = try Mirror.using(root: fixture.root, index: fixture.index).removal.remove(id: movie.id)
            #expect(removed.deleted == planned.deleted)
            #expect(removed.unselected == [movie.id])
            #expect(fixture.tree().isEmpty)
            #expect(try fixture.index.selections().isEmpty)
            #expect(throws: SyncError.self) {
                try Mirror.using(root: fixture.root, index: fixture.index).removal.remove(id: "nothing")
            }
        }
    }
}

@Suite struct ReindexTests {
    @Test func aLostIndexIsRebuiltFromTheMetadataAndCostsNoDownload() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.movie, library.movies[0].id, allVersions: true)
            try fixture.select(.movie, library.movies[1].id)
            try fixture.select(.series, library.series[0].id, allVersions: true)
            _ = try await fixture.sync()
            let before = try fixture.index.entries()
            let tree = fixture.tree().map { ($0, fixture.bytes($0)) }

            // The index is lost.
            try FileManager.default.removeItem(atPath: fixture.root.indexPath)
            let index = try MirrorIndex(path: fixture.root.indexPath)
            let result = try Mirror.using(root: fixture.root, index: index).reindexer.rebuild()
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
                fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") || $0.path.contains("/Images/") }
                    .count
                    == downloads)
            let after = fixture.tree().map { ($0, fixture.bytes($0)) }
            #expect(after.map(\.0) == tree.map(\.0))
            #expect(zip(after, tree).allSatisfy { $0.1 == $1.1 })
        }
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
