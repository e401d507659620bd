/// Options that change what a sync plans.
public struct SyncOptions: Sendable, Equatable {
    /// Whether files nothing wants any more are deleted (otherwise they are only reported).
    public var delete: Bool
    /// Whether the run only plans: it prints what it would do and changes nothing (the executor's one gate).
    public var dryRun: Bool
    /// When more files than this would be deleted, no file is deleted (rclone's `--max-delete`).
    public var maxDelete: Int?

    /// A storage budget in bytes: downloads only up to it, beside what is held, most wanted first.
    public var budget: Int64?
    /// Server transcodes fetched at once (`--transcodes N`): one by default, to be a good guest.
    public var transcodes: Int = 1

    public init(
        delete: Bool = false, dryRun: Bool = false, maxDelete: Int? = nil, budget: Int64? = nil, transcodes: Int = 1
    ) {
        self.transcodes = max(1, transcodes)
        self.budget = budget
        self.delete = delete
        self.dryRun = dryRun
        self.maxDelete = maxDelete
    }
}

/// One step of a sync.
public enum SyncAction: Hashable, Sendable {
    /// Why a file is fetched or written.
    public enum Reason: String, Hashable, Sendable, Codable {
        /// Not in the mirror yet.
        case new
        /// The remote version differs from the one held (signature changed).
        case changed
        /// The index has it, but the file is not on disk.
        case missing
        /// The file on disk does not have the recorded size.
        case damaged
    }

    /// Fetch a file and place it.
    case download(RemoteFile, Reason)
    /// Write generated content (metadata) in place.
    case write(RemoteFile, Reason)
    /// The file is held, unchanged, at an old path: rename it instead of fetching it again.
    case move(from: String, to: RemoteFile)
    /// The index names a path where the file is not, but it is where it should be (a stale stored path): only the
    /// index changes, nothing is fetched.
    case adopt(RemoteFile, from: String)
    /// Remove a file nothing wants any more (only planned with ``SyncOptions/delete``).
    case delete(LocalFile)
    /// A file nothing wants any more, kept because deletion was not asked for.
    case keepExtraneous(LocalFile)
    /// A file of an item absent from the listings that the server did not confirm gone (a library scan shifted the
    /// pages, ties came in another order, the item could not be asked about): kept even with `--delete`.
    case keepUnconfirmed(LocalFile)
    /// A played item of a selection with played cleanup, not to go yet (in its grace period, or its played state
    /// is not yet on the server): kept even with `--delete`, not fetched again.
    case keepPlayed(LocalFile)

    /// The wanted file a download, write, move or adoption is about; nil for the held files' actions.
    public var remoteFile: RemoteFile? {
        switch self {
        case .download(let file, _), .write(let file, _), .move(_, let file), .adopt(let file, _): return file
        case .delete, .keepExtraneous, .keepUnconfirmed, .keepPlayed: return nil
        }
    }
}

/// The result of planning: the actions, in order.
public struct SyncPlan: Sendable, Equatable {
    public var actions: [SyncAction]

    public init(actions: [SyncAction]) {
        self.actions = actions
    }

    /// The files to fetch.
    public var downloads: [RemoteFile] {
        actions.compactMap { if case .download(let file, _) = $0 { return file } else { return nil } }
    }

    /// Bytes the downloads will add, from the sizes the remote side states.
    public var bytesToDownload: Int64 {
        downloads.reduce(0) { $0 + ($1.plannedSize ?? 0) }
    }

    /// Whether the plan changes nothing.
    public var isEmpty: Bool {
        actions.allSatisfy {
            switch $0 {
            case .keepExtraneous, .keepUnconfirmed, .keepPlayed: return true
            default: return false
            }
        }
    }
}

/// What the server answered when the items absent from the listings were asked for by id.
public struct ConfirmationAnswer: Sendable, Equatable {
    /// Items the server does not have any more (not returned by id, or only as a virtual item without a file).
    public var gone: Set<String>
    /// Items the server still has, but outside every current selection (the user deselected them).
    public var outsideSelections: Set<String>

    public init(gone: Set<String>, outsideSelections: Set<String> = []) {
        self.gone = gone
        self.outsideSelections = outsideSelections
    }
}

