import Foundation
import GRDB
import MediaSyncCore

/// One file the index records.
public struct IndexEntry: Equatable, Sendable {
    public var file: LocalFile
    public var versionId: String?
    public var mediaSourceId: String?
    /// The extension the file was saved with (for media: its container).
    public var container: String?
    /// When it was placed, ISO 8601.
    public var downloadedAt: String
    /// The id of the download that placed it.
    public var taskId: String

    public init(
        file: LocalFile, versionId: String?, mediaSourceId: String?, container: String?, downloadedAt: String,
        taskId: String
    ) {
        self.file = file
        self.versionId = versionId
        self.mediaSourceId = mediaSourceId
        self.container = container
        self.downloadedAt = downloadedAt
        self.taskId = taskId
    }
}

/// The mirror's SQLite index: selections and placed files, with paths relative to the root.
public final class MirrorIndex: Sendable {
    private let database: DatabaseQueue

    /// Opens (creating and migrating if needed) the index at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        database = try DatabaseQueue(path: path, configuration: configuration)
        try MirrorIndex.migrator.migrate(database)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE selection (
                        id TEXT PRIMARY KEY NOT NULL,
                        kind TEXT NOT NULL,
                        allVersions INTEGER NOT NULL,
                        season INTEGER,
                        nextUnplayed INTEGER,
                        name TEXT,
                        addedAt TEXT NOT NULL
                    );
                    CREATE TABLE file (
                        key TEXT PRIMARY KEY NOT NULL,
                        path TEXT NOT NULL UNIQUE,
                        kind TEXT NOT NULL,
                        itemId TEXT NOT NULL,
                        versionId TEXT,
                        mediaSourceId TEXT,
                        container TEXT,
                        size INTEGER NOT NULL,
                        signature TEXT NOT NULL,
                        downloadedAt TEXT NOT NULL,
                        taskId TEXT NOT NULL
                    );
                    CREATE INDEX file_item ON file(itemId);
                    """)
        }
        return migrator
    }

    // MARK: Selections

    public func selections() throws -> [Selection] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM selection ORDER BY addedAt, id").compactMap { row -> Selection? in
                guard let kind = Selection.Kind(rawValue: row["kind"]) else { return nil }
                return Selection(
                    id: row["id"], kind: kind, allVersions: row["allVersions"], season: row["season"],
                    nextUnplayed: row["nextUnplayed"], name: row["name"], addedAt: row["addedAt"])
            }
        }
    }

    /// Adds a selection, replacing one with the same id.
    public func select(_ selection: Selection) throws {
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO selection (id, kind, allVersions, season, nextUnplayed, name, addedAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    selection.id, selection.kind.rawValue, selection.allVersions, selection.season,
                    selection.nextUnplayed, selection.name, selection.addedAt,
                ])
        }
    }

    /// Removes a selection; returns whether there was one.
    @discardableResult
    public func unselect(id: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM selection WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    // MARK: Files

    public func entries() throws -> [IndexEntry] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM file ORDER BY path").compactMap(MirrorIndex.entry)
        }
    }

    private static func entry(_ row: Row) -> IndexEntry? {
        guard let kind = RemoteFile.Kind(rawValue: row["kind"]) else { return nil }
        return IndexEntry(
            file: LocalFile(
                key: row["key"], path: row["path"], kind: kind, size: row["size"], signature: row["signature"],
                itemId: row["itemId"]),
            versionId: row["versionId"], mediaSourceId: row["mediaSourceId"], container: row["container"],
            downloadedAt: row["downloadedAt"], taskId: row["taskId"])
    }

    /// Records a placed file, replacing the record of the same key or of the same path.
    public func record(_ entry: IndexEntry) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM file WHERE path = ? AND key != ?", arguments: [entry.file.path, entry.file.key])
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO file
                        (key, path, kind, itemId, versionId, mediaSourceId, container, size, signature, downloadedAt, taskId)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    entry.file.key, entry.file.path, entry.file.kind.rawValue, entry.file.itemId, entry.versionId,
                    entry.mediaSourceId, entry.container, entry.file.size, entry.file.signature, entry.downloadedAt,
                    entry.taskId,
                ])
        }
    }

    /// Forgets a file.
    public func forget(key: String) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM file WHERE key = ?", arguments: [key])
        }
    }
}
