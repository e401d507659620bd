import Foundation
import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer

/// What the mirror holds, as the export sees it: read from the index and the `metadata.json` files only.
public struct ExportSource: Sendable, Equatable {
    /// One file of the mirror.
    public struct File: Sendable, Equatable {
        /// The index key (`media:<item>:<version>`, `image:<item>:Primary`, `podcast:<podcast>:<episode>`…).
        public var key: String
        /// The path relative to the mirror's root.
        public var path: String
        public var size: Int64
        /// What identifies these bytes: size, modification time and inode. A different identity means the file
        /// was replaced in the mirror and is exported again.
        public var identity: String

        public init(key: String, path: String, size: Int64, identity: String) {
            self.key = key
            self.path = path
            self.size = size
            self.identity = identity
        }

        /// The extension of the mirror's file name.
        public var fileExtension: String {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            return name.lastIndex(of: ".").map { String(name[name.index(after: $0)...]) } ?? "bin"
        }
    }

    public struct Subtitle: Sendable, Equatable {
        public var streamIndex: Int
        public var language: String
        public var forced: Bool
        public var format: String
        public var file: File
    }

    public struct Version: Sendable, Equatable {
        public var versionId: String
        /// The media source's `Name`.
        public var name: String?
        public var media: File
        public var subtitles: [Subtitle]
    }

    public struct Movie: Sendable, Equatable {
        public var id: String
        public var title: String
        public var year: Int?
        public var versions: [Version]
        public var poster: File?
        public var backdrop: File?
    }

    public struct Episode: Sendable, Equatable {
        public var id: String
        public var title: String?
        public var number: Int?
        public var numberEnd: Int?
        public var runTimeSeconds: Int?
        public var versions: [Version]
        public var thumb: File?
    }

    public struct Season: Sendable, Equatable {
        public var number: Int
        public var poster: File?
        public var episodes: [Episode]
    }

    public struct Series: Sendable, Equatable {
        public var id: String
        public var title: String
        public var year: Int?
        public var poster: File?
        public var backdrop: File?
        public var seasons: [Season]
    }

    public struct PodcastEpisode: Sendable, Equatable {
        public var id: String
        public var title: String
        /// ISO 8601 publication date.
        public var published: String?
        public var file: File

        public init(id: String, title: String, published: String?, file: File) {
            self.id = id
            self.title = title
            self.published = published
            self.file = file
        }
    }

    public struct Podcast: Sendable, Equatable {
        public var id: String
        public var title: String
        public var episodes: [PodcastEpisode]

        public init(id: String, title: String, episodes: [PodcastEpisode]) {
            self.id = id
            self.title = title
            self.episodes = episodes
        }
    }

    public struct Track: Sendable, Equatable {
        public var id: String
        public var title: String
        /// Disc and track numbers, as tagged.
        public var disc: Int?
        public var number: Int?
        public var runTimeSeconds: Int?
        public var media: File
        public var lyrics: File?
    }

    public struct Album: Sendable, Equatable {
        public var id: String
        public var title: String
        /// The album artist (the first of them), as the server names it.
        public var artist: String?
        public var year: Int?
        public var cover: File?
        /// In disc and track order.
        public var tracks: [Track]
    }

    /// An audiobook: the book of one file, or the folder of a book in parts.
    public struct Audiobook: Sendable, Equatable {
        public var id: String
        public var title: String
        public var author: String?
        public var cover: File?
        /// In play order (one for a book of one file).
        public var parts: [Track]
    }

    /// A book (`.epub`, `.pdf`, `.cbz`…): its one file.
    public struct Book: Sendable, Equatable {
        public var id: String
        public var title: String
        public var author: String?
        public var file: File
    }

    /// A playlist or a collection: its entries' item ids, in its order.
    public struct List: Sendable, Equatable {
        public var id: String
        public var title: String
        public var isPlaylist: Bool
        public var entries: [String]
    }

    public var movies: [Movie] = []
    public var series: [Series] = []
    public var albums: [Album] = []
    public var lists: [List] = []
    public var podcasts: [Podcast] = []
    public var audiobooks: [Audiobook] = []
    public var books: [Book] = []
    /// Indexed files that could not be exported (missing or damaged in the mirror, metadata unreadable).
    public var problems: [String] = []

