import Foundation
import GRDB
import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer

/// Each movie's and episode's `MediaSources` and `MediaStreams` as last listed, with the item's `Etag` then, so a
/// listing need not ask for them again. Building them is most of a real 10.11 server's work on a listing (Jellyfin
/// issues #14336, #15063): library listings are asked without them, and they are asked for by id only for items that are new or
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

    /// The members of the cached fields that planning reads, at any depth: what a version's file, its signature and
    /// its subtitles are made of (`MirrorFiles`), and what tells a file from a stream (`SelectionExpander`). The
    /// cache is loaded keeping only these; a `metadata.json` that is written gets the whole fields
    /// (``MirrorIndex/wholeMediaSourceFields(itemId:)``).
    static let planningKeys: Set<String> = [
        "MediaSources", "MediaStreams", "Id", "Name", "Container", "Size", "ETag", "Protocol", "IsRemote",
        "RunTimeTicks", "Type", "Index", "Codec", "Language", "Title", "Path", "IsForced", "IsExternal", "IsDefault",
        // Whether a track already fits an audio quality (`AudioQuality.fits`): its bit rate, codec and channels.
        "Bitrate", "BitRate", "Channels",
    ]

    /// What a sync loads of an item's cached fields: ``planningKeys`` at every depth, of each version only its
    /// subtitle streams (a version's file and subtitles are planned from them; a video's video and audio streams are
    /// never read) and, for a version without video (a track), its audio streams (what an audio quality is decided
    /// by), and not the item's own `MediaStreams` (the default version's streams again).
    static func planningCopy(of fields: JSONValue) -> JSONValue {
        let kept = fields.keeping(planningKeys)
        guard case .object(var members) = kept else { return kept }
        members["MediaStreams"] = nil
        if case .array(let sources)? = members["MediaSources"] {
            members["MediaSources"] = .array(
                sources.map { source in
                    guard case .object(var version) = source, case .array(let streams)? = version["MediaStreams"]
                    else { return source }
                    let typed = streams.map { MediaStream(unchecked: $0) }
                    let isAudioOnly = !typed.contains { $0.type == "Video" }
                    version["MediaStreams"] = .array(
                        zip(streams, typed).filter { $1.isSubtitle || (isAudioOnly && $1.type == "Audio") }.map(\.0))
                    return .object(version)
                })
        }
        return .object(members)
    }

    /// The fields cached from a full item (nil when it has no media sources).
    static func fields(of item: JSONObject) -> JSONValue? {
        guard let sources = item["MediaSources"], case .array(let list) = sources, !list.isEmpty else { return nil }
        var fields: JSONObject = ["MediaSources": sources]
        if let streams = item["MediaStreams"] { fields["MediaStreams"] = streams }
        return .object(fields)
    }
}

extension MirrorIndex {
    /// The cache of media sources (see ``MediaSourceCache``), each entry abridged to what planning reads
    /// (``MediaSourceCache/planningCopy(of:)``): 10,000 items' media sources are a few tens of MB of JSON, and built whole
    /// they were most of a no-op sync's memory. Each row keeps its abridged copy beside the whole one (`planning`),
    /// which is what is read; rows stored before it was kept are abridged as they are parsed. The rows are parsed on
    /// every core.
    public func mediaSourceCache() throws -> MediaSourceCache {
        let sql =
            "SELECT itemId, etag, COALESCE(planning, fields) AS fields, planning IS NULL AS whole FROM media_cache"
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                (
                    itemId: row["itemId"] as String, etag: row["etag"] as String, fields: row["fields"] as Data,
                    whole: row["whole"] as Bool
                )
            }
        }
        let parsed = Parallel.map(rows) { row in
            let value = try? JSONValue(parsing: Array(row.fields), keepingKeys: MediaSourceCache.planningKeys)
            return row.whole ? value.map(MediaSourceCache.planningCopy) : value
        }
        var entries: [String: MediaSourceCache.Entry] = [:]
        entries.reserveCapacity(rows.count)
        for (row, fields) in zip(rows, parsed) {
            guard let fields else { continue }
            entries[row.itemId] = MediaSourceCache.Entry(etag: row.etag, fields: fields)
        }
        return MediaSourceCache(entries: entries)
    }

    /// One item's cached fields, whole (nil when none are cached or they cannot be read).
    public func wholeMediaSourceFields(itemId: String) -> JSONValue? {
        let bytes = try? database.read { db in
            try Data.fetchOne(db, sql: "SELECT fields FROM media_cache WHERE itemId = ?", arguments: [itemId])
        }
        return bytes.flatMap { $0 }.flatMap { try? JSONValue(parsing: Array($0)) }
    }

    /// Stores entries (replacing those of the same items) in one transaction; their bytes, whole and abridged, are
    /// made on every core first (a first sync stores every movie's and episode's).
    public func saveMediaSources(_ entries: [String: MediaSourceCache.Entry]) throws {
        guard !entries.isEmpty else { return }
        // Compact JSON: the pretty form, indented, was half white space (a first sync of 3,200 items wrote 15 MB).
        let rows = Parallel.map(Array(entries)) { id, entry in
            let whole = JSONWriter.compactBytes(entry.fields)
            let planning = JSONWriter.compactBytes(MediaSourceCache.planningCopy(of: entry.fields))
            return (id: id, etag: entry.etag, whole: Data(whole), planning: Data(planning))
        }
        try database.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT OR REPLACE INTO media_cache (itemId, etag, fields, planning) VALUES (?, ?, ?, ?)")
            for row in rows {
                try statement.execute(arguments: [row.id, row.etag, row.whole, row.planning])
            }
        }
    }
}
