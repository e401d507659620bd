/// What `/Items` (and `/Users/{userId}/Items`) asks for, read from the query as `ItemsController.GetItems` binds it
/// (v10.10.7 / v10.11.11), and the pure selection over a ``Catalog``: filter, sort, page.
public struct ItemQuery: Sendable, Hashable {
    public var parentId: String?
    /// Lowercased type names; empty: any.
    public var includeTypes: Set<String> = []
    public var excludeTypes: Set<String> = []
    public var recursive = false
    /// Lowercased sort keys, in order.
    public var sortBy: [String] = []
    /// Descending per sort key (one value applies to every key).
    public var descending: [Bool] = []
    public var startIndex = 0
    public var limit: Int?
    public var searchTerm: String?
    public var ids: [String] = []
    /// Lowercased `Filters` values (`isplayed`, `isunplayed`, `isresumable`, `isfolder`, `isnotfolder`).
    public var filters: Set<String> = []
    /// The `IsPlayed` parameter.
    public var isPlayed: Bool?
    /// Lowercased `Fields` values.
    public var fields: Set<String> = []
    /// `SeriesId` (episodes of a series).
    public var seriesId: String?
    /// `ExcludeItemIds`, as sent.
    public var excludeIds: [String] = []
    /// The `IsFavorite` parameter: false matches items never marked favorite too.
    public var isFavorite: Bool?
    /// Lowercased `MediaTypes` (`video`, `audio`); empty: any.
    public var mediaTypes: Set<String> = []
    /// `NameStartsWith`, `NameStartsWithOrGreater`, `NameLessThan`, lowercased: compared with the sort name, which
    /// Jellyfin stores lowercased (`SqliteItemRepository.GetWhereClauses`, v10.10.7).
    public var nameStartsWith: String?
    public var nameStartsWithOrGreater: String?
    public var nameLessThan: String?
    /// `Years`: production years; empty: any.
    public var years: Set<Int64> = []
    /// `Genres` (pipe-delimited, as Jellyfin binds it), lowercased; empty: any.
    public var genres: Set<String> = []
    /// `ArtistIds` (an item whose artists or album artists name one of them), `AlbumArtistIds` (album artists),
    /// `ContributingArtistIds` (artists but not album artists), `ExcludeArtistIds`, `AlbumIds` (tracks of the albums of
    /// those names), as sent: matched by the artist's and album's name, as `SqliteItemRepository.GetWhereClauses`
    /// matches them (v10.10.7 L3562–3625).
    public var artistIds: [String] = []
    public var albumArtistIds: [String] = []
    public var contributingArtistIds: [String] = []
    public var excludeArtistIds: [String] = []
    public var albumIds: [String] = []
    /// `ParentIndexNumber` and `IndexNumber` (a disc's tracks, a season's episodes).
    public var parentIndexNumber: Int?
    public var indexNumber: Int?

    /// The names the artist and album filters name, resolved from the catalog by ``select(_:state:)``.
    struct Names: Hashable {
        var artists: Set<String>?
        var albumArtists: Set<String>?
        var contributing: Set<String>?
        var excluded: Set<String> = []
        var albums: Set<String>?
    }

    var names = Names()

    public init() {}

