import Foundation
import GRDB
import MediaSyncCore

/// Each movie's and episode's `MediaSources` and `MediaStreams` as last listed, with the item's `Etag` then
/// (issue 10, 6). Building them is most of a real 10.11 server's work on a listing (Jellyfin issues #14336,
/// #15063): library listings are asked without them, and they are asked for by id only for items that are new or
/// whose `Etag` changed. An item's `Etag` changes whenever the server saves it (`BaseItem.GetEtagValues`).
public struct MediaSourceCache: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var etag: String
        /// `{"MediaSources": […], "MediaStreams": […]}` as the server sent them.
        public var fields: JSONValue

        public init(etag: String, fields: JSONValue) {
            self.etag = etag
            self.fields = fields
        }
    }

    public var entries: [String: Entry]

    public init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    /// The fields cached from a full item (nil when it has no media sources).
    static func fields(of item: [String: JSONValue]) -> JSONValue? {
        guard let sources = item["MediaSources"], case .array(let list) = sources, !list.isEmpty else { return nil }
        var fields: [String: JSONValue] = ["MediaSources": sources]
        if let streams = item["MediaStreams"] { fields["MediaStreams"] = streams }
        return .object(fields)
    }
}

extension MirrorIndex {
    /// The cache of media sources (see ``MediaSourceCache``).
    /// The rows are parsed on every core (10,000 items' media sources are a few tens of MB of JSON).
    public func mediaSourceCache() throws -> MediaSourceCache {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT itemId, etag, fields FROM media_cache").map { row in
                (itemId: row["itemId"] as String, etag: row["etag"] as String, fields: row["fields"] as Data)
            }
        }
        let parsed = Parallel.map(rows) { row in try? JSONValue(parsing: Array(row.fields)) }
        var entries: [String: MediaSourceCache.Entry] = [:]
        entries.reserveCapacity(rows.count)
        for (row, fields) in zip(rows, parsed) {
            guard let fields else { continue }
            entries[row.itemId] = MediaSourceCache.Entry(etag: row.etag, fields: fields)
        }
        return MediaSourceCache(entries: entries)
    }

    /// Stores entries (replacing those of the same items) in one transaction.
    public func saveMediaSources(_ entries: [String: MediaSourceCache.Entry]) throws {
        guard !entries.isEmpty else { return }
        try database.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT OR REPLACE INTO media_cache (itemId, etag, fields) VALUES (?, ?, ?)")
            for (id, entry) in entries {
                var bytes: [UInt8] = []
                JSONWriter.write(entry.fields, indent: 0, into: &bytes)
                try statement.execute(arguments: [id, entry.etag, Data(bytes)])
            }
        }
    }
}
