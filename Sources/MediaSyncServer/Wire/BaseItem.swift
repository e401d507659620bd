import MediaSyncJSON

/// Any item the server lists (`BaseItemDto`): a movie, series, season, episode, folder, song…
///
/// The whole object is kept as received in ``raw`` and encoded back exactly, so fields this client does not
/// know survive into `metadata.json`. The typed properties read from ``raw``; missing or `null` fields are nil.
public struct BaseItem: IdentifiedWireObject {
    /// The object as the server sent it.
    public let raw: JSONValue
    /// `Id`: the item id (32 hex characters on Jellyfin). Never empty.
    public let id: String

    public init(unchecked raw: JSONValue, id: String) {
        self.raw = raw
        self.id = id
    }

    /// `Name`.
    public var name: String? { raw["Name"]?.stringValue }
    /// `Type`, such as `Movie`, `Series`, `Season`, `Episode`, `CollectionFolder`.
    public var type: String? { raw["Type"]?.stringValue }
    /// `ServerId`.
    public var serverId: String? { raw["ServerId"]?.stringValue }
    /// `ParentId` (sent only when the `ParentId` field is requested).
    public var parentId: String? { raw["ParentId"]?.stringValue }
    /// `SeriesId` of a season or episode.
    public var seriesId: String? { raw["SeriesId"]?.stringValue }
    /// `SeriesName` of a season or episode.
    public var seriesName: String? { raw["SeriesName"]?.stringValue }
    /// `SeasonId` of an episode.
    public var seasonId: String? { raw["SeasonId"]?.stringValue }
    /// `SeasonName` of an episode.
    public var seasonName: String? { raw["SeasonName"]?.stringValue }
    /// `IndexNumber`: the episode number of an episode, the season number of a season (0 for specials).
    public var indexNumber: Int? { raw["IndexNumber"]?.wireInt }
    /// `ParentIndexNumber`: the season number of an episode.
    public var parentIndexNumber: Int? { raw["ParentIndexNumber"]?.wireInt }
    /// `ProductionYear`.
    public var productionYear: Int? { raw["ProductionYear"]?.wireInt }
    /// `Container`: one name or a comma-separated list (`mov,mp4,m4a,3gp,3g2,mj2`).
    public var container: String? { raw["Container"]?.stringValue }
    /// `Etag` of the item (sent only when the `Etag` field is requested).
    public var etag: String? { raw["Etag"]?.stringValue }
    /// `Path` on the server's disk (sent only when the `Path` field is requested).
    public var path: String? { raw["Path"]?.stringValue }
    /// `DateCreated` as sent (.NET round-trip format, `2019-11-29T03:46:20.9183807Z`).
    public var dateCreated: String? { raw["DateCreated"]?.stringValue }
    /// `CollectionType` of a library view: `movies`, `tvshows`, `music`, `boxsets`…
    public var collectionType: String? { raw["CollectionType"]?.stringValue }
    /// `IsFolder`.
    public var isFolder: Bool? { raw["IsFolder"]?.boolValue }
    /// `LocationType`: `FileSystem`, `Remote`, `Virtual` (a missing episode, no file) or `Offline`.
    public var locationType: String? { raw["LocationType"]?.wireEnum(["FileSystem", "Remote", "Virtual", "Offline"]) }
    /// Whether the item has no file on the server (`LocationType` `Virtual`: a known but missing episode).
    public var isVirtual: Bool { locationType?.lowercased() == "virtual" }
    /// `MediaType`: `Video`, `Audio`, `Photo`, `Book` or `Unknown`.
    public var mediaType: String? { raw["MediaType"]?.stringValue }
    /// `RunTimeTicks` (100 ns units).
    public var runTimeTicks: Int64? { raw["RunTimeTicks"]?.intValue }
    /// `ImageTags`: image type (`Primary`, `Logo`, `Thumb`…) → tag.
    public var imageTags: [String: String] { raw["ImageTags"]?.wireStringMap ?? [:] }
    /// `BackdropImageTags`, in index order.
    public var backdropImageTags: [String] { raw["BackdropImageTags"]?.wireStrings ?? [] }
    /// `ParentBackdropItemId`: the item whose backdrops stand in for this one's (an episode's series).
    public var parentBackdropItemId: String? { raw["ParentBackdropItemId"]?.stringValue }
    /// `ParentBackdropImageTags`.
    public var parentBackdropImageTags: [String] { raw["ParentBackdropImageTags"]?.wireStrings ?? [] }
    /// `SeriesPrimaryImageTag` of a season or episode.
    public var seriesPrimaryImageTag: String? { raw["SeriesPrimaryImageTag"]?.stringValue }
    /// `UserData`: the signed-in user's play state.
    public var userData: UserData? { raw["UserData"].flatMap(UserData.init) }
    /// `MediaSources`: the versions (sent only when the `MediaSources` field is requested).
    public var mediaSources: [MediaSource]? { raw["MediaSources"]?.arrayValue?.compactMap(MediaSource.init) }
    /// `MediaStreams` of the default version (sent only when the `MediaStreams` field is requested).
    public var mediaStreams: [MediaStream]? { raw["MediaStreams"]?.arrayValue?.compactMap(MediaStream.init) }
    /// `CanDownload` (sent only when the `CanDownload` field is requested).
    public var canDownload: Bool? { raw["CanDownload"]?.boolValue }
    /// `ProviderIds`, such as `Tmdb` → `16859`.
    public var providerIds: [String: String] { raw["ProviderIds"]?.wireStringMap ?? [:] }

    // MARK: Music

    /// `AlbumId` of a track: its nearest `MusicAlbum` ancestor (absent for a loose track).
    public var albumId: String? { raw["AlbumId"]?.stringValue }
    /// `Album`: the album's name as the track's tags give it.
    public var album: String? { raw["Album"]?.stringValue }
    /// `AlbumArtist`: the first of the album artists.
    public var albumArtist: String? { raw["AlbumArtist"]?.stringValue }
    /// `HasLyrics` (10.9 and later; absent on 10.8, which has no lyrics).
    public var hasLyrics: Bool? { raw["HasLyrics"]?.boolValue }
    /// `PlaylistItemId` of a playlist entry: a per-entry id on 10.8–10.9 (made again whenever the server loads the
    /// playlist), the item's own id from 10.10.
    public var playlistItemId: String? { raw["PlaylistItemId"]?.stringValue }
}

extension BaseItem: WireDecodable {}
