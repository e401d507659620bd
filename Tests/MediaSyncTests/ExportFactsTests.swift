import Foundation
import GRDB
import MediaSyncCore
import MediaSyncJSON
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// The export reads what each `metadata.json` says from the facts the sync keeps in the index, falls back to the
/// document where they are missing or stale, and a mirror made before they were kept gets them at its next sync.
@Suite struct ExportFactsTests {
    static func metadataPaths(_ fixture: MirrorFixture) throws -> Set<String> {
        Set(try fixture.index.paths(kind: .metadata))
    }

    /// Each metadata file's recorded content hash, by path.
    static func metadataHashes(_ index: MirrorIndex) async throws -> [String: String?] {
        let rows = try await index.database.read { db in
            try Row.fetchAll(db, sql: "SELECT path, contentHash FROM file WHERE kind = 'metadata'")
        }
        return Dictionary(uniqueKeysWithValues: rows.map { row -> (String, String?) in (row[0], row[1]) })
    }

    @Test func theExportReadsTheIndexAndAnOlderMirrorGetsTheFactsAtItsNextSync() async throws {
        let fixture = try await ExportGoldenTests.mirror()
        defer { fixture.tearDown() }
        let metadata = try Self.metadataPaths(fixture)
        #expect(metadata.count >= 5)
        // Every metadata file the sync wrote has its facts, for the content its record names.
        #expect(Set(try fixture.index.metadataFacts().keys) == metadata)
        let read = try ExportSource.read(root: fixture.root, index: fixture.index)
        #expect(read.problems.isEmpty, "\(read.problems)")
        #expect(!read.movies.isEmpty && !read.series.isEmpty && !read.podcasts.isEmpty)

        // A mirror from before the facts were kept: the export reads the documents, and reads the same.
        try await fixture.index.database.write { db in
            try db.execute(sql: "DELETE FROM metadata_facts; DELETE FROM metadata_facts_filled")
        }
        #expect(try fixture.index.metadataFacts().isEmpty)
        #expect(try ExportSource.read(root: fixture.root, index: fixture.index) == read)

        // Its next sync (writing nothing) fills them from the documents, once.
        let again = try await fixture.sync()
        #expect(again.written.isEmpty && again.failed.isEmpty, "\(again.written) \(again.failed)")
        #expect(Set(try fixture.index.metadataFacts().keys) == metadata)
        #expect(try fixture.index.metadataFactsToFill() == nil)

        // Now the documents are not read at all: the same export with every one of them unreadable.
        for path in metadata {
            try Data("not JSON".utf8).write(to: URL(fileURLWithPath: fixture.root.path + "/" + path))
        }
        #expect(try ExportSource.read(root: fixture.root, index: fixture.index) == read)
    }

    @Test func aDocumentWhoseRecordChangedSinceItsFactsIsReadFromItsFile() async throws {
        let fixture = try await ExportGoldenTests.mirror()
        defer { fixture.tearDown() }
        let read = try ExportSource.read(root: fixture.root, index: fixture.index)
        let movie = try #require(read.movies.first)
        let path = "Downloads/\(movie.id)/metadata.json"
        // A stale row (its content hash is not the record's): the export does not trust it.
        try await fixture.index.database.write { db in
            try db.execute(
                sql: "UPDATE metadata_facts SET contentHash = 'stale', facts = ? WHERE path = ?",
                arguments: [Data(#"{"itemType":"Movie","item":{"Id":"x","Name":"Wrong"}}"#.utf8), path])
        }
        #expect(try fixture.index.metadataFacts()[path] == nil)
        #expect(try ExportSource.read(root: fixture.root, index: fixture.index) == read)

        // Facts kept by a version that kept other members are not read, and the next sync fills them again.
        try await fixture.index.database.write { db in
            try db.execute(
                sql: "UPDATE metadata_facts SET keys = 'Id,Name'; UPDATE metadata_facts_filled SET keys = 'Id,Name'")
        }
        #expect(try fixture.index.metadataFacts().isEmpty)
        #expect(try ExportSource.read(root: fixture.root, index: fixture.index) == read)
        _ = try await fixture.sync()
        #expect(Set(try fixture.index.metadataFacts().keys) == Set(try fixture.index.paths(kind: .metadata)))
        #expect(try ExportSource.read(root: fixture.root, index: fixture.index) == read)
    }

    @Test func reindexRecordsEachMetadataFileWithTheHashOfItsBytes() async throws {
        let fixture = try await ExportGoldenTests.mirror()
        defer { fixture.tearDown() }
        let read = try ExportSource.read(root: fixture.root, index: fixture.index)
        let hashes = try await Self.metadataHashes(fixture.index)
        _ = try Reindexer.rebuildFresh(root: fixture.root)
        let index = try MirrorIndex(path: fixture.root.indexPath)
        let rebuilt = try await Self.metadataHashes(index)
        #expect(rebuilt == hashes)
        // The rebuilt index keeps no facts yet; the export reads the documents meanwhile, and reads the same.
        #expect(try index.metadataFactsToFill()?.count == hashes.count)
        #expect(try ExportSource.read(root: fixture.root, index: index) == read)
    }
}
