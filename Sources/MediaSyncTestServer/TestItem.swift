import Foundation

/// One item (BaseItemDto) of the generated library.
public struct TestItem: Sendable, Equatable {
    /// Item id (32 lowercase hex chars).
    public var id: String
    /// Display name.
    public var name: String
    /// `Movie`, `Series`, `Season`, `Episode` or `CollectionFolder`.
    public var type: String
    /// Parent folder id (library view, series or season).
    public var parentId: String?
    /// For seasons/episodes: the series id and name.
    public var seriesId: String?
    public var seriesName: String?
    /// For episodes: the season id and name.
    public var seasonId: String?
    public var seasonName: String?
    /// Season number (seasons) or episode number (episodes).
    public var indexNumber: Int?
    /// Season number of an episode.
    public var parentIndexNumber: Int?
    public var productionYear: Int?
    /// Server-side path.
    public var path: String
    /// For CollectionFolders: `movies` or `tvshows`.
    public var collectionType: String?
    /// Versions; empty for folders. Movie 0 has two.
    public var mediaSources: [TestMediaSource]
    /// `ImageTags`, e.g. `["Primary": tag]`.
    public var imageTags: [String: String]
    public var backdropImageTags: [String]
    /// `UserData.Played` and `UserData.PlaybackPositionTicks`.
    public var played: Bool
    public var playbackPositionTicks: Int64
    /// `UserData.PlayCount` (1 for an item generated as played).
    public var playCount: Int
    /// `UserData.LastPlayedDate` (a day after `dateCreated` for an item generated as played).
    public var lastPlayedDate: Date?
    public var dateCreated: Date
    /// The item `Etag` field.
    public var etag: String
    public var runTimeTicks: Int64?
    public var isFolder: Bool
    /// True for an alternate version that Jellyfin models as its own (hidden) item: reachable by id,
    /// `ids=` and `/Download`, but not listed under its parent.
    public var isAlternateVersion: Bool
    /// `FileSystem`, or `Virtual` for a missing episode Jellyfin knows of (it has no file and no media source).
    public var locationType = "FileSystem"

    /// Creates an item.
    public init(
        id: String, name: String, type: String, parentId: String? = nil, seriesId: String? = nil,
        seriesName: String? = nil, seasonId: String? = nil, seasonName: String? = nil,
        indexNumber: Int? = nil, parentIndexNumber: Int? = nil, productionYear: Int? = nil,
        path: String, collectionType: String? = nil, mediaSources: [TestMediaSource] = [],
        imageTags: [String: String] = [:], backdropImageTags: [String] = [], played: Bool = false,
        playbackPositionTicks: Int64 = 0, dateCreated: Date, etag: String, runTimeTicks: Int64? = nil,
        isFolder: Bool, isAlternateVersion: Bool = false
    ) {
        self.id = id
        self.name = name
        self.type = type
        self.parentId = parentId
        self.seriesId = seriesId
        self.seriesName = seriesName
        self.seasonId = seasonId
        self.seasonName = seasonName
        self.indexNumber = indexNumber
        self.parentIndexNumber = parentIndexNumber
        self.productionYear = productionYear
        self.path = path
        self.collectionType = collectionType
        self.mediaSources = mediaSources
        self.imageTags = imageTags
        self.backdropImageTags = backdropImageTags
        self.played = played
        self.playbackPositionTicks = playbackPositionTicks
        self.playCount = played ? 1 : 0
        self.lastPlayedDate = played ? dateCreated.addingTimeInterval(86_400) : nil
        self.dateCreated = dateCreated
        self.etag = etag
        self.runTimeTicks = runTimeTicks
        self.isFolder = isFolder
        self.isAlternateVersion = isAlternateVersion
    }
}

extension TestItem {
    /// `CanDownload`: false for a disc folder (`VideoType` `Dvd` or `BluRay`; `Video.CanDownload`, v10.10.7).
    public var canDownload: Bool {
        guard let type = mediaSources.first?.videoType else { return true }
        return type != "Dvd" && type != "BluRay"
    }
}