    public init(_ query: RequestQuery) {
        parentId = query.nonEmpty("ParentId")
        includeTypes = Set(query.list("IncludeItemTypes").map { $0.lowercased() })
        excludeTypes = Set(query.list("ExcludeItemTypes").map { $0.lowercased() })
        recursive = query.bool("Recursive") ?? false
        sortBy = query.list("SortBy").map { $0.lowercased() }
        descending = query.list("SortOrder").map { $0.lowercased() == "descending" }
        startIndex = max(0, query.int("StartIndex") ?? 0)
        limit = query.int("Limit").map { max(0, $0) }
        searchTerm = query.nonEmpty("SearchTerm")
        ids = query.list("Ids")
        filters = Set(query.list("Filters").map { $0.lowercased() })
        isPlayed = query.bool("IsPlayed")
        fields = Set(query.list("Fields").map { $0.lowercased() })
        seriesId = query.nonEmpty("SeriesId")
        excludeIds = query.list("ExcludeItemIds")
        isFavorite = query.bool("IsFavorite")
        mediaTypes = Set(query.list("MediaTypes").map { $0.lowercased() })
        nameStartsWith = query.nonEmpty("NameStartsWith")?.lowercased()
        nameStartsWithOrGreater = query.nonEmpty("NameStartsWithOrGreater")?.lowercased()
        nameLessThan = query.nonEmpty("NameLessThan")?.lowercased()
        years = Set(query.list("Years").compactMap { Int64($0) })
        genres = Set(
            (query.nonEmpty("Genres") ?? "").split(separator: "|").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }.filter { !$0.isEmpty })
        artistIds = query.list("ArtistIds")
        albumArtistIds = query.list("AlbumArtistIds")
        contributingArtistIds = query.list("ContributingArtistIds")
        excludeArtistIds = query.list("ExcludeArtistIds")
        albumIds = query.list("AlbumIds")
        parentIndexNumber = query.int("ParentIndexNumber")
        indexNumber = query.int("IndexNumber")
    }

    /// Why a query cannot be answered.
    public enum Refusal: Error, Equatable {
        /// A `ParentId` that names nothing here (Jellyfin 10.9+ answers 400: `LibraryManager.GetParentItem`).
        case unknownParent
    }

    /// The items this query selects: the page and the total before paging.
    public func select(_ catalog: Catalog, state: (CatalogItem) -> UserState) throws(Refusal) -> (
        items: [CatalogItem], total: Int
    ) {
        var query = self
        // A series id as clients send it (with dashes, any case) names the catalog's series.
        if let asked = seriesId { query.seriesId = catalog.item(asked)?.id ?? asked }
        query.resolveNames(catalog)
        // `IncludeItemTypes=BoxSet` alone looks at the whole library, whatever `ParentId` says
        // (`ItemsController.GetItems`, v10.10.7 L180–184).
        if includeTypes == ["boxset"] { query.parentId = nil }
        var parent: CatalogItem?
        if let parentId = query.parentId {
            guard let found = catalog.item(parentId) else { throw .unknownParent }
            parent = found
            // The playlists folder lists its playlists, recursively (L197–201).
            if found.upstream("CollectionType")?.stringValue == "playlists" {
                query.recursive = true
                query.includeTypes = ["playlist"]
            }
        }
        var candidates: [CatalogItem]
        if !ids.isEmpty {
            candidates = ids.compactMap { catalog.item($0) }
        } else if let parent {
            candidates = catalog.members(of: parent, recursive: query.recursive)
        } else if query.recursive {
            let views = catalog.viewIds
            candidates = catalog.items.values.filter { !views.contains($0.id) }
        } else {
            candidates = catalog.views
        }
        if query.sortBy.isEmpty, !query.artistIds.isEmpty, query.includeTypes == ["musicalbum"] {
            // Albums by artist, newest first (`ItemsController.GetItems` L418–424).
            query.sortBy = ["productionyear", "sortname"]
            query.descending = [true, false]
        }
        // A playlist's or box set's entries keep their order unless a sort is asked for (`Playlist.IsPreSorted`;
        // `UserViewBuilder.SortAndPage` sorts only by the `OrderBy` given, v10.10.7).
        let keepOrder = !ids.isEmpty || (parent?.isList ?? false)
        return query.page(candidates, catalog: catalog, keepOrder: keepOrder, state: state)
    }

    /// ``select(_:state:)``, with the whole selection in order kept in the catalog's memo for a query that reads no
    /// user state: a client paging through a library asks the same query again with another `StartIndex`, and the
    /// filter and sort of every item are then done once per catalog, not once per page.
    public func selectPage(_ catalog: Catalog, state: (CatalogItem) -> UserState) throws(Refusal) -> (
        items: [CatalogItem], total: Int
    ) {
        guard isMemoizable else { return try select(catalog, state: state) }
        var whole = self
        whole.startIndex = 0
        whole.limit = nil
        let all: [CatalogItem]
        if let kept = catalog.listings.selection(for: whole) {
            all = kept
        } else {
            all = try whole.select(catalog, state: state).items
            catalog.listings.keep(all, for: whole)
        }
        return (Array(all[pageRange(of: all.count)]), all.count)
    }

    /// The positions `StartIndex` and `Limit` take of a selection of `count`.
    func pageRange(of count: Int) -> Range<Int> {
        let start = min(startIndex, count)
        return start..<(limit.map { min(count, start + $0) } ?? count)
    }

    /// Whether the filters read the user's state of an item (played, favorite, resumable).
    var filtersReadUserState: Bool {
        isPlayed != nil || isFavorite != nil || !filters.isDisjoint(with: ItemQuery.userStateFilters)
    }

    /// Whether the selection depends on nothing but the catalog: no played-state filter or sort, no random order, no
    /// search (whose terms are too many to keep), no list of ids.
    var isMemoizable: Bool {
        !filtersReadUserState
            && sortBy.allSatisfy { !ItemQuery.userStateKeys.contains($0) && $0 != "random" } && searchTerm == nil
            && ids.isEmpty
    }

    /// `candidates` filtered by this query, sorted (unless `keepOrder` and no sort was asked for), and the page.
    public func page(
        _ candidates: [CatalogItem], catalog: Catalog, keepOrder: Bool = false, state: (CatalogItem) -> UserState
    ) -> (items: [CatalogItem], total: Int) {
        let excluded = Set(excludeIds.compactMap { catalog.item($0)?.id })
        let needsState = filtersReadUserState
        let matched = candidates.filter { item in
            !excluded.contains(item.id) && matches(item, state: needsState ? state(item) : UserState())
        }
        let order = !keepOrder || !sortBy.isEmpty ? sortedOrder(matched, state: state) : Array(matched.indices)
        return (order[pageRange(of: order.count)].map { matched[$0] }, order.count)
    }

    /// The `Filters` that read the user's state of an item.
    static let userStateFilters: Set<String> = ["isplayed", "isunplayed", "isresumable", "isfavorite"]

    /// Reads the artist and album filters' ids as the names they stand for (an id that names nothing here matches
    /// nothing, as the SQL's sub-select finds no name).
    mutating func resolveNames(_ catalog: Catalog) {
        func resolved(_ ids: [String]) -> Set<String>? {
            guard !ids.isEmpty else { return nil }
            return Set(ids.compactMap { catalog.item($0)?.name.lowercased() })
        }
        names.artists = resolved(artistIds)
        names.albumArtists = resolved(albumArtistIds)
        names.contributing = resolved(contributingArtistIds)
        names.excluded = resolved(excludeArtistIds) ?? []
        names.albums = albumIds.isEmpty ? nil : Set(albumIds.compactMap { catalog.item($0)?.name })
    }

    func matches(_ item: CatalogItem, state: UserState) -> Bool {
        let type = item.type.lowercased()
        if !includeTypes.isEmpty && !includeTypes.contains(type) { return false }
        if excludeTypes.contains(type) { return false }
        if let seriesId, item.seriesId != seriesId && item.id != seriesId { return false }
        if let searchTerm,
            item.name.range(of: searchTerm, options: [.caseInsensitive, .diacriticInsensitive]) == nil
        {
            return false
        }
        if let isPlayed, state.played != isPlayed { return false }
        if let isFavorite, state.isFavorite != isFavorite { return false }
        if !mediaTypes.isEmpty && !mediaTypes.contains(item.mediaType?.lowercased() ?? "") { return false }
        if let nameStartsWith, !item.sortName.hasPrefix(nameStartsWith) { return false }
        if let nameStartsWithOrGreater, item.sortName < nameStartsWithOrGreater { return false }
        if let nameLessThan, item.sortName >= nameLessThan { return false }
        if !years.isEmpty && !years.contains(item.upstream("ProductionYear")?.intValue ?? -1) { return false }
        if !genres.isEmpty {
            let own = (item.upstream("Genres")?.arrayValue ?? []).compactMap { $0.stringValue?.lowercased() }
            if !own.contains(where: genres.contains) { return false }
        }
        if let parentIndexNumber, item.parentIndexNumber != parentIndexNumber { return false }
        if let indexNumber, item.indexNumber != indexNumber { return false }
        if names != Names() && !matchesNames(item) { return false }
        for filter in filters {
            switch filter {
            case "isplayed": if !state.played { return false }
            case "isunplayed": if state.played { return false }
            case "isresumable": if !state.isResumable { return false }
            case "isfolder": if !item.isFolder { return false }
            case "isnotfolder": if item.isFolder { return false }
            case "isfavorite": if !state.isFavorite { return false }
            default: break
            }
        }
        return true
    }

    /// The artist and album filters (`ArtistIds`: item values of type 0 or 1, `AlbumArtistIds`: type 1,
    /// `ContributingArtistIds`: type 0 and not type 1, `AlbumIds`: the track's `Album`).
    func matchesNames(_ item: CatalogItem) -> Bool {
        let album = Set(item.albumArtistNames)
        let track = Set(item.trackArtistNames)
        if let wanted = names.artists, wanted.isDisjoint(with: album.union(track)) { return false }
        if let wanted = names.albumArtists, wanted.isDisjoint(with: album) { return false }
        if let wanted = names.contributing, !wanted.contains(where: { track.contains($0) && !album.contains($0) }) {
            return false
        }
        if !names.excluded.isDisjoint(with: album.union(track)) { return false }
        if let wanted = names.albums, !wanted.contains(item.upstream("Album")?.stringValue ?? "") { return false }
        return true
    }

    /// The positions of `items` sorted by the keys asked for (`SortName` when none), ties broken by sort name and id so
    /// pages never overlap. Unknown keys are ignored, as Jellyfin ignores them.
    func sortedOrder(_ items: [CatalogItem], state: (CatalogItem) -> UserState) -> [Int] {
        let keys = sortBy.isEmpty ? ["sortname"] : sortBy
        // `Random` orders by a draw per item and query, as SQL's `RANDOM()` does.
        if keys.first == "random" { return items.indices.shuffled() }
        // The user's state is read once per item, and only for a key that needs it.
        let states: [UserState]? =
            keys.contains(where: ItemQuery.userStateKeys.contains) ? items.map { state($0) } : nil
        // Each key's value of each item is read once, before the sort, which then compares small values by position
        // (an item is a large value: handing one to a comparison costs a reference count per member). The sort names
        // are read once for a sort-name key and the tie-break both; a key with one value for all items (a date no
        // item has) decides nothing and is left out.
        let names = items.map(\.sortName)
        var columns: [(values: [SortValue]?, down: Bool)] = []
        for (position, key) in keys.enumerated() where ItemQuery.sortKeys.contains(key) {
            let down = descending.count == 1 ? descending[0] : (position < descending.count && descending[position])
            if key == "sortname" || key == "name" {
                columns.append((nil, down))
                continue
            }
            let values = items.indices.map { ItemQuery.sortValue(key, items[$0], states?[$0]) }
            if let first = values.first, values.allSatisfy({ $0 == first }) { continue }
            columns.append((values, down))
        }
        let ids = items.map(\.id)
        return items.indices.sorted { a, b in
            for column in columns {
                if let values = column.values {
                    if values[a] != values[b] { return column.down ? values[b] < values[a] : values[a] < values[b] }
                } else if names[a] != names[b] {
                    return column.down ? names[b] < names[a] : names[a] < names[b]
                }
            }
            if names[a] != names[b] { return names[a] < names[b] }
            return ids[a] < ids[b]
        }
    }

    /// The sort keys that read the user's state of an item.
    static let userStateKeys: Set<String> = ["dateplayed", "datelastcontentadded", "playcount"]
    /// The sort keys understood here.
    static let sortKeys: Set<String> = userStateKeys.union([
        "sortname", "name", "datecreated", "premieredate", "productionyear", "indexnumber", "parentindexnumber",
        "runtime", "album", "albumartist", "artist",
    ])

    /// One item's value for one sort key; an absent value sorts first (as SQL's NULL does in Jellyfin's queries).
    enum SortValue: Comparable, Sendable {
        case absent
        case number(Int64)
        case text(String)
    }

    static func sortValue(_ key: String, _ item: CatalogItem, _ state: UserState?) -> SortValue {
        func text(_ value: String?) -> SortValue { value.map { .text($0) } ?? .absent }
        func number<T: BinaryInteger>(_ value: T?) -> SortValue { value.map { .number(Int64($0)) } ?? .absent }
        // `AlbumComparer`, `ArtistComparer` (v10.10.7): a track's album, a track's first artist, without case.
        func trackOnly(_ value: String?) -> SortValue { item.type == "Audio" ? text(value?.lowercased()) : .absent }
        switch key {
        case "sortname", "name": return .text(item.sortName)
        case "datecreated": return text(item.dateCreated)
        case "premieredate", "productionyear": return text(item.premiereDate)
        case "indexnumber": return number(item.indexNumber)
        case "parentindexnumber": return number(item.parentIndexNumber)
        case "runtime": return number(item.runTimeTicks)
        case "dateplayed", "datelastcontentadded": return text(state?.lastPlayed)
        case "playcount": return number(state?.playCount)
        case "album": return trackOnly(item.upstream("Album")?.stringValue)
        // `AlbumArtistComparer`: the first album artist.
        case "albumartist": return text(item.albumArtistNames.first)
        case "artist": return trackOnly(item.trackArtistNames.first)
        default: return .absent
        }
    }
}
