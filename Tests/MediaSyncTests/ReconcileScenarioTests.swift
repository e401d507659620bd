import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import Testing

/// The rules table of docs/sync.md, row by row, end to end: a change on the server or on disk, one sync, the
/// expected tree.
@Suite struct ReconcileScenarioTests {
    private func mirroredMovie() async throws -> (MirrorFixture, TestItem) {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        let movie = library.movies[0]
        try fixture.select(.movie, movie.id)
        let first = try await fixture.sync()
        #expect(first.failed.isEmpty, "\(first.failed)")
        return (fixture, movie)
    }

    private func downloadRequests(_ fixture: MirrorFixture) -> Int {
        fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.count
    }

    /// No media download; its external subtitles are fetched again (they follow the item's Etag: subtitle
    /// downloaders replace them without touching the media).
    @Test func anItemWhoseEtagChangedGetsItsMetadataRewrittenAndNoMediaDownload() async throws {
        let (fixture, movie) = try await mirroredMovie()
        defer { fixture.tearDown() }
        let downloads = downloadRequests(fixture)
        fixture.server.updateLibrary { library in
            guard let index = library.items.firstIndex(where: { $0.id == movie.id }) else { return }
            library.items[index].etag = "etag-after-an-edit"
            library.items[index].name = "Renamed on the server"
        }
        let report = try await fixture.sync()
        #expect(report.written == ["Downloads/\(movie.id)/metadata.json"])
        #expect(report.downloaded.allSatisfy { $0.hasSuffix(".srt") })
        #expect(downloadRequests(fixture) == downloads)
        let item = fixture.json("Downloads/\(movie.id)/metadata.json")?["item"] as? [String: Any]
        #expect(item?["Name"] as? String == "Renamed on the server")
        #expect(item?["Etag"] as? String == "etag-after-an-edit")
        #expect(try await fixture.sync().changedNothing)
    }

    @Test func anImageWhoseTagChangedIsFetchedAgainAndAnUnchangedTagCostsNothing() async throws {
        let (fixture, movie) = try await mirroredMovie()
        defer { fixture.tearDown() }
        let images = { fixture.server.allRequests.filter { $0.path.contains("/Images/") }.count }
        let before = images()
        #expect(try await fixture.sync().changedNothing)
        #expect(images() == before, "a no-op sync asked for images")

        fixture.server.updateLibrary { library in
            guard let index = library.items.firstIndex(where: { $0.id == movie.id }) else { return }
            library.items[index].imageTags["Primary"] = "a-new-poster"
        }
        let report = try await fixture.sync()
        #expect(report.downloaded == ["Downloads/\(movie.id)/Images/Primary.jpeg"])
        #expect(images() == before + 1)
        let asked = fixture.server.allRequests.last { $0.path.contains("/Images/Primary") }
        #expect(asked?.query["tag"] == "a-new-poster")
        // The metadata carries the new tag too.
        #expect(report.written == ["Downloads/\(movie.id)/metadata.json"])
    }

    @Test func aFileDeletedFromDiskIsFetchedAgain() async throws {
        let (fixture, movie) = try await mirroredMovie()
        defer { fixture.tearDown() }
        let media = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mkv"
        try FileManager.default.removeItem(atPath: fixture.root.path + "/" + media)
        let report = try await fixture.sync()
        #expect(report.downloaded == [media])
        #expect(fixture.bytes(media) == fixture.server.library.mediaBytes(forMediaSourceId: movie.mediaSources[0].id))
    }

    @Test func aFileTheIndexHasAtAStalePathIsFoundWhereItShouldBe() async throws {
        let (fixture, movie) = try await mirroredMovie()
        defer { fixture.tearDown() }
        let downloads = downloadRequests(fixture)
        let media = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mkv"
        var entry = try #require(try fixture.index.entries().first { $0.file.path == media })
        entry.file.path = "Downloads/\(movie.id)/an-old-name.mkv"
        try fixture.index.record(entry)

        let report = try await fixture.sync()
        #expect(report.repaired == [media])
        #expect(report.downloaded.isEmpty)
        #expect(downloadRequests(fixture) == downloads)
        #expect(try fixture.index.entries().contains { $0.file.path == media })
        #expect(try await fixture.sync().changedNothing)
    }

