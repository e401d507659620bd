import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct LegacyLayoutTests {
    @Test func reindexMovesSwiftfinsLegacyLayoutIntoTheCurrentOneWithoutDownloading() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            let episode = try #require(library.episodes.first { $0.parentIndexNumber == 1 })
            for (item, name) in [(movie, "Media.mp4"), (episode, "Media.mkv")] {
                try await fixture.plantLegacy(item, as: name, library: library)
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
}

@Suite struct LegacyDryRunTests {
    /// The dry run is the real run's plan: on a tree in Swiftfin's legacy layout it plans the migration's moves and
    /// no download of the media the migration places; the real run then downloads exactly what the dry run listed.
    @Test func aDryRunOnALegacyTreePlansTheMovesAndOnlyTheDownloadsTheRealRunMakes() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try await fixture.plantLegacy(movie, as: "Media.mp4", library: library)
            try fixture.select(.movie, movie.id)
            let treeBefore = fixture.tree()
            let media = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mp4"

            let plan = try await fixture.sync(SyncOptions(dryRun: true))
            #expect(fixture.tree() == treeBefore)
            let moves = plan.planned.filter { $0.action == "move" }
            #expect(moves.map(\.path) == [media] && moves.first?.from == "Downloads/\(movie.id)/Media.mp4")
            #expect(!plan.planned.contains { $0.action == "download" && $0.path == media }, "\(plan.planned)")

            let real = try await fixture.sync()
            #expect(real.failed.isEmpty, "\(real.failed)")
            #expect(real.migrated.count == 1)
            let plannedDownloads = Set(plan.planned.filter { $0.action == "download" }.map(\.path))
            #expect(Set(real.downloaded) == plannedDownloads)
            #expect(fixture.server.requests(to: "/Items/\(movie.mediaSources[0].id)/Download").isEmpty)
        }
    }
}

@Suite struct MovedRootTests {
    @Test func aRootMovedAsAWholeSyncsWithoutDownloading() async throws {
        try await MirrorFixture.with { fixture, library in
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
            let path = try Mirror.using(root: moved, index: MirrorIndex(path: moved.indexPath)).storage
                .mediaPath(id: library.episodes[0].id)
            #expect(path.hasPrefix(moved.path + "/Downloads/"))
        }
    }
}

@Suite struct MovedRecordTests {
    /// Planning reads records light (``MirrorIndex/entries(forPlanning:)``): a file the plan moves is recorded again
    /// from its whole record, so its content hash, validator, download date and task id survive the move.
    @Test func aMovedFileKeepsItsWholeRecord() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id)
            #expect(try await fixture.sync().failed.isEmpty)
            let before = try #require(
                try fixture.index.entries().first { $0.file.kind == .image && $0.file.itemId == movie.id })
            #expect(before.contentHash != nil && before.validator != nil && !before.taskId.isEmpty)
            // Held at another path: the next sync moves it where the layout wants it.
            let oldPath = before.file.path + ".old"
            try FileManager.default.moveItem(
                atPath: fixture.root.path + "/" + before.file.path, toPath: fixture.root.path + "/" + oldPath)
            var elsewhere = before
            elsewhere.file.path = oldPath
            try fixture.index.record(elsewhere)

            let report = try await fixture.sync()
            #expect(report.moved.contains(before.file.path), "\(report.moved)")
            #expect(report.downloaded.isEmpty)
            let after = try #require(try fixture.index.entries().first { $0.file.key == before.file.key })
            #expect(after == before)
        }
    }
}
