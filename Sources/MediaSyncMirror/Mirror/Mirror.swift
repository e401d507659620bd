import Foundation
import MediaSyncCore
import MediaSyncHTTP

/// A mirror root opened by a command: it owns the root's folders, its index, its staging area, its executor (the one
/// place that changes the mirror) and, when opened for changes, its lock. Every command opens one and asks it.
///
/// ```swift
/// let mirror = try Mirror.open(MirrorRoot.resolve(nil))       // locked: sync, rm, gc, reindex, export, get
/// let usage = try Mirror.openForReading(root).storage.usage()   // no lock: du, ls, path, verify
/// ```
public final class Mirror: Sendable {
    public let root: MirrorRoot
    public let index: MirrorIndex
    /// Makes every change; it holds the root's lock (when there is one), so whatever is made from this mirror keeps
    /// the root locked as long as it lives.
    let executor: MirrorExecutor

    private init(root: MirrorRoot, index: MirrorIndex, lock: RootLock?, durable: Bool) {
        self.root = root
        self.index = index
        self.executor = MirrorExecutor(root: root, index: index, durable: durable, lock: lock)
    }

    /// Opens a root for changes: creates its folders, takes its lock (or throws ``SyncError`` `alreadyRunning`),
    /// opens and migrates its index, removes what a killed run left in staging and records the files a killed run
    /// placed but did not record.
    /// - Parameters:
    ///   - durable: flush each written file and its folder to the disk (`--no-durable` turns it off).
    ///   - planOnly: a dry run: the lock is taken but nothing is changed, not even the housekeeping above (a dry
    ///     run's plan counts the journal's files as held instead).
    public static func open(_ root: MirrorRoot, durable: Bool = true, planOnly: Bool = false) throws -> Mirror {
        let lock = try RootLock(root: root)
        let mirror = Mirror(root: root, index: try MirrorIndex(path: root.indexPath), lock: lock, durable: durable)
        if !planOnly {
            mirror.executor.removeStaleTemporaries()
            try mirror.executor.recoverJournal()
        }
        return mirror
    }

    /// Opens a root to read it, without its lock: what is held, where, how big (`du`, `ls`, `path`, `verify`).
    public static func openForReading(_ root: MirrorRoot) throws -> Mirror {
        try root.prepare()
        return Mirror(root: root, index: try MirrorIndex(path: root.indexPath), lock: nil, durable: false)
    }

    /// `reindex`: under the root's lock, moves the index aside (as `index.sqlite.old`) and rebuilds it from the
    /// tree's `metadata.json` files.
    public static func rebuildIndex(_ root: MirrorRoot) throws -> Reindexer.Result {
        let lock = try RootLock(root: root)
        return try withExtendedLifetime(lock) { try Reindexer.rebuildFresh(root: root) }
    }

    /// A mirror over an index the caller opened, without taking the lock: for a caller that holds it already, or a
    /// test that reads and changes its own scratch root.
    public static func using(root: MirrorRoot, index: MirrorIndex, durable: Bool = true) -> Mirror {
        Mirror(root: root, index: index, lock: nil, durable: durable)
    }

    /// Whether this mirror holds the root's lock (opened with ``open(_:durable:)``).
    public var isLocked: Bool { executor.lock != nil }

    /// A sync of this mirror's selections and subscriptions, with the signed-in `session` (nil: podcasts only).
    public func sync(
        session: Session?, configuration: HTTPClientConfiguration, transferOptions: TransferOptions,
        feedCredentials: FeedCredentialStore?
    ) -> MirrorSync {
        sync(
            server: session?.client, client: session?.http ?? HTTPClient(configuration: configuration),
            transferOptions: transferOptions, feedCredentials: feedCredentials)
    }

    /// A sync of this mirror's selections and subscriptions.
    /// - Parameters:
    ///   - server: the signed-in Jellyfin server, or nil (then only podcasts are synced).
    ///   - client: the HTTP client for feeds and downloads.
    public func sync(
        server: (any MediaServer)?, client: HTTPClient, transferOptions: TransferOptions = TransferOptions(),
        feedCredentials: FeedCredentialStore? = nil
    ) -> MirrorSync {
        MirrorSync(
            root: root, index: index, server: server, client: client, transferOptions: transferOptions,
            feedCredentials: feedCredentials, executor: executor)
    }

    /// `rm`: removals planned and applied through the executor.
    public var removal: Removal { Removal(executor: executor) }

    /// `reindex` into this mirror's (empty) index.
    public var reindexer: Reindexer { Reindexer(executor: executor) }

    /// `gc`: orphans and stale partial files.
    public var garbageCollector: GarbageCollector { GarbageCollector(executor: executor) }

    /// Read-only questions about what is held (`du`, `path`, `verify`).
    public var storage: StorageQueries { StorageQueries(executor: executor) }

    /// What the mirror holds, item by item (`ls`).
    public var library: LocalLibrary { LocalLibrary(root: root, index: index) }

    /// Commits the records waiting for a grouped commit.
    public func flush() throws {
        try executor.flush()
    }
}
