import Foundation
import MediaSyncCore
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

    public var movies: [Movie] = []
    public var series: [Series] = []
    public var podcasts: [Podcast] = []
    /// Indexed files that could not be exported (missing or damaged in the mirror, metadata unreadable).
    public var problems: [String] = []

    public init(movies: [Movie] = [], series: [Series] = [], podcasts: [Podcast] = [], problems: [String] = []) {
        self.movies = movies
        self.series = series
        self.podcasts = podcasts
        self.problems = problems
    }
}

/// Why a metadata document could not be used.
private struct ReadProblem: Error {
    var reason: String
}

extension ExportSource {
    /// The members of `metadata.json` files the export reads, at any depth: the document's own (items' and
    /// podcasts'), and of the item objects in it (an item, a season's episodes, their media sources).
    static let metadataKeys: Set<String> = [
        "item", "itemType", "displayTitle", "episodes", "podcastID", "podcastTitle", "episodeID", "title",
        "published", "Id", "Name", "ProductionYear", "IndexNumber", "IndexNumberEnd", "RunTimeTicks", "SeriesId",
        "MediaSources",
    ]

    /// Reads the mirror at `root` through its index and metadata files; `stat` gives each file's size and identity
    /// (nil: missing). The files are looked at and the metadata documents read and parsed on every core.
    public static func read(
        root: MirrorRoot, index: MirrorIndex,
        stat: @Sendable (String) -> (size: Int64, identity: String)? = ExportFileSystem.identity
    ) throws -> ExportSource {
        let entries = try index.entries()
        var source = ExportSource()
        var byKey: [FileKey: IndexEntry] = [:]
        for entry in entries { byKey[entry.file.key] = entry }
        let looked = entries.filter { $0.file.kind != .metadata }
        let facts = Parallel.map(looked) { entry in root.absolute(entry.file.path).flatMap(stat) }
        var factsByKey: [FileKey: (size: Int64, identity: String)?] = [:]
        factsByKey.reserveCapacity(looked.count)
        for (entry, fact) in zip(looked, facts) { factsByKey[entry.file.key] = fact }
        var files: [FileKey: File] = [:]
        func file(_ key: FileKey) -> File? {
            if let known = files[key] { return known }
            guard let entry = byKey[key], let absolute = root.absolute(entry.file.path) else { return nil }
            guard let facts = factsByKey[key] ?? stat(absolute), facts.size == entry.file.size else {
                source.problems.append(
                    "\(entry.file.path): missing or not the size the index recorded (run `mediasync verify`)")
                return nil
            }
            let made = File(key: key.rawValue, path: entry.file.path, size: facts.size, identity: facts.identity)
            files[key] = made
            return made
        }
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
        func versions(of item: BaseItem) -> [Version] {
            let names = Dictionary(
                (item.mediaSources ?? []).compactMap { source in source.id.map { ($0, source.name) } },
                uniquingKeysWith: { a, _ in a })
            // The primary version (its id is the item's) first: it names playlists' entries.
            return (mediaKeys[item.id] ?? []).sorted { left, right in
                ((left.versionId ?? item.id) == item.id ? 0 : 1, left.file.key) < (
                    (right.versionId ?? item.id) == item.id ? 0 : 1, right.file.key
                )
            }.compactMap { entry -> Version? in
                guard let media = file(entry.file.key) else { return nil }
                let versionId = entry.versionId ?? item.id
                let subtitles = (subtitleKeys[item.id] ?? []).filter { $0.versionId == versionId }.sorted {
                    $0.file.key < $1.file.key
                }
                .compactMap { subtitle -> Subtitle? in
                    guard
                        let parts = ExportNaming.subtitleParts(
                            mirrorPath: subtitle.file.path, mediaPath: entry.file.path),
                        let file = file(subtitle.file.key)
                    else { return nil }
                    return Subtitle(
                        streamIndex: parts.index, language: parts.language, forced: parts.forced, format: parts.format,
                        file: file)
                }
                return Version(versionId: versionId, name: names[versionId] ?? nil, media: media, subtitles: subtitles)
            }
        }
        var seriesById: [String: Series] = [:]
        var seasons: [(seriesId: String, season: Season)] = []
        let metadataEntries = entries.filter { $0.file.kind == .metadata }
        // Read through the byte-level parser into JSONValue, keeping only the members the export reads: JSONDecoder
        // on these documents (the server's whole item objects) was most of a no-op export's time, and building every
        // member of them most of what was left.
        let documents = Parallel.map(metadataEntries) { entry -> Result<JSONValue, ReadProblem> in
            guard let absolute = root.absolute(entry.file.path),
                let data = FileManager.default.contents(atPath: absolute)
            else { return .failure(ReadProblem(reason: "cannot be read")) }
            guard let document = try? JSONValue(parsing: [UInt8](data), keepingKeys: ExportSource.metadataKeys) else {
                return .failure(ReadProblem(reason: "not valid JSON"))
            }
            return .success(document)
        }
        for (entry, read) in zip(metadataEntries, documents) {
            let document: JSONValue
            switch read {
            case .success(let parsed): document = parsed
            case .failure(let problem):
                source.problems.append("\(entry.file.path): \(problem.reason)")
                continue
            }
            if entry.file.key.isPodcast {
                guard let podcastId = document["podcastID"]?.stringValue,
                    let episodesValue = document["episodes"]?.arrayValue
                else {
                    source.problems.append("\(entry.file.path): not a podcast's metadata")
                    continue
                }
                let episodes = episodesValue.compactMap { episode -> PodcastEpisode? in
                    guard let episodeId = episode["episodeID"]?.stringValue,
                        let media = file(.podcastEpisode(podcastId: podcastId, episodeId: episodeId))
                    else { return nil }
                    return PodcastEpisode(
                        id: episodeId, title: episode["title"]?.stringValue ?? episodeId,
                        published: episode["published"]?.stringValue,
                        file: media)
                }
                source.podcasts.append(
                    Podcast(
                        id: podcastId, title: document["podcastTitle"]?.stringValue ?? podcastId, episodes: episodes))
                continue
            }
            guard let item = document["item"].flatMap(BaseItem.init) else {
                source.problems.append("\(entry.file.path): not an item's metadata")
                continue
            }
            let metadata = (
                itemType: document["itemType"]?.stringValue,
                displayTitle: document["displayTitle"]?.stringValue ?? item.id,
                episodes: document["episodes"]?.arrayValue
            )
            switch metadata.itemType {
            case "Movie":
                source.movies.append(
                    Movie(
                        id: item.id, title: item.name ?? metadata.displayTitle, year: item.productionYear,
                        versions: versions(of: item), poster: file(.image(itemId: item.id, type: "Primary")),
                        backdrop: file(.image(itemId: item.id, type: "Backdrop"))))
            case "Series":
                seriesById[item.id] = Series(
                    id: item.id, title: item.name ?? metadata.displayTitle, year: item.productionYear,
                    poster: file(.image(itemId: item.id, type: "Primary")),
                    backdrop: file(.image(itemId: item.id, type: "Backdrop")), seasons: [])
            case "Season":
                let number = item.indexNumber ?? 0
                let episodes = (metadata.episodes ?? []).compactMap(BaseItem.init).map { episode in
                    Episode(
                        id: episode.id, title: episode.name, number: episode.indexNumber,
                        numberEnd: episode.raw["IndexNumberEnd"]?.intValue.map { Int($0) },
                        runTimeSeconds: episode.runTimeTicks.map { Int($0 / 10_000_000) },
                        versions: versions(of: episode),
                        thumb: file(.image(itemId: episode.id, type: "Primary")))
                }.filter { !$0.versions.isEmpty }
                let seriesId =
                    item.seriesId ?? entry.file.path.split(separator: "/").dropFirst().first.map(String.init) ?? ""
                seasons.append(
                    (
                        seriesId,
                        Season(
                            number: number, poster: file(.image(itemId: item.id, type: "Primary")), episodes: episodes)
                    ))
            default:
                break
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
        return source
    }
}
