import Foundation
import MediaSyncCore

/// `mediasync rm`: deletes downloads and their index entries, and makes sure sync does not bring them back.
/// Deleting goes through the executor's file operations (``FilePlacer``), like sync's own deletions.
public struct Removal: Sendable {
    let root: MirrorRoot
    let index: MirrorIndex

    public init(root: MirrorRoot, index: MirrorIndex) {
        self.root = root
        self.index = index
    }

    /// What was removed.
    public struct Result: Codable, Sendable, Equatable {
        public var deleted: [String] = []
        public var unselected: [String] = []
        public var unsubscribed: [String] = []
    }

    /// Removes a Jellyfin item (movie, series, season, episode) or a podcast episode, by id.
    ///
    /// A selected item is unselected; anything else (an episode of a selected series, a podcast episode)
    /// is excluded, so the next sync does not fetch it again until it is selected again.
    /// - Throws: ``SyncError`` of kind `notFound` when the id names nothing held or selected.
    public func remove(id: String) throws -> Result {
        if try index.subscription(matching: id) != nil { return try removePodcast(id) }
        var result = Result()
        let all = try index.entries()
        // A movie's, series' or season's folder is the one holding its metadata.json: everything under it goes.
        let folders = all.filter { $0.file.kind == .metadata && $0.file.itemId == id }.map { entry in
            entry.file.path.split(separator: "/").dropLast().joined(separator: "/") + "/"
        }
        let entries = all.filter { entry in
            entry.file.itemId == id || entry.versionId == id || folders.contains { entry.file.path.hasPrefix($0) }
        }
        let selected = try index.unselect(id: id)
        if selected { result.unselected.append(id) }
        guard selected || !entries.isEmpty else {
            throw SyncError(
                .notFound, "\(id) is neither downloaded nor selected (see `mediasync du`, `mediasync selections`)")
        }
        if !selected {
            let parent = entries.first.flatMap { $0.file.path.split(separator: "/").dropFirst().first.map(String.init) }
            try index.exclude(id, parent: parent)
        }
        result.deleted = try delete(entries)
        return result
    }

    /// Unsubscribes from a podcast and deletes its episodes.
    public func removePodcast(_ key: String) throws -> Result {
        guard let subscription = try index.subscription(matching: key) else {
            throw SyncError(.notFound, "no subscription \(key) (see `mediasync podcast list`)")
        }
        var result = Result()
        try index.unsubscribe(id: subscription.id)
        result.unsubscribed.append(subscription.id)
        result.deleted = try delete(
            try index.entries().filter { $0.file.key.hasPrefix("podcast") && $0.file.itemId == subscription.id })
        return result
    }

    /// Deletes every download, every selection and every subscription.
    public func removeAll() throws -> Result {
        var result = Result()
        for selection in try index.selections() where try index.unselect(id: selection.id) {
            result.unselected.append(selection.id)
        }
        for subscription in try index.subscriptions() where try index.unsubscribe(id: subscription.id) {
            result.unsubscribed.append(subscription.id)
        }
        result.deleted = try delete(try index.entries())
        return result
    }

    private func delete(_ entries: [IndexEntry]) throws -> [String] {
        let placer = FilePlacer(root: root, durable: true)
        var deleted: [String] = []
        for entry in entries.sorted(by: { $0.file.path < $1.file.path }) {
            try placer.remove(entry.file.path)
            try index.forget(key: entry.file.key)
            deleted.append(entry.file.path)
        }
        return deleted
    }
}
