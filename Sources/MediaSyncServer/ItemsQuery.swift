/// The parameters of an `/Items` listing. `userId`, `startIndex` and `limit` are added by the client.
public struct ItemsQuery: Sendable, Equatable {
    /// Fields a mirror needs on every media item (names of Jellyfin's `ItemFields`).
    public static let mediaFields = ["MediaSources", "Etag", "Path", "DateCreated", "ParentId", "ProviderIds"]
    /// The page size used unless another is given.
    public static let defaultPageSize = 200

    /// `parentId`: list below this folder or library view.
    public var parentId: String?
    /// `recursive`: include descendants, not only children.
    public var recursive: Bool?
    /// `includeItemTypes`, such as `Movie`, `Series`.
    public var includeItemTypes: [String]
    /// `excludeItemTypes`.
    public var excludeItemTypes: [String]
    /// `ids`: only these items.
    public var ids: [String]
    /// `albumArtistIds`: only items whose album artists include one of these artists (by the artist's name on the
    /// server, so an artist's own albums, not those it only appears on).
    public var albumArtistIds: [String] = []
    /// `searchTerm`.
    public var searchTerm: String?
    /// `fields`: extra fields to include (see ``mediaFields``).
    public var fields: [String]
    /// `isMissing`: false leaves out virtual (missing) episodes.
    public var isMissing: Bool?
    /// `isPlayed`.
    public var isPlayed: Bool?
    /// `sortBy`, such as `SortName`.
    public var sortBy: [String]
    /// `sortOrder`: `Ascending` or `Descending`.
    public var sortOrder: String?
    /// The page size (`limit` of each request); the client fetches every page.
    public var limit: Int

    /// Creates a query.
    public init(
        parentId: String? = nil, recursive: Bool? = nil, includeItemTypes: [String] = [],
        excludeItemTypes: [String] = [],
        ids: [String] = [], searchTerm: String? = nil, fields: [String] = ItemsQuery.mediaFields,
        isMissing: Bool? = nil,
        isPlayed: Bool? = nil, sortBy: [String] = [], sortOrder: String? = nil, limit: Int = ItemsQuery.defaultPageSize
    ) {
        self.parentId = parentId
        self.recursive = recursive
        self.includeItemTypes = includeItemTypes
        self.excludeItemTypes = excludeItemTypes
        self.ids = ids
        self.searchTerm = searchTerm
        self.fields = fields
        self.isMissing = isMissing
        self.isPlayed = isPlayed
        self.sortBy = sortBy
        self.sortOrder = sortOrder
        self.limit = limit
    }

    /// The query parameters, without `userId`, `startIndex` and `limit`.
    var parameters: [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        if let parentId { result.append(("parentId", parentId)) }
        if let recursive { result.append(("recursive", recursive ? "true" : "false")) }
        if !includeItemTypes.isEmpty { result.append(("includeItemTypes", includeItemTypes.joined(separator: ","))) }
        if !excludeItemTypes.isEmpty { result.append(("excludeItemTypes", excludeItemTypes.joined(separator: ","))) }
        if !ids.isEmpty { result.append(("ids", ids.joined(separator: ","))) }
        if !albumArtistIds.isEmpty { result.append(("albumArtistIds", albumArtistIds.joined(separator: ","))) }
        if let searchTerm, !searchTerm.isEmpty { result.append(("searchTerm", searchTerm)) }
        if !fields.isEmpty { result.append(("fields", fields.joined(separator: ","))) }
        if let isMissing { result.append(("isMissing", isMissing ? "true" : "false")) }
        if let isPlayed { result.append(("isPlayed", isPlayed ? "true" : "false")) }
        if !sortBy.isEmpty { result.append(("sortBy", sortBy.joined(separator: ","))) }
        if let sortOrder { result.append(("sortOrder", sortOrder)) }
        return result
    }
}
