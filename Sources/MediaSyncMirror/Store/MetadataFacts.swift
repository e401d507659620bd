import Foundation
import GRDB

/// What the export reads of each `metadata.json` (names, years, season, episode and track numbers, versions' names,
/// a list's entries: ``ExportSource/metadataKeys``), kept in the index by the sync that writes the file, so an export
/// reads one table instead of reading and parsing every document again.
///
/// A row holds for the file whose record has its content hash: a file written since by anything else (or a row whose
/// file was written but not yet recorded) does not match, and the export reads that document instead. Rows are
/// saved after the files they describe, outside the records' journal: a run killed between the two loses rows, never
/// correctness.
extension MirrorIndex {
    /// The table, and the mark that the facts of the files written before it existed were filled (the first sync
    /// after the migration fills them, then marks it, with the members they keep: a version that keeps others fills
    /// them again).
    static let metadataFactsSchema = """
        CREATE TABLE metadata_facts (
            path TEXT PRIMARY KEY NOT NULL, contentHash TEXT NOT NULL, facts BLOB NOT NULL, keys TEXT NOT NULL
        );
        CREATE TABLE metadata_facts_filled (keys TEXT NOT NULL);
        """

    /// One file's facts, for the file whose content hash is `contentHash`.
    struct MetadataFacts: Sendable, Equatable {
        var path: String
        var contentHash: String
        var facts: [UInt8]
    }

    /// The members the facts keep, as one text: rows kept with another set (by another version) are not read.
    static let metadataFactsKeys = ExportSource.metadataKeys.sorted().joined(separator: ",")

    /// The facts of every metadata file whose record has the content hash they were saved with, by path.
    func metadataFacts() throws -> [String: [UInt8]] {
        try database.read { db in
            var facts: [String: [UInt8]] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT f.path, m.facts FROM file f JOIN metadata_facts m ON m.path = f.path
                    WHERE f.kind = 'metadata' AND m.contentHash = f.contentHash AND m.keys = ?
                    """, arguments: [MirrorIndex.metadataFactsKeys])
            while let row = try rows.next() {
                let data: Data = row[1]
                facts[row[0]] = [UInt8](data)
            }
            return facts
        }
    }

    /// Saves facts (each replacing the row of its path) and forgets the rows of paths no metadata file has any more.
    func saveMetadataFacts(_ facts: [MetadataFacts], markFilled: Bool = false) throws {
        try database.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT OR REPLACE INTO metadata_facts (path, contentHash, facts, keys) VALUES (?, ?, ?, ?)")
            for fact in facts {
                try statement.execute(
                    arguments: [fact.path, fact.contentHash, Data(fact.facts), MirrorIndex.metadataFactsKeys])
            }
            try db.execute(
                sql: """
                    DELETE FROM metadata_facts
                    WHERE path NOT IN (SELECT path FROM file WHERE kind = 'metadata')
                    """)
            if markFilled {
                try db.execute(sql: "DELETE FROM metadata_facts_filled")
                try db.execute(
                    sql: "INSERT INTO metadata_facts_filled (keys) VALUES (?)",
                    arguments: [MirrorIndex.metadataFactsKeys])
            }
        }
    }

    /// The metadata files (path and content hash) that have no facts for their content, when the files written
    /// before the facts were kept have not been filled yet; nil once they have.
    func metadataFactsToFill() throws -> [(path: String, contentHash: String)]? {
        try database.read { db in
            let filled = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM metadata_facts_filled WHERE keys = ?",
                arguments: [MirrorIndex.metadataFactsKeys])
            guard filled == 0 else { return nil }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT f.path, f.contentHash FROM file f LEFT JOIN metadata_facts m
                    ON m.path = f.path AND m.contentHash = f.contentHash AND m.keys = ?
                    WHERE f.kind = 'metadata' AND m.path IS NULL AND f.contentHash IS NOT NULL
                    """, arguments: [MirrorIndex.metadataFactsKeys]
            ).map { (path: $0[0], contentHash: $0[1]) }
        }
    }
}