    public init(movies: [Movie] = [], series: [Series] = [], podcasts: [Podcast] = [], problems: [String] = []) {
        self.movies = movies
        self.series = series
        self.podcasts = podcasts
        self.problems = problems
    }
}

/// Turns one `metadata.json` of the mirror into what the export needs of it, from the index's records and the sizes
/// looked up before; shared by the threads of ``ExportSource/read(root:index:stat:)``.
private struct Assembler: Sendable {
    let root: MirrorRoot
    let byKey: [FileKey: IndexEntry]
    /// Size and identity of every file the index names that is on disk (looked at once, before).
    let facts: [FileKey: (size: Int64, identity: String)]
    let mediaKeys: [String: [IndexEntry]]
    let subtitleKeys: [String: [IndexEntry]]

    enum Kind {
        case movie(ExportSource.Movie)
        case series(ExportSource.Series)
        case season(seriesId: String, ExportSource.Season)
        case podcast(ExportSource.Podcast)
        case album(ExportSource.Album)
        case audiobook(ExportSource.Audiobook)
        case book(ExportSource.Book)
        case list(ExportSource.List)
        case nothing
    }

    struct Piece: Sendable {
        var kind: Kind
        var problems: [String]
    }

    func file(_ key: FileKey, _ problems: inout [String]) -> ExportSource.File? {
        guard let entry = byKey[key] else { return nil }
        guard let facts = facts[key], facts.size == entry.file.size else {
            problems.append("\(entry.file.path): missing or not the size the index recorded (run `mediasync verify`)")
            return nil
        }
        return ExportSource.File(key: key.rawValue, path: entry.file.path, size: facts.size, identity: facts.identity)
    }

    func versions(of item: BaseItem, _ problems: inout [String]) -> [ExportSource.Version] {
        let names = Dictionary(
            (item.mediaSources ?? []).compactMap { source in source.id.map { ($0, source.name) } },
            uniquingKeysWith: { a, _ in a })
        // The primary version (its id is the item's) first: it names playlists' entries.
        let ordered = (mediaKeys[item.id] ?? []).sorted { left, right in
            ((left.versionId ?? item.id) == item.id ? 0 : 1, left.file.key) < (
                (right.versionId ?? item.id) == item.id ? 0 : 1, right.file.key
            )
        }
        var versions: [ExportSource.Version] = []
        for entry in ordered {
            guard let media = file(entry.file.key, &problems) else { continue }
            let versionId = entry.versionId ?? item.id
            var subtitles: [ExportSource.Subtitle] = []
            for subtitle in (subtitleKeys[item.id] ?? []).filter({ $0.versionId == versionId }).sorted(by: {
                $0.file.key < $1.file.key
            }) {
                guard
                    let parts = ExportNaming.subtitleParts(mirrorPath: subtitle.file.path, mediaPath: entry.file.path),
                    let file = file(subtitle.file.key, &problems)
                else { continue }
                subtitles.append(
                    ExportSource.Subtitle(
                        streamIndex: parts.index, language: parts.language, forced: parts.forced, format: parts.format,
                        file: file))
            }
            versions.append(
                ExportSource.Version(
                    versionId: versionId, name: names[versionId] ?? nil, media: media, subtitles: subtitles))
        }
        return versions
    }

