import MediaSyncCore
import MediaSyncServer

/// What the selections expand to on the server: the items to mirror, with the versions to keep.
public struct MirrorItems: Sendable, Equatable {
    public var movies: [MovieEntry] = []
    public var series: [SeriesEntry] = []
    /// Albums with the tracks of them to keep (a track several selections name is held once, in its album).
    public var albums: [AlbumEntry] = []
    /// Playlists and collections: their entries in order (the entries' files are held in their own folders).
    public var lists: [ListEntry] = []
    /// Items refused because an id could not safely become a path; one line each, for the report.
    public var rejected: [String] = []
    /// Selections whose item the server no longer has; one line each.
    public var gone: [String] = []
    /// Every item id a listing or a look-up by id returned, before the selections' own rules (season, next
    /// unplayed, versions) left some out: an item held but not listed here needs its absence confirmed by id
    /// before anything of it is deleted.
    public var listed: Set<String> = []
    /// The movies and series that movie, series and season selections name (whether or not they could be listed).
    public var selectedTops: Set<String> = []
    /// The libraries that library selections name.
    public var libraries: [String] = []
    /// An album, artist, playlist or collection selection could not be listed: its tracks, movies and episodes have
    /// no folder of their own to be found below, so no held item outside the listings is taken for deselected this
    /// run (those the server no longer has are still confirmed gone).
    public var keepsUnlisted = false
    /// Selections that could not be listed although the sign-in holds (a library the user may no longer access,
    /// a library or item the server does not know), one line each: nothing of them is fetched, and their files
    /// are deleted only when the server confirms their items gone.
    public var failed: [String] = []
    /// Selected series and seasons the server lists no episodes for, one line each ("Name: the server lists no
    /// episodes"): only their images are kept, which is not worth a failure but worth saying.
    public var empty: [String] = []
    /// Where each wanted item stands for a storage budget (its selection's place, its place within it).
    public var ranks: [String: BudgetRank] = [:]
    /// Played items of `--delete-played` selections whose files go (played on the server, grace passed).
    public var released: Set<String> = []
    /// Played items of `--delete-played` selections kept for now (grace period, or not yet on the server).
    public var keptPlayed: Set<String> = []
    /// The quality each movie and episode of a quality-capped selection is kept at (by item id); absent: the
    /// original.
    public var qualities: [String: Quality] = [:]
    /// The trickplay width each movie and episode keeps, by item id (absent: the server's smallest).
    public var trickplay: [String: TrickplayChoice] = [:]
    /// The quality each track of a quality-capped selection is kept at (by item id); absent: the original.
    public var audioQualities: [String: AudioQuality] = [:]
    /// Media sources asked for by id in this expansion, to cache (see ``MediaSourceCache``).
    public var mediaSourceUpdates: [String: MediaSourceCache.Entry] = [:]
    /// Movies and episodes whose media sources came from the cache abridged to what planning reads
    /// (``MediaSourceCache/planningKeys``): a `metadata.json` written for them gets the whole ones.
    public var abridgedSources: Set<String> = []

    public init(movies: [MovieEntry] = [], series: [SeriesEntry] = [], rejected: [String] = []) {
        self.movies = movies
        self.series = series
        self.rejected = rejected
    }
}

/// A movie and the versions of it to keep.
public struct MovieEntry: Sendable, Equatable {
    public var item: BaseItem
    public var versions: [MediaSource]

    public init(item: BaseItem, versions: [MediaSource]) {
        self.item = item
        self.versions = versions
    }
}

/// A series with the seasons and episodes to keep.
public struct SeriesEntry: Sendable, Equatable {
    public var series: BaseItem
    public var seasons: [SeasonEntry]

    public init(series: BaseItem, seasons: [SeasonEntry]) {
        self.series = series
        self.seasons = seasons
    }
}

/// A season (by number; its item when the server has one) and the episodes of it to keep.
public struct SeasonEntry: Sendable, Equatable {
    public var number: Int
    public var season: BaseItem?
    public var episodes: [EpisodeEntry]

    public init(number: Int, season: BaseItem?, episodes: [EpisodeEntry]) {
        self.number = number
        self.season = season
        self.episodes = episodes
    }
}

/// An episode and the versions of it to keep.
public struct EpisodeEntry: Sendable, Equatable {
    public var item: BaseItem
    public var versions: [MediaSource]

    public init(item: BaseItem, versions: [MediaSource]) {
        self.item = item
        self.versions = versions
    }
}

/// An album (or, for tracks without one, a track's own folder) and the tracks of it to keep.
public struct AlbumEntry: Sendable, Equatable {
    /// The folder's id: the album's, or a loose track's own.
    public var folderId: String
    /// The album item; nil for a loose track, or when the album could not be read.
    public var album: BaseItem?
    /// In disc and track order.
    public var tracks: [TrackEntry]

    public init(folderId: String, album: BaseItem?, tracks: [TrackEntry]) {
        self.folderId = folderId
        self.album = album
        self.tracks = tracks
    }
}

/// A track and the versions of it to keep.
public struct TrackEntry: Sendable, Equatable {
    public var item: BaseItem
    public var versions: [MediaSource]

    public init(item: BaseItem, versions: [MediaSource]) {
        self.item = item
        self.versions = versions
    }
}

/// A playlist or a collection (box set) and its entries, in its order.
public struct ListEntry: Sendable, Equatable {
    public var item: BaseItem
    /// The entries' items in the list's order; an item a playlist lists twice stands twice.
    public var entries: [BaseItem]

    public init(item: BaseItem, entries: [BaseItem]) {
        self.item = item
        self.entries = entries
    }
}
