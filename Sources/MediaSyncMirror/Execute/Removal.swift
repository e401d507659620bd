import Foundation
import MediaSyncCore

/// `mediasync rm`: deletes downloads and their index entries, and makes sure sync does not bring them back.
/// The deletions are planned first (a dry run prints the plan) and applied by the mirror's executor, through the
/// same destructive gate as sync's own deletions.
public struct Removal: Sendable {
    let executor: MirrorExecutor
    var index: MirrorIndex { executor.index }

    init(executor: MirrorExecutor) {
        self.executor = executor
    }

    /// What was removed (or, in a dry run, what would be).
    public struct Result: Codable, Sendable, Equatable {
        public var deleted: [String] = []
        public var unselected: [String] = []
        public var unsubscribed: [String] = []
        public var dryRun: Bool? = nil
    }

    /// Removes a Jellyfin item (movie, series, season, episode) or a podcast episode, by id.
    ///
    /// A selected item is unselected; anything else (an episode of a selected series, a podcast episode)
    /// is excluded, so the next sync does not fetch it again until it is selected again.
    /// - Parameter dryRun: plan only: the result says what would go, and nothing changes.
    /// - Throws: ``SyncError`` of kind `notFound` when the id names nothing held or selected.
    public func remove(id: String, dryRun: Bool = false) throws -> Result {
        if try index.subscription(matching: id) != nil { return try removePodcast(id, dryRun: dryRun) }
        var result = Result(dryRun: dryRun ? true : nil)
        let all = try index.entries()
        // A movie's, series' or season's folder is the one holding its metadata.json: everything under it goes.
        let folders = all.filter { $0.file.kind == .metadata && $0.file.itemId == id }.map { entry in
            entry.file.path.split(separator: "/").dropLast().joined(separator: "/") + "/"
        }
        let entries = all.filter { entry in
            entry.file.itemId == id || entry.versionId == id || folders.contains { entry.file.path.hasPrefix($0) }
        }
        let selected = try index.selections().contains { $0.id == id }
        guard selected || !entries.isEmpty else {
            throw SyncError.notFound(
                "\(id) is neither downloaded nor selected (see `mediasync du`, `mediasync selections`)")
        }
        if selected { result.unselected.append(id) }
        guard !dryRun else {
            result.deleted = Removal.deletions(entries).map(\.path)
            return result
        }
        if selected {
            _ = try index.unselect(id: id)
        } else {
            let parent = entries.first.flatMap { $0.file.path.split(separator: "/").dropFirst().first.map(String.init) }
            try index.exclude(id, parent: parent)
        }
        result.deleted = try delete(entries)
        return result
    }

    /// Unsubscribes from a podcast and deletes its episodes.
    public func removePodcast(_ key: String, dryRun: Bool = false) throws -> Result {
        guard let subscription = try index.subscription(matching: key) else {
            throw SyncError.notFound("no subscription \(key) (see `mediasync podcast list`)")
        }
        var result = Result(dryRun: dryRun ? true : nil)
        result.unsubscribed.append(subscription.id)
        let entries = try index.entries().filter {
            $0.file.key.isPodcast && $0.file.itemId == subscription.id
        }
        guard !dryRun else {
            result.deleted = Removal.deletions(entries).map(\.path)
            return result
        }
        _ = try index.unsubscribe(id: subscription.id)
        result.deleted = try delete(entries)
        return result
    }

    /// Deletes every download, every selection and every subscription.
    public func removeAll(dryRun: Bool = false) throws -> Result {
        var result = Result(dryRun: dryRun ? true : nil)
        result.unselected = try index.selections().map(\.id)
        result.unsubscribed = try index.subscriptions().map(\.id)
        let entries = try index.entries()
        guard !dryRun else {
            result.deleted = Removal.deletions(entries).map(\.path)
            return result
        }
        for id in result.unselected { _ = try index.unselect(id: id) }
        for id in result.unsubscribed { _ = try index.unsubscribe(id: id) }
        result.deleted = try delete(entries)
        return result
    }

    /// The plan: each entry's file, in path order.
    static func deletions(_ entries: [IndexEntry]) -> [MirrorExecutor.Deletion] {
        entries.sorted { $0.file.path < $1.file.path }.map { .init(path: $0.file.path, key: $0.file.key) }
    }

    private func delete(_ entries: [IndexEntry]) throws -> [String] {
        let outcome = try executor.delete(Removal.deletions(entries), gate: .init(allowed: true))
        if let failure = outcome.failed.first {
            throw SyncError.fileSystem("\(failure.path): \(failure.message)")
        }
        return outcome.deleted
    }
}
