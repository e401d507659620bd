import Foundation
import MediaSyncMirror
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What `serve` shares between requests: who it is, the signed-in clients, the catalog and the played state.
final class ServeState: Sendable {
    let root: MirrorRoot
    let index: MirrorIndex
    let dto: JellyfinDTO
    let password: ServePassword?
    let tracker: PlayTracker
    /// `host:port` clients were told (LocalAddress, discovery).
    let advertisedAddress: Mutex<String>

    private struct CatalogCache: Sendable {
        var catalog: Catalog
        var signature: [Int64]
        /// When the last rebuild ended, and how long it took.
        var built: ContinuousClock.Instant
        var took: Duration = .zero
        var rebuilding = false
    }

    let tokens: ServeTokens
    /// The page's sessions and its "Sync now" (``WebResponder``).
    let web: WebState
    /// The `metadata.json` files read for the catalog, kept so a rebuild parses only those that changed.
    private let documents = MetadataDocuments()
    private let cache: Mutex<CatalogCache>

    /// - Parameters:
    ///   - config: where the signed-in clients' tokens are kept (nil: in memory only).
    ///   - homeServer: how the web page asks the home server.
    init(
        root: MirrorRoot, index: MirrorIndex, dto: JellyfinDTO, password: ServePassword?, book: PlayStateBook,
        config: ConfigDirectory?, homeServer: HomeServerAccess
    ) throws {
        self.root = root
        self.tokens = ServeTokens(config: config)
        self.web = WebState(root: root, config: config, password: password, homeServer: homeServer)
        self.index = index
        self.dto = dto
        self.password = password
        self.tracker = PlayTracker(book: book, root: root)
        self.advertisedAddress = Mutex("127.0.0.1:8096")
        let signature = ServeState.indexSignature(root)
        let catalog = try Catalog.build(root: root, index: index, serverId: dto.serverId, documents: documents)
        cache = Mutex(CatalogCache(catalog: catalog, signature: signature, built: .now))
        tracker.reloadMarks()
    }

    /// The size and modification time of the index and its write-ahead log: they change with every commit (a sync's,
    /// `mediasync played`'s, or this server's own marks).
    static func indexSignature(_ root: MirrorRoot) -> [Int64] {
        [root.indexPath, root.indexPath + "-wal"].flatMap { path -> [Int64] in
            var info = stat()
            guard stat(path, &info) == 0 else { return [-1, -1, -1] }
            return [Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)]
        }
    }

    /// The catalog, rebuilt first when the index changed since it was read.
    ///
    /// Every request looks (two `stat` calls), so a client asking after a sync of the mirror ended sees what it did: a
    /// second mirror syncing from this one right after the first's sync gets the new items. While the index keeps
    /// changing (a sync under way) rebuilds are spaced by the time the last one took, so at most half of the time
    /// goes to them, and a request arriving in between, or while one runs, is answered from the catalog before.
    func catalog() -> Catalog {
        let now = ContinuousClock.now
        let signature = ServeState.indexSignature(root)
        let due = cache.withLock { cache -> Bool in
            guard !cache.rebuilding, signature != cache.signature, now - cache.built >= cache.took else { return false }
            cache.rebuilding = true
            return true
        }
        if due { rebuild(signature: signature) }
        return cache.withLock { $0.catalog }
    }

    /// Reads the catalog again (the index changed).
    /// - Parameter signature: the index's signature taken before it is read, so a commit landing during the read is
    ///   seen as a change at the next request.
    private func rebuild(signature: [Int64]) {
        let started = ContinuousClock.now
        let built = try? Catalog.build(root: root, index: index, serverId: dto.serverId, documents: documents)
        tracker.reloadMarks()
        cache.withLock { cache in
            if let built { cache.catalog = built }
            cache.signature = signature
            cache.rebuilding = false
            cache.built = .now
            cache.took = cache.built - started
        }
    }

    // MARK: Tokens

    func issueToken(for client: ClientAuthorization) -> String {
        tokens.issue(for: client)
    }

    func client(forToken token: String?) -> ClientAuthorization? {
        guard let token, !token.isEmpty else { return nil }
        return tokens.client(for: token)
    }
}
