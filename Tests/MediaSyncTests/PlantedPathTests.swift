import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct PlantedSymlinkTests {
    /// The executor makes the folders of a batch before it starts and trusts only real folders it made or found:
    /// a link at any depth on the way (the item's folder, `Downloads/` itself, the item's `Images/`) is refused.
    @Test(arguments: ["Downloads/{id}", "Downloads", "Downloads/{id}/Images"])
    func aSymlinkPlantedInTheMirrorDoesNotLeadDownloadsOutside(_ planted: String) async throws {
        try await MirrorFixture.with { fixture, library in
            let outside = try TemporaryDirectory()
            defer { outside.remove() }
            let movie = library.movies[1]
            let link = fixture.root.path + "/" + planted.replacingOccurrences(of: "{id}", with: movie.id)
            try FileManager.default.createDirectory(
                atPath: (link as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside.path)
            try fixture.select(.movie, movie.id)
            let report = try await fixture.sync()
            #expect(report.failed.contains { $0.message.contains("outside the mirror") })
            #expect(outside.allFiles().isEmpty)
        }
    }
}

@Suite struct PlantedFolderDeletionTests {
    @Test func syncDeleteNeverDeletesThroughAFolderThatIsASymlinkOutOfTheRoot() async throws {
        try await MirrorFixture.with { fixture, library in
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
}

@Suite struct PlantedStagingTests {
    @Test func aStagingFolderThatIsASymlinkStopsTheSyncBeforeAnyWrite() async throws {
        try await MirrorFixture.with { fixture, library in
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
}
