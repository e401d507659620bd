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
        case library, movie, series, season, episode
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
        default:
            let typeName =
                ["movie": "Movie", "series": "Series", "season": "Season", "episode": "Episode"][
                    type.rawValue] ?? ""
            items = try await session.client.items(
                ItemsQuery(parentId: parent, recursive: true, includeItemTypes: [typeName], searchTerm: search))
        }
        return items.map(ServerItem.init)
    }

    /// One item by id.
    public func item(id: String) async throws -> ServerItem {
        ServerItem(try await session.client.item(id: id))
    }
}
