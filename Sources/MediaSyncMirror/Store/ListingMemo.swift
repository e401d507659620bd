import Foundation
import GRDB
import MediaSyncCore
import MediaSyncServer

/// What the last complete sync asked the Jellyfin server and was answered, kept so that a sync with nothing to do
/// costs what asking the server costs.
///
/// A sync's Jellyfin side is a pure function of the server's answers and of what the index holds (selections,
/// exclusions, play state waiting to be sent, settings, cached media sources, the files' records). When the same
/// questions get the same answers (compared by SHA-256), nothing the index holds changed since, and every held file
/// is on disk at its recorded size, the run lists, plans and composes nothing for that side: it would arrive where
/// the last run left it.
///
/// The index forgets the memo itself, by triggers, as soon as any of those tables changes (a record of a podcast's
/// file excepted): no code path can change what a listing depends on and leave a memo behind.
struct ListingMemo: Sendable, Equatable {
    /// What the outcome depends on besides the answers and the index (see `MirrorSync.memoInputs`).
    var inputs: String
    /// The answers, in the order they came.
    var exchanges: [ListingLog.Exchange]
    /// How many files the Jellyfin side wanted.
    var wanted: Int

    /// The table, and the triggers that empty it when anything a listing depends on changes.
    static var schema: String {
        var sql = """
            CREATE TABLE listing_memo (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                inputs TEXT NOT NULL,
                exchanges BLOB NOT NULL,
                wanted INTEGER NOT NULL
            );

            """
        func trigger(_ table: String, _ event: String, when condition: String? = nil) {
            let name = "listing_memo_\(table)_\(event.lowercased())"
            let when = condition.map { " WHEN \($0)" } ?? ""
            sql += "CREATE TRIGGER \(name) AFTER \(event) ON \(table)\(when) BEGIN DELETE FROM listing_memo; END;\n"
        }
        for table in ["selection", "exclusion", "play_event", "setting", "media_cache"] {
            for event in ["INSERT", "UPDATE", "DELETE"] { trigger(table, event) }
        }
        // A podcast's file changes nothing a Jellyfin listing leads to.
        func media(_ row: String) -> String { "NOT \(MirrorIndex.isPodcastKey(row + ".key"))" }
        trigger("file", "INSERT", when: media("NEW"))
        trigger("file", "UPDATE", when: "\(media("OLD")) OR \(media("NEW"))")
        trigger("file", "DELETE", when: media("OLD"))
        return sql
    }
}

extension MirrorIndex {
    /// The memo the last complete sync left, if nothing forgot it since.
    func listingMemo() throws -> ListingMemo? {
        try database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT inputs, exchanges, wanted FROM listing_memo") else {
                return nil
            }
            let data: Data = row[1]
            guard let exchanges = try? JSONDecoder().decode([ListingLog.Exchange].self, from: data) else { return nil }
            return ListingMemo(inputs: row[0], exchanges: exchanges, wanted: row[2])
        }
    }

    /// Keeps `memo` in place of the last one.
    func saveListingMemo(_ memo: ListingMemo) throws {
        let exchanges = try JSONEncoder().encode(memo.exchanges)
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO listing_memo (id, inputs, exchanges, wanted) VALUES (1, ?, ?, ?)",
                arguments: [memo.inputs, exchanges, memo.wanted])
        }
    }

    /// The paths and recorded sizes of every file the Jellyfin side holds (metadata included).
    func mediaFileSizes() throws -> [(path: String, size: Int64)] {
        try database.read { db in
            var files: [(path: String, size: Int64)] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT path, size FROM file WHERE NOT \(MirrorIndex.isPodcastKey())")
            while let row = try rows.next() { files.append((row[0], row[1])) }
            return files
        }
    }
}
