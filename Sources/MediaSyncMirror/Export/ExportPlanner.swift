import Foundation

/// What is at a path of the destination.
public enum DestinationFact: Sendable, Equatable {
    case missing
    /// A regular file of this size.
    case file(size: Int64)
    /// A folder, a symbolic link or anything else that is not a regular file.
    case other
}

/// A file the export did not write or delete, and why.
public struct ExportIssue: Codable, Sendable, Equatable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// What an export will do.
public struct ExportPlan: Sendable, Equatable {
    public enum Step: Sendable, Equatable {
        /// Write the target (a new file, or over the export's own older file when `replacing`).
        case copy(ExportTarget, replacing: Bool)
        /// Rename the export's own file at `from` to the target's path (the same source, a new name).
        case move(from: String, to: ExportTarget)
        /// Remove the export's own file.
        case delete(path: String, reason: String)
    }

    public var steps: [Step] = []
    /// Targets already exported from the same source.
    public var unchanged: [String] = []
    /// Targets not exported: too large for the file system, or a file of the user's in the way.
    public var skipped: [ExportIssue] = []
    /// Exported files whose source left the mirror (removed with `--delete`).
    public var leftover: [String] = []
    /// Manifest entries given up: the file is gone, or no longer the one the export wrote (left alone).
    public var forgotten: [ExportIssue] = []
    /// Why `--delete` deleted nothing.
    public var deletionAborted: String?
    /// The manifest to start the run from: the old one without the forgotten entries.
    public var manifest = ExportManifest()

    public init() {}

    public var bytesToWrite: Int64 {
        steps.reduce(0) { total, step in
            if case .copy(let target, _) = step { return total + target.size }
            return total
        }
    }
}

/// Compares what the destination should hold (targets) with what the export wrote before (the manifest) and what is
/// there (facts). Pure and table-tested.
public enum ExportPlanner {
    /// Why the old name of a renamed file is deleted (the executor keeps it when the new name was not written).
    public static let renamedReason = "renamed"

    /// The largest file FAT32 can hold: 4 GiB − 1.
    public static let fat32Limit: Int64 = 4 * 1024 * 1024 * 1024 - 1

    /// - Parameters:
    ///   - facts: what is at each target's path and each manifest path (a missing key counts as missing).
    ///   - maximumFileSize: the file system's limit (``fat32Limit`` on FAT32), nil for none.
    ///   - scopes: the scopes this run covers; manifest entries of other scopes are left as they are.
    public static func plan(
        targets: [ExportTarget], manifest: ExportManifest, facts: [String: DestinationFact], maximumFileSize: Int64?,
        scopes: Set<String>, delete: Bool, maxDelete: Int?
    ) -> ExportPlan {
        var plan = ExportPlan()
        var manifest = manifest
        func fact(_ path: String) -> DestinationFact { facts[path] ?? .missing }

        // Entries whose file is gone or changed by someone else are forgotten first.
        let sortedEntries = manifest.files.sorted(by: { $0.key < $1.key })
        for (path, entry) in sortedEntries where scopes.contains(entry.scope) {
            switch fact(path) {
            case .missing:
                manifest.files[path] = nil
            case .file(let size) where size == entry.size:
                break
            case .file, .other:
                manifest.files[path] = nil
                plan.forgotten.append(ExportIssue(path: path, reason: "changed since it was exported; left alone"))
            }
        }
        plan.manifest = manifest

        let targetPaths = Set(targets.map(\.path))
        // Where each key is held under a name no target wants (a candidate for a move).
        var movable: [String: String] = [:]
        for (path, entry) in sortedEntries
        where manifest.files[path] != nil && scopes.contains(entry.scope) && !targetPaths.contains(path)
            && movable[entry.key] == nil
        {
            movable[entry.key] = path
        }
        var moved = Set<String>()
        var placedKeys = Set<String>()
        var copies: [ExportPlan.Step] = []
        var playlistCopies: [ExportPlan.Step] = []
        var moves: [ExportPlan.Step] = []
        // Files first, then the playlists without the files that will not be there; playlists are written last, so
        // the executor can leave out a file that fails or is skipped during the run too.
        var skippedKeys = Set<String>()
        let ordered = targets.sorted { left, right in
            (left.isPlaylist ? 1 : 0, left.path) < (right.isPlaylist ? 1 : 0, right.path)
        }
        for original in ordered {
            var target = original
            if case .playlist(let list) = target.content {
                let kept = list.without(keys: skippedKeys)
                // Every file it lists is skipped: no playlist of nothing (an exported one left is a leftover).
                if kept.entries.isEmpty { continue }
                target.content = .playlist(kept)
            }
            if let limit = maximumFileSize, target.size > limit {
                plan.skipped.append(
                    ExportIssue(
                        path: target.path, reason: "\(target.size) bytes: too large for FAT32 (4 GiB - 1 at most)"))
                skippedKeys.insert(target.key)
                continue
            }
            if let entry = manifest.files[target.path] {
                if entry.key == target.key && entry.identity == target.identity && entry.size == target.size {
                    plan.unchanged.append(target.path)
                } else if target.isPlaylist {
                    playlistCopies.append(.copy(target, replacing: true))
                } else {
                    copies.append(.copy(target, replacing: true))
                }
                placedKeys.insert(target.key)
                continue
            }
            switch fact(target.path) {
            case .missing:
                if let from = movable[target.key], !moved.contains(from), let entry = manifest.files[from],
                    entry.identity == target.identity
                {
                    moved.insert(from)
                    moves.append(.move(from: from, to: target))
                } else if target.isPlaylist {
                    playlistCopies.append(.copy(target, replacing: false))
                } else {
                    copies.append(.copy(target, replacing: false))
                }
                placedKeys.insert(target.key)
            case .file, .other:
                plan.skipped.append(
                    ExportIssue(
                        path: target.path, reason: "a file the export did not write is at this name; left untouched"))
                skippedKeys.insert(target.key)
            }
        }
        plan.steps = moves + copies + playlistCopies

        var renamed: [ExportPlan.Step] = []
        var leftover: [String] = []
        let targetKeys = Set(targets.map(\.key))
        for (path, entry) in sortedEntries
        where manifest.files[path] != nil && scopes.contains(entry.scope) && !targetPaths.contains(path)
            && !moved.contains(path)
        {
            if targetKeys.contains(entry.key) {
                // The source is still in the mirror under another name: once the new name holds it, the old goes.
                if placedKeys.contains(entry.key) {
                    renamed.append(.delete(path: path, reason: ExportPlanner.renamedReason))
                }
            } else {
                leftover.append(path)
            }
        }
        plan.steps += renamed
        plan.leftover = leftover
        if delete && !leftover.isEmpty {
            if let maxDelete, leftover.count > maxDelete {
                plan.deletionAborted =
                    "\(leftover.count) exported files would be deleted, more than --max-delete \(maxDelete); none deleted"
            } else {
                plan.steps += leftover.map { .delete(path: $0, reason: "its source left the mirror") }
            }
        }
        return plan
    }
}