    @Test func absolutePathsFromAnOlderVersionOrAnotherRootAreMadeRelativeAtSyncStart() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.series, library.series[0].id)
            _ = try await fixture.sync()
            let downloads = downloadRequests(fixture)
            let entries = try fixture.index.entries()
            // Half as this root's absolute paths, half as another machine's root, one as a file:// URL.
            for (position, entry) in entries.enumerated() {
                var stale = entry
                switch position % 3 {
                case 0: stale.file.path = fixture.root.path + "/" + entry.file.path
                case 1:
                    stale.file.path = "/var/mobile/Containers/Data/Application/ABC123/Library/mirror/" + entry.file.path
                default: stale.file.path = "file:///old%20root/" + entry.file.path
                }
                try fixture.index.record(stale)
            }
            // One row that cannot be placed under any root.
            var lost = try #require(entries.first { $0.file.kind == .image })
            lost.file.key = .image(itemId: "gone", type: "Primary")
            lost.file.path = "/somewhere/else/poster.jpeg"
            try fixture.index.record(lost)

            let dryRun = try await fixture.sync(SyncOptions(dryRun: true))
            #expect(dryRun.planned.isEmpty, "\(dryRun.planned)")
            #expect(
                try fixture.index.entries().filter { $0.file.path.hasPrefix("/") }.count == entries.count * 2 / 3 + 1)

            let report = try await fixture.sync()
            #expect(report.pathsRepaired == entries.count)
            #expect(report.pathsForgotten == ["/somewhere/else/poster.jpeg"])
            #expect(report.downloaded.isEmpty && report.written.isEmpty && report.failed.isEmpty)
            #expect(downloadRequests(fixture) == downloads)
            #expect(try fixture.index.entries().map(\.file.path).sorted() == entries.map(\.file.path).sorted())
            #expect(try await fixture.sync().changedNothing)
        }
    }

    @Test func theLegacyLayoutIsMigratedAtSyncStartWithoutDownloading() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try await fixture.plantLegacy(movie, as: "Media.mp4", library: library)
            let bytes = library.mediaBytes(forMediaSourceId: movie.mediaSources[0].id) ?? []
            try fixture.select(.movie, movie.id)

            let report = try await fixture.sync()
            #expect(report.migrated.count == 1, "\(report.migrated)")
            #expect(report.failed.isEmpty, "\(report.failed)")
            let media = "Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mp4"
            #expect(!report.downloaded.contains(media))
            #expect(fixture.server.requests(to: "/Items/\(movie.mediaSources[0].id)/Download").isEmpty)
            #expect(fixture.bytes(media) == bytes)
            #expect(!fixture.tree().contains { $0.contains("/Metadata/") || $0.contains("/Media.") })
            #expect(try await fixture.sync().changedNothing)
        }
    }

    @Test func aDeselectedItemIsLeftOverUntilDeleteAndThenRemoved() async throws {
        try await MirrorFixture.with { fixture, library in
            let (kept, dropped) = (library.movies[0], library.movies[1])
            try fixture.select(.movie, kept.id)
            try fixture.select(.movie, dropped.id)
            _ = try await fixture.sync()
            #expect(try fixture.index.unselect(id: dropped.id))

            let report = try await fixture.sync()
            #expect(report.deleted.isEmpty)
            #expect(
                !report.extraneous.isEmpty && report.extraneous.allSatisfy { $0.hasPrefix("Downloads/\(dropped.id)/") })
            #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(dropped.id)/") })
            let deleted = try await fixture.sync(delete: true)
            #expect(Set(deleted.deleted) == Set(report.extraneous))
            #expect(!fixture.tree().contains { $0.hasPrefix("Downloads/\(dropped.id)/") })
            #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(kept.id)/") })
        }
    }
}
