import Foundation
import GRDB
import MediaSyncCore
import MediaSyncJSON

#if canImport(Glibc)
    import Glibc
#endif

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
    /// The validator (strong `ETag` or `Last-Modified`) of the version its bytes came from, when the server gave one.
    public var validator: String?
    /// The ``ContentHash`` of the bytes placed (16 hex digits); nil for files placed by older versions or written
    /// locally (metadata). `verify --deep` checks it.
    public var contentHash: String?

    public init(
        file: LocalFile, versionId: String?, mediaSourceId: String?, container: String?, downloadedAt: String,
        taskId: String, validator: String? = nil, contentHash: String? = nil
    ) {
        self.validator = validator
        self.contentHash = contentHash
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
    let database: DatabaseQueue

    /// Opens (creating and migrating if needed) the index at `path`.
    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // A record per placed file: with the default rollback journal each commit cost two fsyncs, most of
            // a first sync of many small files. The write-ahead log with NORMAL sync survives a killed process
            // (a power cut may lose the last records; their files are then fetched again, never half-indexed).
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            try MirrorIndex.migrator.migrate(database)
        } catch let error as DatabaseError {
            // On a disk that is already full SQLite says "disk I/O error" (it cannot make the write-ahead log's
            // shared memory), not "database or disk is full": tell the user what is wrong, as a full disk mid-run.
            if let full = MirrorIndex.diskFull(opening: path) { throw full }
            throw error
        }
    }

    /// The error for an index that cannot be opened because its disk is full, or nil when there is room: the
    /// room SQLite's write-ahead log and shared memory need (64 KiB) is asked of the file system itself.
    static func diskFull(opening path: String) -> SyncError? {
        let folder = (path as NSString).deletingLastPathComponent
        let probe = folder + "/.space-probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        var failure = descriptor < 0 ? errno : 0
        if descriptor >= 0 {
            failure = posix_fallocate(descriptor, 0, 64 * 1024)
            close(descriptor)
            unlink(probe)
        }
        guard failure == ENOSPC || failure == EDQUOT else { return nil }
        var info = statvfs()
        let free = statvfs(folder, &info) == 0 ? Int64(info.f_bavail) * Int64(info.f_frsize) : 0
        return SyncError.diskFull(
            "cannot open the mirror's index \(path) (\(ByteCount.format(free)) free on its disk)")
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
        migrator.registerMigration("v2-podcasts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE podcast (
                        id TEXT PRIMARY KEY NOT NULL,
                        feedURL TEXT NOT NULL,
                        title TEXT,
                        etag TEXT,
                        lastModified TEXT,
                        retention TEXT NOT NULL,
                        addedAt TEXT NOT NULL,
                        lastChecked TEXT,
                        lastError TEXT,
                        feed BLOB
                    );
                    CREATE TABLE podcast_alias (
                        url TEXT PRIMARY KEY NOT NULL,
                        podcastId TEXT NOT NULL REFERENCES podcast(id) ON DELETE CASCADE
                    );
                    """)
        }
        migrator.registerMigration("v3-exclusions") { db in
            // Items or files the user removed: not downloaded again until selected again.
            // `parent` is the movie, series or podcast folder the item sat in: selecting it again lifts the exclusion.
            try db.execute(
                sql: "CREATE TABLE exclusion (id TEXT PRIMARY KEY NOT NULL, parent TEXT, addedAt TEXT NOT NULL)")
        }
        migrator.registerMigration("v4-validator") { db in
            // The validator (ETag or Last-Modified) of the response whose bytes were placed, not the listing's: the
            // bytes served are the truth, a server's recorded Size and ETag can be stale.
            try db.execute(sql: "ALTER TABLE file ADD COLUMN validator TEXT")
        }
        migrator.registerMigration("v5-content-hash") { db in
            // The XXH64 of the bytes placed, so `verify --deep` can prove every byte.
            try db.execute(sql: "ALTER TABLE file ADD COLUMN contentHash TEXT")
        }
        migrator.registerMigration("v6-play-state") { db in
            // Play state recorded here until the server has it, a selection's priority and played cleanup, and the
            // mirror's stored settings (the default budget).
            try db.execute(
                sql: """
                    CREATE TABLE play_event (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        itemId TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        positionTicks INTEGER NOT NULL DEFAULT 0,
                        at TEXT NOT NULL,
                        state TEXT NOT NULL,
                        note TEXT
                    );
                    CREATE INDEX play_event_item ON play_event(itemId);
                    CREATE INDEX play_event_state ON play_event(state);
                    ALTER TABLE selection ADD COLUMN priority INTEGER;
                    ALTER TABLE selection ADD COLUMN deletePlayedAfter INTEGER;
                    ALTER TABLE podcast ADD COLUMN deletePlayedAfter INTEGER;
                    ALTER TABLE selection ADD COLUMN quality TEXT;
                    CREATE TABLE setting (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    """)
        }
        migrator.registerMigration("v7-media-source-cache") { db in
            // Each movie's and episode's MediaSources/MediaStreams as last listed, by item Etag: building them is
            // most of a listing's cost on the server, so library listings leave them out and ask for them only for
            // items that are new or whose Etag changed.
            try db.execute(
                sql:
                    "CREATE TABLE media_cache (itemId TEXT PRIMARY KEY NOT NULL, etag TEXT NOT NULL, fields BLOB NOT NULL)"
            )
        }
        migrator.registerMigration("v8-media-source-planning") { db in
            // Beside the whole fields, the members planning reads (MediaSourceCache.planningKeys): what every sync
            // loads, about a third of the bytes. Rows from before have none; `fields` is read for them.
            try db.execute(sql: "ALTER TABLE media_cache ADD COLUMN planning BLOB")
        }
        migrator.registerMigration("v9-selection-order") { db in
            // The order things were selected and subscribed in, as a sequence: `addedAt` has whole seconds, so
            // three selections made by a script in one second came back ordered by id, an order nobody chose.
            // Rows from before keep the order they had.
            try db.execute(
                sql: """
                    ALTER TABLE selection ADD COLUMN seq INTEGER;
                    UPDATE selection SET seq = (
                        SELECT n FROM (SELECT id AS sid, ROW_NUMBER() OVER (ORDER BY addedAt, id) AS n FROM selection)
                        WHERE sid = selection.id);
                    ALTER TABLE podcast ADD COLUMN seq INTEGER;
                    UPDATE podcast SET seq = (
                        SELECT n FROM (SELECT id AS pid, ROW_NUMBER() OVER (ORDER BY addedAt, id) AS n FROM podcast)
                        WHERE pid = podcast.id);
                    """)
        }
        migrator.registerMigration("v10-podcast-account") { db in
            // The gPodder account's exchange (PodcastAccountSync): the feeds both sides agreed on, the actions to
            // send (kept until the server has them), the keys of the actions applied here (never applied twice), and
            // the episodes whose download was announced.
            try db.execute(
                sql: """
                    CREATE TABLE account_feed (url TEXT PRIMARY KEY NOT NULL, podcastId TEXT);
                    CREATE TABLE account_outbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        episodeId TEXT NOT NULL,
                        action TEXT NOT NULL,
                        body BLOB NOT NULL,
                        key TEXT NOT NULL,
                        state TEXT NOT NULL,
                        since INTEGER
                    );
                    CREATE INDEX account_outbox_state ON account_outbox(state);
                    CREATE TABLE account_applied (key TEXT PRIMARY KEY NOT NULL, playSeq INTEGER);
                    CREATE TABLE account_episode (
                        episodeId TEXT PRIMARY KEY NOT NULL, podcast TEXT NOT NULL, episode TEXT NOT NULL, guid TEXT
                    );
                    """)
        }
        migrator.registerMigration("v11-episode-url") { db in
            // Other URLs an episode answers to, for matching the account's actions: the URL its download was
            // redirected to (tracking services), and the URL a gPodder server rewrote its enclosure URL to.
            try db.execute(
                sql: """
                    CREATE TABLE episode_url (
                        url TEXT PRIMARY KEY NOT NULL, episodeId TEXT NOT NULL, origin TEXT NOT NULL
                    );
                    CREATE INDEX episode_url_episode ON episode_url(episodeId);
                    """)
        }
        migrator.registerMigration("v12-listing-memo") { db in
            try db.execute(sql: ListingMemo.schema)
        }
        migrator.registerMigration("v13-audio-quality") { db in
            // The quality a selection's tracks are kept at (JSON), beside its movies' and episodes'.
            try db.execute(sql: "ALTER TABLE selection ADD COLUMN audioQuality TEXT")
        }
        migrator.registerMigration("v14-trickplay") { db in
            // The trickplay width a selection keeps: NULL the server's smallest, 0 none, else the width.
            try db.execute(sql: "ALTER TABLE selection ADD COLUMN trickplay INTEGER")
        }
        migrator.registerMigration("v15-order-indexes") { db in
            // Each selection and subscription takes the next `seq` (`MAX(seq) + 1`), and selecting lifts the
            // exclusions under it (`parent = ?`): without these, each of those read the whole table, and `reindex`
            // of a mirror of 100,000 movies (a selection each) took minutes growing with the square of its size.
            try db.execute(
                sql: """
                    CREATE INDEX selection_seq ON selection(seq);
                    CREATE INDEX podcast_seq ON podcast(seq);
                    CREATE INDEX exclusion_parent ON exclusion(parent);
                    """)
        }
        migrator.registerMigration("v16-export-names") { db in
            try db.execute(sql: MirrorIndex.metadataFactsSchema)
        }
        return migrator
    }

    // MARK: Exclusions

    /// Ids (item ids or file keys) that `mediasync rm` removed and sync must not fetch again.
    public func exclusions() throws -> Set<String> {
        try database.read { db in Set(try String.fetchAll(db, sql: "SELECT id FROM exclusion")) }
    }

    /// Excludes an item or file; selecting `parent` (or the id itself) again lifts the exclusion.
    public func exclude(_ id: String, parent: String?) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO exclusion (id, parent, addedAt) VALUES (?, ?, ?)",
                arguments: [id, parent, ISO8601DateFormatter().string(from: Date())])
        }
    }

    // MARK: Selections

    public func selections() throws -> [Selection] {
        try database.read { db in
            // The order a budget fills in: by priority (1 first; none after every numbered one), then as selected.
            try Row.fetchAll(
                db, sql: "SELECT * FROM selection ORDER BY priority IS NULL, priority, seq"
            ).compactMap { row -> Selection? in
                guard let kind = Selection.Kind(rawValue: row["kind"]) else { return nil }
                let seconds: Int64? = row["deletePlayedAfter"]
                let quality = (row["quality"] as String?).flatMap {
                    try? JSONDecoder().decode(Quality.self, from: Data($0.utf8))
                }
                let audioQuality = (row["audioQuality"] as String?).flatMap {
                    try? JSONDecoder().decode(AudioQuality.self, from: Data($0.utf8))
                }
                return Selection(
                    id: row["id"], kind: kind, allVersions: row["allVersions"], season: row["season"],
                    nextUnplayed: row["nextUnplayed"], name: row["name"], addedAt: row["addedAt"],
                    priority: row["priority"], deletePlayedAfter: seconds.map { TimeInterval($0) }, quality: quality,
                    audioQuality: audioQuality, trickplay: TrickplayChoice(stored: row["trickplay"]))
            }
        }
    }

    /// Adds a selection after every other, or changes the one with the same id, which keeps its place (and the
    /// time it was first added): the order is the order things were first chosen in.
    public func select(_ selection: Selection) throws {
        try database.write { db in
            try db.execute(
                sql: "DELETE FROM exclusion WHERE id = ? OR parent = ?", arguments: [selection.id, selection.id])
            try db.execute(
                sql: """
                    INSERT INTO selection
                        (id, kind, allVersions, season, nextUnplayed, name, addedAt, priority, deletePlayedAfter,
                        quality, audioQuality, trickplay, seq)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM selection))
                    ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, allVersions = excluded.allVersions,
                        season = excluded.season, nextUnplayed = excluded.nextUnplayed, name = excluded.name,
                        priority = excluded.priority, deletePlayedAfter = excluded.deletePlayedAfter,
                        quality = excluded.quality, audioQuality = excluded.audioQuality,
                        trickplay = excluded.trickplay
                    """,
                arguments: [
                    selection.id, selection.kind.rawValue, selection.allVersions, selection.season,
                    selection.nextUnplayed, selection.name, selection.addedAt, selection.priority,
                    selection.deletePlayedAfter.map { Int64($0) },
                    try selection.quality.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) },
                    try selection.audioQuality.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) },
                    selection.trickplay.stored,
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

    // MARK: Podcasts

    public func subscriptions() throws -> [Subscription] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM podcast ORDER BY seq").compactMap(MirrorIndex.subscription)
        }
    }

    private static func subscription(_ row: Row) -> Subscription? {
        let retentionText: String = row["retention"]
        guard let retention = try? JSONDecoder().decode(Retention.self, from: Data(retentionText.utf8)) else {
            return nil
        }
        var subscription = Subscription(
            id: row["id"], feedURL: row["feedURL"], title: row["title"], etag: row["etag"],
            lastModified: row["lastModified"],
            retention: retention, addedAt: row["addedAt"], lastChecked: row["lastChecked"], lastError: row["lastError"])
        let seconds: Int64? = row["deletePlayedAfter"]
        subscription.deletePlayedAfter = seconds.map { TimeInterval($0) }
        return subscription
    }

    /// The subscription whose id, current URL or old URL is `key`.
    public func subscription(matching key: String) throws -> Subscription? {
        try database.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM podcast WHERE id = ? OR feedURL = ?
                    OR id = (SELECT podcastId FROM podcast_alias WHERE url = ?)
                    """,
                arguments: [key, key, key])
            return row.flatMap(MirrorIndex.subscription)
        }
    }

    /// Adds or updates a subscription; its previous URL, if different, is kept as an alias.
    public func save(_ subscription: Subscription, feed: [UInt8]? = nil) throws {
        let retention = String(decoding: try JSONEncoder().encode(subscription.retention), as: UTF8.self)
        try database.write { db in
            let previous = try String.fetchOne(
                db, sql: "SELECT feedURL FROM podcast WHERE id = ?", arguments: [subscription.id])
            try db.execute(
                sql: """
                    INSERT INTO podcast
                        (id, feedURL, title, etag, lastModified, retention, addedAt, lastChecked, lastError, feed,
                        deletePlayedAfter, seq)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM podcast))
                    ON CONFLICT(id) DO UPDATE SET feedURL = excluded.feedURL, title = excluded.title, etag = excluded.etag,
                        lastModified = excluded.lastModified, retention = excluded.retention,
                        deletePlayedAfter = excluded.deletePlayedAfter,
                        lastChecked = excluded.lastChecked, lastError = excluded.lastError,
                        feed = COALESCE(excluded.feed, podcast.feed)
                    """,
                arguments: [
                    subscription.id, subscription.feedURL, subscription.title, subscription.etag,
                    subscription.lastModified,
                    retention, subscription.addedAt, subscription.lastChecked, subscription.lastError,
                    feed.map { Data($0) }, subscription.deletePlayedAfter.map { Int64($0) },
                ])
            if let previous, previous != subscription.feedURL {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO podcast_alias (url, podcastId) VALUES (?, ?)",
                    arguments: [previous, subscription.id])
            }
        }
    }

    /// The last good parsed feed of a subscription (as `FeedJSON`), if any.
    public func storedFeed(podcastId: String) throws -> [UInt8]? {
        try database.read { db in
            try Data.fetchOne(db, sql: "SELECT feed FROM podcast WHERE id = ?", arguments: [podcastId]).map {
                [UInt8]($0)
            }
        }
    }

    /// The old URLs of a subscription.
    public func aliases(podcastId: String) throws -> [String] {
        try database.read { db in
            try String.fetchAll(
                db, sql: "SELECT url FROM podcast_alias WHERE podcastId = ? ORDER BY url", arguments: [podcastId])
        }
    }

    /// Removes a subscription (its files stay until a sync with `--delete`).
    @discardableResult
    public func unsubscribe(id: String) throws -> Bool {
        try database.write { db in
            try db.execute(sql: "DELETE FROM podcast_alias WHERE podcastId = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM podcast WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    // MARK: Files

    /// Every file record, by path. Read through a cursor: its one reused row is read in place, where
    /// `Row.fetchAll` first copied every row of a 40,000-file mirror.
    ///
    /// - Parameter forPlanning: leave out what planning never reads: every content hash, and the download dates,
    ///   task ids (empty) and validators of all but media files (images, subtitles and metadata are most of a mirror's
    ///   records: 30,000 of a 10,000-item library's 39,000, and 8 MB of strings a no-op sync held for nothing). A
    ///   record read so is never written back: the files a plan acts on are read whole (``entries(keys:)``).
    /// - Parameter podcasts: only the podcasts' records (true), only the others (false), or all (nil): a run that
    ///   syncs one side reads and looks at none of the other's files.
    /// - Parameter placesOnly: only where each file is and what it is (``placeColumns``), for readers that never
    ///   write a record back (the export).
    /// - Parameter forServing: where each file is, what it is, its container and a media file's validator
    ///   (``servingColumns``): what `serve` reads of every record to build what it answers from.
    public func entries(
        forPlanning: Bool = false, podcasts: Bool? = nil, placesOnly: Bool = false, forServing: Bool = false
    ) throws -> [IndexEntry] {
        try database.read { db in
            var entries: [IndexEntry] = []
            let filter: String
            switch podcasts {
            case nil: filter = ""
            case true?: filter = " WHERE \(MirrorIndex.isPodcastKey())"
            case false?: filter = " WHERE NOT \(MirrorIndex.isPodcastKey())"
            }
            // Room for them all at once: grown by doubling, the array could be left with room for 65,000 records.
            entries.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM file\(filter)") ?? 0)
            let columns =
                placesOnly
                ? MirrorIndex.placeColumns
                : forServing
                    ? MirrorIndex.servingColumns : forPlanning ? MirrorIndex.planningColumns : MirrorIndex.entryColumns
            try MirrorIndex.visit(db, columns: columns, filter: filter) { entries.append($0) }
            return entries
        }
    }

    /// ``entries(forServing:)``'s records, handed to `body` one at a time in path order and none kept: a reader that
    /// keeps a little of each (`serve`'s catalog) holds no array of them all (100,000 movies' records were 53 MB).
    /// `body` runs inside the read, so it must not use the index.
    public func forEachEntryForServing(_ body: (IndexEntry) throws -> Void) throws {
        try database.read { db in
            try MirrorIndex.visit(db, columns: MirrorIndex.servingColumns, filter: "", body)
        }
    }

    /// The records of the `metadata.json` files (the Jellyfin items' and the podcasts'), as
    /// ``forEachEntryForServing(_:)`` reads them, in path order: at most `limit` of them, those after the path `after`
    /// (nil: from the first). Read in runs, a reader of them all holds neither a list of all nor a read open while it
    /// reads the files they name.
    public func metadataEntriesForServing(after path: String?, limit: Int) throws -> [IndexEntry] {
        try database.read { db in
            var entries: [IndexEntry] = []
            let metadata =
                "((key >= 'metadata:' AND key < 'metadata;') OR (key >= 'podcast-metadata:' AND key < 'podcast-metadata;'))"
            try MirrorIndex.visit(
                db, columns: MirrorIndex.servingColumns, filter: " WHERE \(metadata) AND path > ?", limit: limit,
                arguments: [path ?? ""]
            ) { entries.append($0) }
            return entries
        }
    }

    /// Reads the `columns` of the records `filter` (a `WHERE` clause with `arguments`, or nothing) keeps, in path
    /// order, the first `limit` of them when given, through a cursor: its one reused row is read in place, where
    /// `Row.fetchAll` first copied every row.
    private static func visit(
        _ db: Database, columns: String, filter: String, limit: Int? = nil, arguments: StatementArguments = [],
        _ body: (IndexEntry) throws -> Void
    ) throws {
        let limited = limit.map { " LIMIT \($0)" } ?? ""
        let rows = try Row.fetchCursor(
            db, sql: "SELECT \(columns) FROM file\(filter) ORDER BY path\(limited)", arguments: arguments)
        var shared = SharedText()
        while let row = try rows.next() {
            if let entry = MirrorIndex.entry(row, sharing: &shared) { try body(entry) }
        }
    }

    /// The paths of the files of one kind, in path order (what ``entries(forPlanning:podcasts:placesOnly:)`` orders
    /// by).
    public func paths(kind: RemoteFile.Kind) throws -> [String] {
        try database.read { db in
            try String.fetchAll(
                db, sql: "SELECT path FROM file WHERE kind = ? ORDER BY path", arguments: [kind.rawValue])
        }
    }

    /// The whole records of these files, by key (those the index holds).
    public func entries(keys: Set<FileKey>) throws -> [FileKey: IndexEntry] {
        guard !keys.isEmpty else { return [:] }
        let all = keys.map(\.rawValue).sorted()
        return try database.read { db in
            // Not reserved for every key asked: in a first sync none is found, and room for 64,000 records held
            // through the downloads was a tenth of its peak memory.
            var entries: [FileKey: IndexEntry] = [:]
            // In chunks well under SQLite's limit on bound values.
            var shared = SharedText()
            for start in stride(from: 0, to: all.count, by: 500) {
                let chunk = Array(all[start..<min(start + 500, all.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT \(MirrorIndex.entryColumns) FROM file WHERE key IN (\(marks))",
                    arguments: StatementArguments(chunk))
                while let row = try rows.next() {
                    if let entry = MirrorIndex.entry(row, sharing: &shared) { entries[entry.file.key] = entry }
                }
            }
            return entries
        }
    }

    /// The SQL condition that `key` is a podcast file's, as `FileKey.isPodcast` tells them (compared by bytes: `LIKE`
    /// ignores case). The range, which holds both prefixes (`-` and `:` are 0x2D and 0x3A), lets SQLite read them by
    /// the key's index.
    static func isPodcastKey(_ key: String = "key") -> String {
        "(\(key) >= 'podcast-' AND \(key) < 'podcast;' AND substr(\(key), 1, 8) IN ('podcast:', 'podcast-'))"
    }

    /// The columns ``entry(_:)`` reads, by position (a lookup by name per column was a tenth of a no-op sync).
    private static let entryColumns =
        "key, path, kind, size, signature, itemId, versionId, mediaSourceId, container, downloadedAt, taskId, validator, "
        + "contentHash"

    /// ``entryColumns`` less what planning never reads (see ``entries(forPlanning:)``).
    private static let planningColumns =
        "key, path, kind, size, signature, itemId, versionId, mediaSourceId, container, "
        + "CASE kind WHEN 'media' THEN downloadedAt ELSE '' END, CASE kind WHEN 'media' THEN taskId ELSE '' END, "
        + "CASE kind WHEN 'media' THEN validator END, NULL"

    /// ``entryColumns`` less all but where each file is and what it is: key, path, kind, size, item, version (what the
    /// export reads; the signatures alone are a third of the index).
    private static let placeColumns = "key, path, kind, size, '', itemId, versionId, NULL, NULL, '', '', NULL, NULL"

    /// ``placeColumns`` with the container and a media file's validator (a transcode's quality): what `serve` reads.
    private static let servingColumns =
        "key, path, kind, size, '', itemId, versionId, NULL, container, '', '', "
        + "CASE kind WHEN 'media' THEN validator END, NULL"

    /// - Parameter shared: the ids and dates read so far: an item's files share its id (and a version's its version
    ///   and media source ids, most often the item's own), and one sync's files a handful of dates, so a record
    ///   holds the one copy read first (39,000 records of a 10,000-item library held 60,000 copies).
    private static func entry(_ row: Row, sharing shared: inout SharedText) -> IndexEntry? {
        guard let kind = RemoteFile.Kind(rawValue: row[2]) else { return nil }
        let versionId: String? = row[6]
        let mediaSourceId: String? = row[7]
        return IndexEntry(
            file: LocalFile(
                key: FileKey(rawValue: row[0]), path: row[1], kind: kind, size: row[3], signature: row[4],
                itemId: shared.one(row[5])),
            versionId: versionId.map { shared.one($0) }, mediaSourceId: mediaSourceId.map { shared.one($0) },
            container: row[8], downloadedAt: shared.one(row[9]), taskId: row[10], validator: row[11],
            contentHash: row[12])
    }

    /// Records a placed file, replacing the record of the same key or of the same path.
    public func record(_ entry: IndexEntry) throws {
        try record([entry])
    }

    /// Records placed files in one transaction, each replacing the record of the same key or of the same path.
    public func record(_ entries: [IndexEntry]) throws {
        guard !entries.isEmpty else { return }
        try database.write { db in
            let clear = try db.makeStatement(sql: "DELETE FROM file WHERE path = ? AND key != ?")
            let insert = try db.makeStatement(
                sql: """
                    INSERT OR REPLACE INTO file
                        (key, path, kind, itemId, versionId, mediaSourceId, container, size, signature, downloadedAt, taskId,
                         validator, contentHash)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for entry in entries {
                try clear.execute(arguments: [entry.file.path, entry.file.key.rawValue])
                try insert.execute(arguments: [
                    entry.file.key.rawValue, entry.file.path, entry.file.kind.rawValue, entry.file.itemId,
                    entry.versionId,
                    entry.mediaSourceId, entry.container, entry.file.size, entry.file.signature, entry.downloadedAt,
                    entry.taskId, entry.validator, entry.contentHash,
                ])
            }
        }
    }

    /// Forgets a file.
    public func forget(key: FileKey) throws {
        try forget(keys: [key])
    }

    /// Forgets files, in one transaction.
    public func forget(keys: [FileKey]) throws {
        guard !keys.isEmpty else { return }
        try database.write { db in
            let statement = try db.makeStatement(sql: "DELETE FROM file WHERE key = ?")
            for key in keys { try statement.execute(arguments: [key.rawValue]) }
        }
    }

    // MARK: Path repair (stored absolute paths made relative to the root)

    /// What ``repairAbsolutePaths(root:)`` did.
    public struct PathRepair: Sendable, Equatable {
        /// Rows whose absolute path became relative to the current root.
        public var repaired = 0
        /// Rows whose path could not be placed under the root (nothing there to find): forgotten, so the file
        /// is fetched again like any other missing file.
        public var forgotten: [String] = []
    }

    /// What becomes of one record's stored absolute path.
    struct PathRepairStep: Sendable, Equatable {
        var key: FileKey
        /// The path as stored.
        var stored: String
        /// The path relative to the root the record is given; nil when the record is forgotten.
        var relative: String?
    }

    /// Makes every stored absolute path relative to `root`, in one transaction: rows written by an older
    /// version that stored absolute paths, or an index carried over from a root at another place.
    ///
    /// A path under the current root loses the root's prefix; any other absolute path keeps what follows its
    /// last `Downloads/` folder (the mirror's layout is the same under every root); `file://` URLs are read as
    /// paths. A row that cannot be placed, or whose repaired path another row holds already, is forgotten
    /// (see ``pathRepairs(of:root:isHeld:)``). Whether the file is really there is the planner's business (a missing
    /// file is fetched again).
    public func repairAbsolutePaths(root: MirrorRoot) throws -> PathRepair {
        try database.write { db in
            try MirrorIndex.apply(try MirrorIndex.plannedPathRepairs(db, root: root.path, recording: []), db)
        }
    }

    /// The repairs ``repairAbsolutePaths(root:)`` would make once `recorded` (a killed run's journaled files) are
    /// recorded as ``record(_:)`` records them, read without changing anything.
    func plannedPathRepairs(root: MirrorRoot, recording recorded: [IndexEntry]) throws -> [PathRepairStep] {
        try database.read { db in try MirrorIndex.plannedPathRepairs(db, root: root.path, recording: recorded) }
    }

    /// Makes planned path repairs, in one transaction.
    func apply(_ steps: [PathRepairStep]) throws -> PathRepair {
        guard !steps.isEmpty else { return PathRepair() }
        return try database.write { db in try MirrorIndex.apply(steps, db) }
    }

    private static func plannedPathRepairs(_ db: Database, root: String, recording recorded: [IndexEntry]) throws
        -> [PathRepairStep]
    {
        // The rows the recorded files replace (of the same key or the same path, each in turn) are gone by then;
        // the paths the recorded files end at are held.
        let replacedKeys = Set(recorded.map(\.file.key))
        let replacedPaths = Set(recorded.map(\.file.path))
        var recordedNow: [IndexEntry] = []
        for entry in recorded { MirrorIndex.record(entry, into: &recordedNow) }
        let heldByRecorded = Set(recordedNow.map(\.file.path))
        let rows = try Row.fetchAll(
            db, sql: "SELECT key, path FROM file WHERE path LIKE '/%' OR path LIKE 'file:%' ORDER BY path")
        let stored = rows.compactMap { row -> (key: FileKey, path: String)? in
            let key = FileKey(rawValue: row[0])
            let path: String = row[1]
            guard !replacedKeys.contains(key), !replacedPaths.contains(path) else { return nil }
            return (key, path)
        }
        guard !stored.isEmpty else { return [] }
        let holder = try db.makeStatement(sql: "SELECT key FROM file WHERE path = ?")
        return try pathRepairs(of: stored, root: root) { path in
            if heldByRecorded.contains(path) { return true }
            guard !replacedPaths.contains(path), let key = try String.fetchOne(holder, arguments: [path]) else {
                return false
            }
            return !replacedKeys.contains(FileKey(rawValue: key))
        }
    }

    private static func apply(_ steps: [PathRepairStep], _ db: Database) throws -> PathRepair {
        var result = PathRepair()
        for step in steps {
            if let relative = step.relative {
                try db.execute(sql: "UPDATE file SET path = ? WHERE key = ?", arguments: [relative, step.key.rawValue])
                result.repaired += 1
            } else {
                try db.execute(sql: "DELETE FROM file WHERE key = ?", arguments: [step.key.rawValue])
                result.forgotten.append(step.stored)
            }
        }
        return result
    }

    /// What becomes of stored paths (pure): a relative one is left as it is (no step); an absolute one (`/…`, or
    /// `file:…` in any case, as the index's query finds them) is given the path ``relativePath(_:root:)`` finds,
    /// unless that is none or another record holds it already (one that `isHeld` says holds it, or one repaired
    /// before it here): then the record is forgotten. Records are taken in the order given (the index's: by path).
    static func pathRepairs(
        of records: [(key: FileKey, path: String)], root: String, isHeld: (String) throws -> Bool
    ) rethrows -> [PathRepairStep] {
        var repaired = Set<String>()
        var steps: [PathRepairStep] = []
        for record in records where storesAbsolutePath(record.path) {
            guard let relative = relativePath(record.path, root: root), !repaired.contains(relative),
                try !isHeld(relative)
            else {
                steps.append(PathRepairStep(key: record.key, stored: record.path, relative: nil))
                continue
            }
            repaired.insert(relative)
            steps.append(PathRepairStep(key: record.key, stored: record.path, relative: relative))
        }
        return steps
    }

    /// Whether a stored path is one ``repairAbsolutePaths(root:)`` repairs: what its query's `LIKE '/%' OR LIKE
    /// 'file:%'` finds (SQLite's `LIKE` ignores the case of ASCII letters).
    static func storesAbsolutePath(_ path: String) -> Bool {
        path.hasPrefix("/")
            || path.utf8.prefix(5).lazy.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }.elementsEqual("file:".utf8)
    }

    /// Records `entry` into records held in memory as ``record(_:)`` records it into the index: it replaces the
    /// record of the same key and the record of the same path.
    static func record(_ entry: IndexEntry, into entries: inout [IndexEntry]) {
        entries.removeAll { $0.file.key == entry.file.key || $0.file.path == entry.file.path }
        entries.append(entry)
    }

    /// The path relative to `root` that an absolute stored path stands for, or nil.
    static func relativePath(_ stored: String, root: String) -> String? {
        var path = stored
        if path.hasPrefix("file://") {
            path = String(path.dropFirst("file://".count))
            // file://host/…
            if !path.hasPrefix("/"), let slash = path.firstIndex(of: "/") { path = String(path[slash...]) }
            path = path.removingPercentEncoding ?? path
        }
        guard path.hasPrefix("/") else { return nil }
        let relative: String
        if path.hasPrefix(root + "/") {
            relative = String(path.dropFirst(root.count + 1))
        } else if let range = path.range(of: "/Downloads/", options: .backwards) {
            relative = "Downloads/" + path[range.upperBound...]
        } else {
            return nil
        }
        let normalised = relative.split(separator: "/").joined(separator: "/")
        return SafeName.isContained(normalised) && normalised.hasPrefix("Downloads/") ? normalised : nil
    }
}
