import Foundation
import GRDB
import MediaSyncCore
import MediaSyncServer

/// The play state recorded here: `mediasync played`, `mediasync play`, and what the next sync sends.
public struct PlayStateBook: Sendable {
    let index: MirrorIndex

    init(index: MirrorIndex) {
        self.index = index
    }

    /// An item the mirror holds, as play state names it.
    public struct Target: Sendable, Equatable {
        /// The Jellyfin item id (lowercase, no dashes) or the podcast episode id.
        public var id: String
        /// A podcast episode: its state stays here (no server to send it to).
        public var isPodcast: Bool
        /// The absolute paths of its media files, first the primary version.
        public var mediaPaths: [String]
        /// Which resume rule its stops follow: an audiobook's or a book's (as its folder's `metadata.json` says), else
        /// a video's.
        public var media: ResumeRule.Media = .video
    }

    /// The resume rule of the item whose media is at `path` (relative to the root): by the `itemType` of the
    /// `metadata.json` of its folder below `Downloads/`.
    static func media(ofMediaAt path: String, root: MirrorRoot) -> ResumeRule.Media {
        let parts = path.split(separator: "/")
        guard parts.count >= 3, parts[0] == LibraryLayout.downloads[...],
            let metadata = root.absolute("\(LibraryLayout.downloads)/\(parts[1])/\(LibraryLayout.metadataFile)"),
            let data = FileManager.default.contents(atPath: metadata),
            let document = try? JSONDecoder().decode(DownloadMetadata.self, from: data)
        else { return .video }
        switch document.itemType {
        case "AudioBook": return .audiobook
        case "Book": return .book
        default: return .video
        }
    }

    /// The item `id` names (a Jellyfin movie or episode, or a podcast episode), with its media files.
    /// - Throws: ``SyncError`` (not found) when the mirror holds no media of it.
    public func target(_ id: String, root: MirrorRoot) throws -> Target {
        let jellyfin = JellyfinID.comparable(id)
        let rows = try index.database.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT key, path, itemId, versionId FROM file WHERE kind = 'media' AND (itemId = ? OR versionId = ?) "
                    + "ORDER BY path",
                arguments: [jellyfin, id])
        }
        let podcast = rows.filter { FileKey(rawValue: $0["key"]).isPodcast && ($0["versionId"] as String?) == id }
        let media = rows.filter { !FileKey(rawValue: $0["key"]).isPodcast && ($0["itemId"] as String) == jellyfin }
        let chosen = media.isEmpty ? podcast : media
        guard !chosen.isEmpty else {
            throw SyncError.notFound(
                "\(id) is not a movie, an episode or a podcast episode this mirror holds (see `mediasync ls`)")
        }
        return Target(
            id: media.isEmpty ? id : jellyfin, isPodcast: media.isEmpty,
            mediaPaths: chosen.compactMap { root.absolute($0["path"]) },
            media: media.first.map { PlayStateBook.media(ofMediaAt: $0["path"], root: root) } ?? .video)
    }

    /// Records that the user watched, unwatched or stopped in an item; the next sync sends it (podcast episodes keep
    /// it here). Returns the event as recorded.
    @discardableResult
    public func mark(_ target: Target, _ kind: PlayEvent.Kind, positionTicks: Int64 = 0, at: Date = Date()) throws
        -> PlayEvent
    {
        try index.record(
            PlayEvent(
                itemId: target.id, kind: kind, positionTicks: positionTicks, at: at,
                state: target.isPodcast ? .local : .pending))
    }

    /// Records where a player stopped, by Jellyfin's resume rules (played past 90 %, nothing under 5 %; an audiobook
    /// by its first and last 5 minutes, a book as it is: ``ResumeRule``).
    /// Returns the event recorded, nil when nothing was.
    @discardableResult
    public func stopped(_ target: Target, position: Int64, runtime: Int64?, at: Date = Date()) throws -> PlayEvent? {
        guard
            let event = ResumeRule.event(
                itemId: target.id, position: position, runtime: runtime, at: at, media: target.media)
        else {
            return nil
        }
        return try mark(target, event.kind, positionTicks: event.positionTicks, at: at)
    }

    /// Every event, oldest first.
    public func events() throws -> [PlayEvent] {
        try index.playEvents()
    }

    /// Where to resume an item: the position of its latest event here, when that is a position.
    public func resumePosition(_ target: Target) throws -> Int64? {
        let latest = try index.playEvents().last { $0.itemId == target.id && $0.state != .superseded }
        guard let latest, latest.kind == .position else { return nil }
        return latest.positionTicks
    }
}

extension Mirror {
    /// The play state recorded here.
    public var playState: PlayStateBook { PlayStateBook(index: index) }
}
