import Foundation

/// One item (BaseItemDto) of the generated library.
public struct TestItem: Sendable, Equatable {
    /// Item id (32 lowercase hex chars).
    public var id: String
    /// Display name.
    public var name: String
    /// `Movie`, `Series`, `Season`, `Episode`, `CollectionFolder`; with music: `MusicArtist`, `MusicAlbum`, `Audio`,
    /// `Playlist`, `BoxSet`, `ManualPlaylistsFolder`; with books: `Folder`, `AudioBook`, `Book`.
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
    /// For CollectionFolders: `movies`, `tvshows`, `music`, `boxsets`, `books`; `playlists` for the playlists folder.
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

    // MARK: Music, playlists, box sets

    /// `Album` of a track (the album tag).
    public var album: String?
    /// `AlbumId` of a track: its nearest `MusicAlbum` ancestor (`Audio.AlbumEntity`, v10.10.7 L61).
    public var albumId: String?
    /// Artist names of a track or album (`Artists`; an album's are its tracks', most frequent first as 10.9+ computes
    /// them, `AlbumMetadataService` L89–129, v10.9.11).
    public var artists: [String] = []
    /// Album artist names of a track or album (`AlbumArtists`; `AlbumArtist` is the first).
    public var albumArtists: [String] = []
    /// `MediaType` when it is not derived from the media sources: `Audio` for a track or an audio playlist.
    public var mediaType: String?
    /// A track's lyrics file (a `Lyric` media stream on 10.9+, `GET /Audio/{id}/Lyrics`).
    public var lyrics: TestLyrics?
    /// A playlist's or box set's linked children, in their stored order (`Folder.LinkedChildren`).
    public var linkedChildren: [TestLinkedChild] = []
    /// A box set's `DisplayOrder` (`PremiereDate` by default, `BoxSet` constructor, v10.10.7 L22).
    public var displayOrder: String?
    /// A video's chapters, in order (see ``TestLibrary/addRichMedia(chapters:trickplayWidths:thumbnailCount:segments:)``).
    public var chapters: [TestChapter] = []
    /// `People` (gated by the `People` field): a book's author.
    public var people: [TestPerson] = []

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

/// One linked child of a playlist or box set (`LinkedChild`).
public struct TestLinkedChild: Sendable, Equatable {
    /// The linked item's id; an id whose item is gone is skipped when listing (`GetLinkedChildrenInfos`).
    public var itemId: String
    /// Tells the entries apart (two entries may link the same item): 10.8/10.9's `PlaylistItemId` is derived from it
    /// and the playlist load (``TestLibrary/playlistLoads``).
    public var serial: Int

    public init(itemId: String, serial: Int) {
        self.itemId = itemId
        self.serial = serial
    }
}

/// One line of a lyrics file.
public struct TestLyricLine: Sendable, Equatable {
    public var text: String
    /// Start in 100 ns ticks; nil for an unsynced (plain text) line.
    public var start: Int64?

    public init(text: String, start: Int64? = nil) {
        self.text = text
        self.start = start
    }
}

/// A track's external lyrics file: an `.lrc` (timed lines, and `[ar:]`/`[al:]`/`[ti:]` tags) or a `.txt` (plain
/// lines), next to the track (`NamingOptions.LyricFileExtensions`, v10.9.11 L176–181).
public struct TestLyrics: Sendable, Equatable {
    public var lines: [TestLyricLine]
    /// LRC tags, read by 10.9's parser only (`LrcLyricParser` L62–121, v10.9.11).
    public var artist: String?
    public var album: String?
    public var title: String?

    public init(lines: [TestLyricLine], artist: String? = nil, album: String? = nil, title: String? = nil) {
        self.lines = lines
        self.artist = artist
        self.album = album
        self.title = title
    }

    /// Timed lines make an LRC file, plain lines a TXT file.
    public var isSynced: Bool { lines.contains { $0.start != nil } }

    /// `lrc` or `txt`.
    public var fileExtension: String { isSynced ? "lrc" : "txt" }
}

extension TestItem {
    /// `CanDownload`: false for a disc folder (`VideoType` `Dvd` or `BluRay`; `Video.CanDownload`, v10.10.7).
    public var canDownload: Bool {
        guard let type = mediaSources.first?.videoType else { return true }
        return type != "Dvd" && type != "BluRay"
    }
}
