import Foundation
import MediaSyncServer

/// One item on the server, as `browse` lists it and `browse --json` prints it.
public struct ServerItem: Encodable, Sendable, Equatable {
    public var id: String
    public var type: String?
    public var name: String?
    public var seriesName: String?
    public var seasonNumber: Int?
    public var episodeNumber: Int?
    public var year: Int?
    public var collectionType: String?
    public var versions: Int?
    /// An album's or a track's album artist.
    public var artist: String?

    init(id: String, type: String?, name: String?, year: Int? = nil) {
        self.id = id
        self.type = type
        self.name = name
        self.year = year
    }

    init(_ item: BaseItem) {
        id = item.id
        type = item.type
        name = item.name
        seriesName = item.seriesName
        seasonNumber = item.type == "Season" ? item.indexNumber : item.parentIndexNumber
        episodeNumber = item.type == "Episode" ? item.indexNumber : nil
        year = item.productionYear
        collectionType = item.collectionType
        versions = item.mediaSources?.count
        artist = item.albumArtist
    }

    /// A short detail for a table: an episode's series and `S01E02`, a season's series, a library's type, a movie's
    /// year and versions.
    public var detail: String {
        switch type {
        case "Episode":
            let season = seasonNumber.map { String(format: "S%02d", $0) } ?? ""
            let episode = episodeNumber.map { String(format: "E%02d", $0) } ?? ""
            return [seriesName ?? "", season + episode].filter { !$0.isEmpty }.joined(separator: " ")
        case "Season":
            return seriesName ?? ""
        case "CollectionFolder", "UserView":
            return collectionType ?? ""
        case "MusicAlbum", "Audio":
            return [artist, year.map(String.init)].compactMap { $0 }.joined(separator: ", ")
        default:
            var parts: [String] = []
            if let year { parts.append(String(year)) }
            if let versions, versions > 1 { parts.append("\(versions) versions") }
            return parts.joined(separator: ", ")
        }
    }
}

/// `browse` and `select`: what is on the signed-in server.
public struct ServerBrowser: Sendable {
    let session: Session

    public init(session: Session) {
        self.session = session
    }

    /// What `browse --type` lists.
    public enum ItemType: String, Sendable, CaseIterable {
        case library, movie, series, season, episode, album, artist, track, playlist, collection, musicvideo, video
        case audiobook, book

        /// The Jellyfin `Type` listed.
        var jellyfinType: String {
            switch self {
            case .library: return "CollectionFolder"
            case .movie: return "Movie"
            case .series: return "Series"
            case .season: return "Season"
            case .episode: return "Episode"
            case .album: return "MusicAlbum"
            case .artist: return "MusicArtist"
            case .track: return "Audio"
            case .playlist: return "Playlist"
            case .collection: return "BoxSet"
            case .musicvideo: return "MusicVideo"
            case .video: return "Video"
            case .audiobook: return "AudioBook"
            case .book: return "Book"
            }
        }
    }

    /// The user's libraries, or the movies, series, seasons or episodes (below `parent`, whose name contains
    /// `search`).
    public func list(_ type: ItemType, search: String? = nil, parent: String? = nil) async throws -> [ServerItem] {
        let items: [BaseItem]
        switch type {
        case .library:
            items = try await session.client.userViews().filter {
                search == nil || ($0.name ?? "").localizedCaseInsensitiveContains(search ?? "")
            }
        case .season where parent != nil:
            items = try await session.client.seasons(seriesId: parent ?? "")
        case .artist:
            // Album artists from their own route (by-name artists have no parent, and `/Items` leaves them out); a
            // server without it is asked `/Items`.
            do {
                items = try await session.client.albumArtists(search: search, parentId: parent)
            } catch let error as JellyfinError where error.status == 404 || error.status == 405 {
                items = try await session.client.items(
                    ItemsQuery(parentId: parent, recursive: true, includeItemTypes: ["MusicArtist"], searchTerm: search)
                )
            }
        case .album, .track:
            // An album's or a track's list in disc and track order, or albums by name.
            items = try await session.client.items(
                ItemsQuery(
                    parentId: parent, recursive: true, includeItemTypes: [type.jellyfinType], searchTerm: search,
                    sortBy: type == .track ? SelectionExpander.trackListingOrder : ["SortName"]))
        default:
            items = try await session.client.items(
                ItemsQuery(
                    parentId: parent, recursive: true, includeItemTypes: [type.jellyfinType], searchTerm: search))
        }
        return items.map(ServerItem.init)
    }

    /// One item by id.
    public func item(id: String) async throws -> ServerItem {
        ServerItem(try await session.client.item(id: id))
    }

    /// What a name given for an item stands for on the server.
    public enum NameMatch: Sendable, Equatable {
        /// The one item it names.
        case one(ServerItem)
        /// Several items it could name, to choose from by id.
        case several([ServerItem])
        /// Nothing of that kind is called so.
        case none
    }

    /// Finds the `type` of item called `name` through the server's own search (what `browse --search` asks, so it
    /// finds what Jellyfin finds): see ``match(_:in:)``.
    public func find(_ type: ItemType, named name: String) async throws -> NameMatch {
        guard type == .audiobook else { return ServerBrowser.match(name, in: try await list(type, search: name)) }
        // A book in parts is a plain `Folder` of audiobooks on Jellyfin: an audiobook's name may be a folder's.
        let found = try await session.client.items(
            ItemsQuery(recursive: true, includeItemTypes: ["AudioBook", "Folder"], searchTerm: name))
        return ServerBrowser.match(name, in: found.map(ServerItem.init))
    }

    /// Which of the items a search found a name stands for: the only one found; else the only one whose name is the
    /// name given, compared as people read names (case, accents and the width of characters aside), as "Alien"
    /// stands for the film among "Alien", "Aliens" and "Alien³"; else every one found (or every one so named) to
    /// choose from.
    public static func match(_ name: String, in found: [ServerItem]) -> NameMatch {
        guard found.count > 1 else { return found.first.map(NameMatch.one) ?? .none }
        let wanted = comparableName(name)
        let named = found.filter { comparableName($0.name ?? "") == wanted }
        if named.count == 1, let only = named.first { return .one(only) }
        return .several(named.isEmpty ? found : named)
    }

    /// A name as it is compared: case, diacritics and the width of characters folded, spaces at its ends trimmed.
    static func comparableName(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines)
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// Whether a word given for an item is its Jellyfin id (32 hexadecimal digits, dashed or not) rather than its
    /// name.
    public static func isItemId(_ text: String) -> Bool {
        let digits = JellyfinID.comparable(text)
        return digits.utf8.count == 32 && (text.utf8.count == 32 || text.utf8.count == 36)
            && digits.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