    /// An album's `metadata.json` (or a loose track's, which has no album item).
    func album(tracks values: [JSONValue], document: JSONValue, entry: IndexEntry) -> Piece {
        var problems: [String] = []
        let item = document["item"].flatMap(BaseItem.init)
        let id = document["itemId"]?.stringValue ?? entry.file.itemId
        var tracks: [ExportSource.Track] = []
        for track in values.compactMap(BaseItem.init) {
            // The track's first version held: tracks have one.
            guard let held = (mediaKeys[track.id] ?? []).min(by: { $0.file.key < $1.file.key }),
                let media = file(held.file.key, &problems)
            else { continue }
            let lyrics = byKey[.lyrics(itemId: track.id)] == nil ? nil : file(.lyrics(itemId: track.id), &problems)
            tracks.append(
                ExportSource.Track(
                    id: track.id, title: track.name ?? track.id, disc: track.parentIndexNumber,
                    number: track.indexNumber, runTimeSeconds: track.runTimeTicks.map { Int($0 / 10_000_000) },
                    media: media, lyrics: lyrics))
        }
        let first = values.first.flatMap(BaseItem.init)
        let album = ExportSource.Album(
            id: id, title: item?.name ?? first?.album ?? document["displayTitle"]?.stringValue ?? id,
            artist: item?.albumArtist ?? first?.albumArtist, year: item?.productionYear ?? first?.productionYear,
            cover: item == nil ? nil : file(.image(itemId: id, type: "Primary"), &problems), tracks: tracks)
        return Piece(kind: .album(album), problems: problems)
    }

    /// An audiobook's `metadata.json`: its item (the book of one file, or the folder of its parts) and its parts.
    func audiobook(parts values: [JSONValue], document: JSONValue, entry: IndexEntry) -> Piece {
        var problems: [String] = []
        let item = document["item"].flatMap(BaseItem.init)
        let id = document["itemId"]?.stringValue ?? entry.file.itemId
        let parts = values.compactMap(BaseItem.init)
        var held: [ExportSource.Track] = []
        for part in parts {
            guard let media = (mediaKeys[part.id] ?? []).min(by: { $0.file.key < $1.file.key }),
                let file = file(media.file.key, &problems)
            else { continue }
            held.append(
                ExportSource.Track(
                    id: part.id, title: part.name ?? part.id, disc: nil, number: part.indexNumber,
                    runTimeSeconds: part.runTimeTicks.map { Int($0 / 10_000_000) }, media: file, lyrics: nil))
        }
        let author =
            item.flatMap(SelectionExpander.author(of:)) ?? parts.lazy.compactMap(SelectionExpander.author(of:)).first
        let book = ExportSource.Audiobook(
            id: id, title: item?.name ?? document["displayTitle"]?.stringValue ?? id, author: author,
            cover: byKey[.image(itemId: id, type: "Primary")] == nil
                ? nil : file(.image(itemId: id, type: "Primary"), &problems),
            parts: held)
        return Piece(kind: .audiobook(book), problems: problems)
    }

    /// A metadata document as read (``ExportSource/document(at:root:)``), or why it could not be.
    enum Document: Sendable {
        case parsed(JSONValue)
        case failed(String)
    }

