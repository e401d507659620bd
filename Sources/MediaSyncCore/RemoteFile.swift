/// A file the mirror should hold, as the remote side describes it.
public struct RemoteFile: Hashable, Sendable {
    /// What the file is.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        case media, image, subtitle, metadata
    }

    /// Where the bytes come from.
    public enum Content: Hashable, Sendable {
        /// Fetched from a URL; `expectedSize` (MediaSource `Size`) is checked before the file is placed.
        case download(url: String, expectedSize: Int64?)
        /// Generated here (metadata), written as given.
        case inline([UInt8])
    }

    /// A stable logical name, independent of the path (see ``FileKey``).
    public var key: FileKey
    /// The planned path, relative to the root.
    public var path: String
    public var kind: Kind
    public var content: Content
    /// What identifies the remote version: for media the MediaSource `ETag` and `Size`, for images the tag,
    /// for metadata a hash of the content. A different signature means the file must be fetched again.
    public var signature: String
    /// The item the file belongs to.
    public var itemId: String
    /// The version, for media and subtitles.
    public var versionId: String?
    /// Whether a failure fails the item (media and metadata) or is only reported (images, subtitles).
    public var essential: Bool
    /// A size the remote side announces without guaranteeing it (a podcast enclosure's `length`): used to
    /// check free space, never to reject a download.
    public var sizeHint: Int64?

    public init(
        key: FileKey, path: String, kind: Kind, content: Content, signature: String, itemId: String,
        versionId: String? = nil, essential: Bool, sizeHint: Int64? = nil
    ) {
        self.key = key
        self.path = path
        self.kind = kind
        self.content = content
        self.signature = signature
        self.itemId = itemId
        self.versionId = versionId
        self.essential = essential
        self.sizeHint = sizeHint
    }

    /// The size to plan for: the verified expected size, else the announced hint.
    public var plannedSize: Int64? {
        expectedSize ?? sizeHint
    }

    /// The expected size, when the remote side states one.
    public var expectedSize: Int64? {
        switch content {
        case .download(_, let size): return size
        case .inline(let bytes): return Int64(bytes.count)
        }
    }
}

/// A file the index says the mirror holds.
public struct LocalFile: Hashable, Sendable {
    public var key: FileKey
    /// The path, relative to the root, where the file was placed.
    public var path: String
    public var kind: RemoteFile.Kind
    /// The size recorded when it was placed.
    public var size: Int64
    /// The remote signature it was downloaded with.
    public var signature: String
    public var itemId: String

    public init(key: FileKey, path: String, kind: RemoteFile.Kind, size: Int64, signature: String, itemId: String) {
        self.key = key
        self.path = path
        self.kind = kind
        self.size = size
        self.signature = signature
        self.itemId = itemId
    }
}

/// What the remote side wants the mirror to hold.
public struct RemoteSnapshot: Sendable, Equatable {
    public var files: [RemoteFile]
    /// Items absent from the listings whose absence the server did not confirm: their files are never deleted.
    public var unconfirmed: Set<String>
    /// Paths of the files kept for ``unconfirmed`` items: a `metadata.json` in their folder (or above it, within the
    /// item's folder) stays with them, so a player still finds what is kept.
    public var keptPaths: [String]

    /// Played items whose files go without `--delete` (`--delete-played`: played, on the server, grace passed).
    public var released: Set<String>
    /// Played items whose files stay even with `--delete`, and are not fetched (grace period; not yet on the server).
    public var keptPlayed: Set<String>

    public init(
        files: [RemoteFile], unconfirmed: Set<String> = [], keptPaths: [String] = [], released: Set<String> = [],
        keptPlayed: Set<String> = []
    ) {
        self.files = files
        self.unconfirmed = unconfirmed
        self.keptPaths = keptPaths
        self.released = released
        self.keptPlayed = keptPlayed
    }

    /// Whether played cleanup lets the file go without `--delete`, or keeps it even with it (by its item, or for a
    /// podcast's files by their episode).
    func playedCleanup(_ file: LocalFile) -> (released: Bool, kept: Bool) {
        guard !released.isEmpty || !keptPlayed.isEmpty else { return (false, false) }
        let id = file.playStateId
        return (released.contains(id), keptPlayed.contains(id))
    }

    /// Whether a file nothing wants must be kept anyway (its item's absence is not confirmed).
    func keeps(_ file: LocalFile) -> Bool {
        if unconfirmed.contains(file.itemId) { return true }
        guard file.kind == .metadata, let slash = file.path.lastIndex(of: "/") else { return false }
        let folder = file.path[...slash]
        return keptPaths.contains { $0.hasPrefix(folder) }
    }
}

/// What the mirror holds: the index's records and what is actually on disk.
public struct LocalSnapshot: Sendable, Equatable {
    /// The index's records.
    public var files: [LocalFile]
    /// The size of each regular file found on disk, by relative path (only the paths asked about).
    public var onDisk: [String: Int64]

    public init(files: [LocalFile], onDisk: [String: Int64]) {
        self.files = files
        self.onDisk = onDisk
    }
}

extension LocalFile {
    /// What play state names this file by: its item, or for a podcast episode's files the episode.
    public var playStateId: String {
        // Only a podcast's keys name an episode: the others are not parsed (this is asked of every file in a plan).
        guard key.isPodcast else { return itemId }
        switch key.parts {
        case .podcastEpisode(_, let episodeId)?, .podcastExtra(_, let episodeId, _)?: return episodeId
        default: return itemId
        }
    }
}
