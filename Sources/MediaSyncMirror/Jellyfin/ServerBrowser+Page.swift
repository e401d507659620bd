import Foundation
import MediaSyncServer

/// One page of what a library holds, for `serve`'s page: the items that can be kept offline, each with whether the
/// server has a poster for it.
public struct ServerPage: Sendable, Equatable {
    public var items: [ServerItem]
    /// How many items match in all.
    public var total: Int
    /// The ids of the items with a `Primary` image.
    public var withPoster: Set<String>
}

extension ServerBrowser {
    /// The Jellyfin types a page lists: those `select` keeps.
    public static let pageTypes = ["Movie", "Series", "MusicAlbum", "Playlist", "BoxSet"]

    /// Items of ``pageTypes`` below `parent` (a library; nil: every library), whose name matches `search` as the
    /// server's search matches it, sorted by name, from `start` on, at most `limit`.
    public func page(parent: String?, search: String?, start: Int, limit: Int) async throws -> ServerPage {
        let found = try await session.client.items(
            ItemsQuery(
                parentId: parent, recursive: true, includeItemTypes: ServerBrowser.pageTypes, searchTerm: search,
                fields: ["ProductionYear"], sortBy: ["SortName"]))
        let first = min(max(0, start), found.count)
        let last = min(found.count, first + max(0, limit))
        let shown = found[first..<last]
        return ServerPage(
            items: shown.map(ServerItem.init), total: found.count,
            withPoster: Set(shown.filter { $0.imageTags["Primary"] != nil }.map(\.id)))
    }

    /// The item's `Primary` image, at most `maxWidth` pixels wide, asked with the stored sign-in.
    public func poster(id: String, maxWidth: Int) async throws -> [UInt8] {
        let url = try session.client.imageURL(itemId: id, type: "Primary", maxWidth: maxWidth)
        return try await session.client.read(url: url, what: "poster")
    }
}
