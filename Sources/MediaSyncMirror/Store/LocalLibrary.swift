import Foundation
import MediaSyncCore
import MediaSyncServer

/// The local library for `mediasync ls` (its listing, search and filters): movies, series, episodes, albums,
/// tracks, podcasts and podcast episodes, read from the index and the tree's metadata files — no server needed.
public struct LocalLibrary: Sendable {
    let root: MirrorRoot
    let index: MirrorIndex

    public init(root: MirrorRoot, index: MirrorIndex) {
        self.root = root
        self.index = index
    }

    /// One listed thing.
    public struct Item: Codable, Sendable, Equatable {
        /// `movie` (music and home videos too), `series`, `episode`, `album`, `track`, `audiobook`, `audiobook-part`,
        /// `book`, `podcast` or `podcast-episode`.
        public var type: String
        public var id: String
        public var title: String
        /// The series or podcast it belongs to.
        public var parent: String?
        public var season: Int?
        public var episode: Int?
        /// Whether every media file of it is on disk with its recorded size.
        public var downloaded: Bool
        public var bytes: Int64
    }

    public func items() throws -> [Item] {
        let entries = try index.entries()
        let sizes = FilePlacer(root: root, durable: false).sizes(of: entries.map(\.file.path))
        var media: [String: [IndexEntry]] = [:]
        for entry in entries where entry.file.kind == .media {
            let owner = entry.file.key.isPodcast ? (entry.versionId ?? "") : entry.file.itemId
            media[owner, default: []].append(entry)
        }
        func state(_ id: String) -> (Bool, Int64) {
            let held = media[id] ?? []
            let complete = !held.isEmpty && held.allSatisfy { sizes[$0.file.path] == $0.file.size }
            return (complete, held.reduce(0) { $0 + $1.file.size })
        }
        var items: [Item] = []
        for entry in entries where entry.file.kind == .metadata {
            guard let data = root.absolute(entry.file.path).flatMap({ FileManager.default.contents(atPath: $0) }) else {
                continue
            }
            if let podcast = try? JSONDecoder().decode(PodcastMetadata.self, from: data) {
                items.append(
                    Item(
                        type: "podcast", id: podcast.podcastID, title: podcast.podcastTitle, parent: nil, season: nil,
                        episode: nil, downloaded: true, bytes: podcast.totalSize))
                for episode in podcast.episodes {
                    let (complete, bytes) = state(episode.episodeID)
                    items.append(
                        Item(
                            type: "podcast-episode", id: episode.episodeID, title: episode.title,
                            parent: podcast.podcastTitle,
                            season: nil, episode: nil, downloaded: complete, bytes: bytes))
                }
            } else if let metadata = try? JSONDecoder().decode(DownloadMetadata.self, from: data) {
                if let tracks = metadata.tracks {
                    // An album (or a loose track's folder): the album, then its tracks by disc and number. An
                    // audiobook: the book, then its parts in play order.
                    let held = tracks.compactMap(BaseItem.init).map { ($0, state($0.id)) }
                    let isAudiobook = metadata.itemType == "AudioBook"
                    if isAudiobook {
                        items.append(
                            Item(
                                type: "audiobook", id: metadata.itemId, title: metadata.displayTitle,
                                parent: held.first?.0.albumArtist, season: nil, episode: nil,
                                downloaded: held.allSatisfy(\.1.0), bytes: held.reduce(0) { $0 + $1.1.1 }))
                        // A book of one file is listed once; a book in parts lists each part under the book.
                        guard held.count > 1 || held.first?.0.id != metadata.itemId else { continue }
                        for (position, (part, (complete, bytes))) in held.enumerated() {
                            items.append(
                                Item(
                                    type: "audiobook-part", id: part.id, title: part.name ?? part.id,
                                    parent: metadata.displayTitle, season: nil, episode: position + 1,
                                    downloaded: complete, bytes: bytes))
                        }
                        continue
                    }
                    items.append(
                        Item(
                            type: "album", id: metadata.itemId, title: metadata.displayTitle, parent: nil, season: nil,
                            episode: nil, downloaded: held.allSatisfy(\.1.0), bytes: held.reduce(0) { $0 + $1.1.1 }))
                    for (track, (complete, bytes)) in held {
                        items.append(
                            Item(
                                type: "track", id: track.id, title: track.name ?? track.id,
                                parent: metadata.displayTitle, season: track.parentIndexNumber,
                                episode: track.indexNumber, downloaded: complete, bytes: bytes))
                    }
                    continue
                }
                switch metadata.itemType {
                case "Movie", "MusicVideo", "Video":
                    let (complete, bytes) = state(metadata.itemId)
                    items.append(
                        Item(
                            type: "movie", id: metadata.itemId, title: metadata.displayTitle, parent: nil, season: nil,
                            episode: nil, downloaded: complete, bytes: bytes))
                case "Book":
                    let (complete, bytes) = state(metadata.itemId)
                    items.append(
                        Item(
                            type: "book", id: metadata.itemId, title: metadata.displayTitle,
                            parent: metadata.item.flatMap { BaseItem($0) }.flatMap(SelectionExpander.author(of:)),
                            season: nil,
                            episode: nil, downloaded: complete, bytes: bytes))
                case "Series":
                    let ids = Set(metadata.versions.compactMap(\.itemId))
                    let all = ids.map(state)
                    items.append(
                        Item(
                            type: "series", id: metadata.itemId, title: metadata.displayTitle, parent: nil, season: nil,
                            episode: nil, downloaded: all.allSatisfy(\.0), bytes: all.reduce(0) { $0 + $1.1 }))
                case "Season":
                    for episode in (metadata.episodes ?? []).compactMap(BaseItem.init) {
                        let (complete, bytes) = state(episode.id)
                        items.append(
                            Item(
                                type: "episode", id: episode.id, title: episode.name ?? episode.id,
                                parent: episode.seriesName,
                                season: episode.parentIndexNumber, episode: episode.indexNumber, downloaded: complete,
                                bytes: bytes))
                    }
                default:
                    break
                }
            }
        }
        return items.sorted {
            ($0.parent ?? $0.title, $0.season ?? 0, $0.episode ?? 0, $0.title) < (
                $1.parent ?? $1.title, $1.season ?? 0, $1.episode ?? 0, $1.title
            )
        }
    }
}