    /// What one metadata document holds, from the document read before.
    func piece(_ entry: IndexEntry, _ read: Document?) -> Piece {
        var problems: [String] = []
        func failed(_ reason: String) -> Piece { Piece(kind: .nothing, problems: ["\(entry.file.path): \(reason)"]) }
        let document: JSONValue
        switch read ?? ExportSource.document(at: entry.file.path, root: root) {
        case .parsed(let value): document = value
        case .failed(let reason): return failed(reason)
        }
        if entry.file.key.isPodcast {
            guard let podcastId = document["podcastID"]?.stringValue,
                let episodesValue = document["episodes"]?.arrayValue
            else { return failed("not a podcast's metadata") }
            var episodes: [ExportSource.PodcastEpisode] = []
            for episode in episodesValue {
                guard let episodeId = episode["episodeID"]?.stringValue,
                    let media = file(.podcastEpisode(podcastId: podcastId, episodeId: episodeId), &problems)
                else { continue }
                episodes.append(
                    ExportSource.PodcastEpisode(
                        id: episodeId, title: episode["title"]?.stringValue ?? episodeId,
                        published: episode["published"]?.stringValue, file: media))
            }
            let podcast = ExportSource.Podcast(
                id: podcastId, title: document["podcastTitle"]?.stringValue ?? podcastId, episodes: episodes)
            return Piece(kind: .podcast(podcast), problems: problems)
        }
        if let tracks = document["tracks"]?.arrayValue {
            if document["itemType"]?.stringValue == "AudioBook" {
                return audiobook(parts: tracks, document: document, entry: entry)
            }
            return album(tracks: tracks, document: document, entry: entry)
        }
        guard let item = document["item"].flatMap(BaseItem.init) else { return failed("not an item's metadata") }
        let displayTitle = document["displayTitle"]?.stringValue ?? item.id
        switch document["itemType"]?.stringValue {
        case "Movie":
            let movie = ExportSource.Movie(
                id: item.id, title: item.name ?? displayTitle, year: item.productionYear,
                versions: versions(of: item, &problems),
                poster: file(.image(itemId: item.id, type: "Primary"), &problems),
                backdrop: file(.image(itemId: item.id, type: "Backdrop"), &problems))
            return Piece(kind: .movie(movie), problems: problems)
        case "Series":
            let series = ExportSource.Series(
                id: item.id, title: item.name ?? displayTitle, year: item.productionYear,
                poster: file(.image(itemId: item.id, type: "Primary"), &problems),
                backdrop: file(.image(itemId: item.id, type: "Backdrop"), &problems), seasons: [])
            return Piece(kind: .series(series), problems: problems)
        case "Season":
            var episodes: [ExportSource.Episode] = []
            for episode in (document["episodes"]?.arrayValue ?? []).compactMap(BaseItem.init) {
                let made = ExportSource.Episode(
                    id: episode.id, title: episode.name, number: episode.indexNumber,
                    numberEnd: episode.raw["IndexNumberEnd"]?.intValue.map { Int($0) },
                    runTimeSeconds: episode.runTimeTicks.map { Int($0 / 10_000_000) },
                    versions: versions(of: episode, &problems),
                    thumb: file(.image(itemId: episode.id, type: "Primary"), &problems))
                if !made.versions.isEmpty { episodes.append(made) }
            }
            let seriesId =
                item.seriesId ?? entry.file.path.split(separator: "/").dropFirst().first.map(String.init) ?? ""
            let season = ExportSource.Season(
                number: item.indexNumber ?? 0, poster: file(.image(itemId: item.id, type: "Primary"), &problems),
                episodes: episodes)
            return Piece(kind: .season(seriesId: seriesId, season), problems: problems)
        case "Book":
            guard let media = (mediaKeys[item.id] ?? []).min(by: { $0.file.key < $1.file.key }),
                let held = file(media.file.key, &problems)
            else { return Piece(kind: .nothing, problems: problems) }
            let book = ExportSource.Book(
                id: item.id, title: item.name ?? displayTitle, author: SelectionExpander.author(of: item), file: held)
            return Piece(kind: .book(book), problems: problems)
        case "Playlist", "BoxSet":
            let entries = (document["entries"]?.arrayValue ?? []).compactMap { $0["itemId"]?.stringValue }
            let list = ExportSource.List(
                id: item.id, title: item.name ?? displayTitle, isPlaylist: item.type == "Playlist", entries: entries)
            return Piece(kind: .list(list), problems: problems)
        default:
            return Piece(kind: .nothing, problems: problems)
        }
    }
}

extension ExportSource {
    /// The members of `metadata.json` files the export reads, at any depth: the document's own (items' and
    /// podcasts'), and of the item objects in it (an item, a season's episodes, their media sources).
    static let metadataKeys: Set<String> = [
        "item", "itemType", "displayTitle", "episodes", "podcastID", "podcastTitle", "episodeID", "title",
        "published", "Id", "Name", "ProductionYear", "IndexNumber", "IndexNumberEnd", "RunTimeTicks", "SeriesId",
        "MediaSources", "tracks", "entries", "itemId", "Type", "AlbumArtist", "Album", "ParentIndexNumber",
        "People", "Artists",
    ]

    /// One metadata document, read through the byte-level parser into JSONValue keeping only the members the export
    /// reads: JSONDecoder on these documents (the server's whole item objects) was most of a no-op export's time,
    /// and building every member of them most of what was left.
    fileprivate static func document(at path: String, root: MirrorRoot) -> Assembler.Document {
        guard let absolute = root.absolute(path), let data = FileManager.default.contents(atPath: absolute) else {
            return .failed("cannot be read")
        }
        guard let document = try? JSONValue(parsing: [UInt8](data), keepingKeys: ExportSource.metadataKeys) else {
            return .failed("not valid JSON")
        }
        return .parsed(document)
    }