/// Decides what a sync does. Pure: no clock, no file system, no network.
///
/// Walks the remote and the local side in lock step by key (rclone's march): remote only → download
/// (or write); both → compare signature, path and size; local only → delete when asked, else keep and report.
///
/// The wanted files' actions come first, in the order of their paths (the remote side may come in any order: only
/// the few files acted on are sorted, not every file wanted), then the held files' in their order.
public enum SyncPlanner {
    public static func plan(remote: RemoteSnapshot, local: LocalSnapshot, options: SyncOptions) -> SyncPlan {
        var actions: [SyncAction] = []
        // Positions, not copies: the files are read where they are (a copy of a file is a retain and a release of each
        // of its strings, for tens of thousands of files every sync).
        var localByKey: [FileKey: Int] = [:]
        localByKey.reserveCapacity(local.files.count)
        var keyRepeats = false
        for position in local.files.indices
        where localByKey.updateValue(position, forKey: local.files[position].key) != nil {
            keyRepeats = true
        }
        // Which held files are wanted, marked by position as the wanted files find them; a set of the wanted keys
        // (a second hash of each) only when two held files share a key, where a position would name one of them.
        var wantedHeld = [Bool](repeating: false, count: local.files.count)
        var wantedKeys = Set<FileKey>()
        for position in remote.files.indices {
            let key = remote.files[position].key
            if keyRepeats { wantedKeys.insert(key) }
            guard let held = localByKey[key] else {
                actions.append(fetch(remote.files[position], .new))
                continue
            }
            wantedHeld[held] = true
            if let action = compare(remote.files[position], local.files[held], onDisk: local.onDisk) {
                actions.append(action)
            }
        }
        // In path order, as if the remote side had come sorted (equal paths keep their order). Each action's path is
        // taken once: read in the comparison, it copied a whole file twice per comparison.
        let paths = actions.map { $0.remoteFile?.path ?? "" }
        let order = paths.indices.sorted { paths[$0] < paths[$1] }
        actions = order.map { actions[$0] }
        for position in local.files.indices
        where !(keyRepeats ? wantedKeys.contains(local.files[position].key) : wantedHeld[position]) {
            let file = local.files[position]
            let played = remote.playedCleanup(file)
            if played.kept {
                actions.append(.keepPlayed(file))
            } else if played.released && !remote.keeps(file) {
                // Played cleanup goes without `--delete` (still through the destructive gate and `--max-delete`).
                actions.append(.delete(file))
            } else if !options.delete {
                actions.append(.keepExtraneous(file))
            } else if remote.keeps(file) {
                actions.append(.keepUnconfirmed(file))
            } else {
                actions.append(.delete(file))
            }
        }
        return SyncPlan(actions: actions)
    }

    /// The items whose files a plan deletes although no listing held them: their absence must be confirmed by id
    /// before anything of them is deleted. Items a listing held and the selection's own rules left out (a
    /// retention window, a season filter, `mediasync rm`) need no confirmation; metadata follows its media.
    /// - Parameter guarded: which files the rule applies to (the Jellyfin side; a podcast's feed is its own truth).
    public static func absentItems(
        _ plan: SyncPlan, listed: Set<String>, guarded: (LocalFile) -> Bool = { _ in true }
    ) -> Set<String> {
        var absent = Set<String>()
        for action in plan.actions {
            guard case .delete(let file) = action, file.kind != .metadata, guarded(file), !listed.contains(file.itemId)
            else { continue }
            absent.insert(file.itemId)
        }
        return absent
    }

    /// Of the absent items, those whose files are kept: every one the server did not confirm gone. An item is
    /// confirmed gone when the server's answer by id does not hold it, or holds it outside every selection
    /// (deselected). Without an answer (the question failed) nothing is confirmed.
    public static func unconfirmed(absent: Set<String>, answer: ConfirmationAnswer?) -> Set<String> {
        guard let answer else { return absent }
        return absent.filter { !answer.gone.contains($0) && !answer.outsideSelections.contains($0) }
    }

    /// A file to fetch: written when its bytes are at hand, downloaded otherwise.
    private static func fetch(_ remote: RemoteFile, _ reason: SyncAction.Reason) -> SyncAction {
        if case .inline = remote.content { return .write(remote, reason) }
        return .download(remote, reason)
    }

    /// What to do about a wanted file the index holds (nil: nothing).
    private static func compare(_ remote: RemoteFile, _ local: LocalFile, onDisk: [String: Int64]) -> SyncAction? {
        guard local.signature == remote.signature else { return fetch(remote, .changed) }
        guard let size = onDisk[local.path] else {
            if let found = expectedPath(of: remote, heldAs: local), onDisk[found] == local.size {
                return .adopt(remote, from: local.path)
            }
            return fetch(remote, .missing)
        }
        guard size == local.size else { return fetch(remote, .damaged) }
        if !samePlace(local.path, remote) { return .move(from: local.path, to: remote) }
        return nil
    }

    /// Where a held file should be now, when that is not where the index has it: the planned path, or for
    /// media the planned path with the extension it was saved with.
    public static func expectedPath(of remote: RemoteFile, heldAs local: LocalFile) -> String? {
        guard local.path != remote.path else { return nil }
        guard remote.kind == .media else { return remote.path }
        let name = local.path.lastIndex(of: "/").map { local.path.index(after: $0) } ?? local.path.startIndex
        guard let dot = local.path[name...].lastIndex(of: ".") else { return remote.path }
        return String(stem(remote.path)) + local.path[dot...]
    }

    /// Media files take their extension from the server's answer, which the plan cannot know:
    /// a media file matches its planned path when only the extension differs.
    private static func samePlace(_ path: String, _ remote: RemoteFile) -> Bool {
        if path == remote.path { return true }
        guard remote.kind == .media else { return false }
        return stem(path) == stem(remote.path)
    }

    static func stem(_ path: String) -> Substring {
        let name = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[name...].lastIndex(of: ".") else { return path[...] }
        return path[..<dot]
    }
}
