import MediaSyncJSON

/// The `metadata.json` written at each level of the layout (Swiftfin's `DownloadMetadata`).
public struct DownloadMetadata: Codable, Equatable, Sendable {
    /// The item this file describes (movie, series or season).
    public var itemId: String
    /// Its Jellyfin type: `Movie`, `Series`, `Season`.
    public var itemType: String?
    /// A title for people.
    public var displayTitle: String
    /// The server's item object, as received (unknown fields kept).
    public var item: JSONValue?
    /// The versions downloaded under this level (for a series: of all its seasons; for a season: its episodes').
    public var versions: [VersionInfo]
    /// For a season: its episodes' item objects, as received (Swiftfin embeds the episodes' item data here).
    public var episodes: [JSONValue]?
    /// For an album: its held tracks' item objects, as received, in disc and track order.
    public var tracks: [JSONValue]?
    /// For a playlist or a collection: its entries in its order, each pointing at the folder its files live in.
    public var entries: [ListEntryInfo]?

    public init(
        itemId: String, itemType: String?, displayTitle: String, item: JSONValue?, versions: [VersionInfo],
        episodes: [JSONValue]? = nil, tracks: [JSONValue]? = nil, entries: [ListEntryInfo]? = nil
    ) {
        self.tracks = tracks
        self.entries = entries
        self.itemId = itemId
        self.itemType = itemType
        self.displayTitle = displayTitle
        self.item = item
        self.versions = versions
        self.episodes = episodes
    }
}

/// One downloaded version (Swiftfin's `VersionInfo`), plus the item it belongs to for series and seasons.
public struct VersionInfo: Codable, Equatable, Sendable {
    /// `mediaSourceId ?? itemId`.
    public var versionId: String
    /// The file's container / extension (`mkv`, `mp4`, …).
    public var container: String
    /// Whether the original file was downloaded as is (always true: mediasync never transcodes).
    public var isStatic: Bool
    /// The Jellyfin media source id.
    public var mediaSourceId: String?
    /// When the file was downloaded, ISO 8601.
    public var downloadDate: String
    /// The id of the download that produced the file.
    public var taskId: String
    /// The episode or movie the version belongs to (needed where a file aggregates several items).
    public var itemId: String?

    public init(
        versionId: String, container: String, isStatic: Bool = true, mediaSourceId: String?, downloadDate: String,
        taskId: String, itemId: String? = nil
    ) {
        self.versionId = versionId
        self.container = container
        self.isStatic = isStatic
        self.mediaSourceId = mediaSourceId
        self.downloadDate = downloadDate
        self.taskId = taskId
        self.itemId = itemId
    }
}

/// One entry of a playlist or a collection in its `metadata.json`.
public struct ListEntryInfo: Codable, Equatable, Sendable {
    /// The entry's item.
    public var itemId: String
    /// Its Jellyfin type (`Audio`, `Movie`, `Episode`, `MusicAlbum`, `Series`…).
    public var itemType: String?
    /// A title for people.
    public var displayTitle: String
    /// The folder (relative to the root) holding the entry's files and `metadata.json`; nil while nothing of it is
    /// held (not downloadable, or not fetched yet).
    public var folder: String?

    public init(itemId: String, itemType: String?, displayTitle: String, folder: String?) {
        self.itemId = itemId
        self.itemType = itemType
        self.displayTitle = displayTitle
        self.folder = folder
    }
}