    /// Reads the mirror at `root` through its index: what each `metadata.json` says is read from the facts the sync
    /// kept beside its record (``MirrorIndex/metadataFacts()``) while the records are read, and only a document
    /// without them is read from its file; then the files are looked at folder by folder on every core.
    public static func read(root: MirrorRoot, index: MirrorIndex) throws -> ExportSource {
        let (entries, metadataFacts) = try Parallel.both(
            { try index.entries(placesOnly: true) }, { try index.metadataFacts() })
        var source = ExportSource()
        var byKey: [FileKey: IndexEntry] = [:]
        for entry in entries { byKey[entry.file.key] = entry }
        let looked = entries.filter { $0.file.kind != .metadata }
        let facts = FolderLookup.facts(of: looked.map(\.file.path), under: root.path, ExportFileSystem.identity(of:))
        var factsByKey: [FileKey: (size: Int64, identity: String)] = [:]
        factsByKey.reserveCapacity(looked.count)
        for (entry, fact) in zip(looked, facts) { factsByKey[entry.file.key] = fact }
        // Media and subtitle keys per item.
        var mediaKeys: [String: [IndexEntry]] = [:]
        var subtitleKeys: [String: [IndexEntry]] = [:]
        for entry in entries {
            switch entry.file.kind {
            case .media where !entry.file.key.isPodcast:
                mediaKeys[entry.file.itemId, default: []].append(entry)
            case .subtitle: subtitleKeys[entry.file.itemId, default: []].append(entry)
            default: break
            }
        }
        let assembler = Assembler(
            root: root, byKey: byKey, facts: factsByKey, mediaKeys: mediaKeys, subtitleKeys: subtitleKeys)
        // Each metadata document is read, parsed and turned into its movie, series, season or podcast on every core;
        // the pieces are then put together in the index's order.
        let metadataEntries = entries.filter { $0.file.kind == .metadata }
        let pieces = Parallel.map(metadataEntries) { entry in
            let kept = metadataFacts[entry.file.path].flatMap { try? JSONValue(parsing: $0) }
            return assembler.piece(entry, kept.map { Assembler.Document.parsed($0) })
        }
        var seriesById: [String: Series] = [:]
        var seasons: [(seriesId: String, season: Season)] = []
        var reported = Set<String>()
        for piece in pieces {
            for problem in piece.problems where reported.insert(problem).inserted { source.problems.append(problem) }
            switch piece.kind {
            case .movie(let movie): source.movies.append(movie)
            case .series(let series): seriesById[series.id] = series
            case .season(let seriesId, let season): seasons.append((seriesId, season))
            case .podcast(let podcast): source.podcasts.append(podcast)
            case .album(let album): source.albums.append(album)
            case .audiobook(let book): source.audiobooks.append(book)
            case .book(let book): source.books.append(book)
            case .list(let list): source.lists.append(list)
            case .nothing: break
            }
        }
        for (seriesId, season) in seasons {
            seriesById[seriesId]?.seasons.append(season)
        }
        source.movies = source.movies.filter { !$0.versions.isEmpty }.sorted { $0.id < $1.id }
        source.series = seriesById.values.map { series in
            var series = series
            series.seasons = series.seasons.filter { !$0.episodes.isEmpty }.sorted { $0.number < $1.number }
            return series
        }.filter { !$0.seasons.isEmpty }.sorted { $0.id < $1.id }
        source.podcasts = source.podcasts.filter { !$0.episodes.isEmpty }.sorted { $0.id < $1.id }
        source.albums = source.albums.filter { !$0.tracks.isEmpty }.sorted { $0.id < $1.id }
        source.lists = source.lists.sorted { $0.id < $1.id }
        source.audiobooks = source.audiobooks.filter { !$0.parts.isEmpty }.sorted { $0.id < $1.id }
        source.books = source.books.sorted { $0.id < $1.id }
        return source
    }
}
