/// What `/Items` (and `/Users/{userId}/Items`) asks for, read from the query as `ItemsController.GetItems` binds it
/// (v10.10.7 / v10.11.11), and the pure selection over a ``Catalog``: filter, sort, page.
public struct ItemQuery: Sendable, Equatable {
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
        return try query.selectNormalised(catalog, state: state)
    }

    private func selectNormalised(_ catalog: Catalog, state: (CatalogItem) -> UserState) throws(Refusal) -> (
        items: [CatalogItem], total: Int
    ) {
        var candidates: [CatalogItem]
        if !ids.isEmpty {
            candidates = ids.compactMap { catalog.item($0) }
        } else if let parentId {
            guard let parent = catalog.item(parentId) else { throw .unknownParent }
            candidates =
                recursive
                ? catalog.descendants(of: parent.id)
                : (catalog.children[parent.id] ?? []).compactMap { catalog.items[$0] }
        } else if recursive {
            candidates = catalog.items.values.filter { $0.type != "CollectionFolder" }
        } else {
            candidates = catalog.views
        }
        let excluded = Set(excludeIds.compactMap { catalog.item($0)?.id })
        let matched = candidates.filter { item in
            !excluded.contains(item.id) && matches(item, state: state(item))
        }
        let sorted = ids.isEmpty || !sortBy.isEmpty ? sort(matched, state: state) : matched
        let start = min(startIndex, sorted.count)
        let end = limit.map { min(sorted.count, start + $0) } ?? sorted.count
        return (Array(sorted[start..<end]), sorted.count)
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
        if !years.isEmpty && !years.contains(item.raw["ProductionYear"]?.intValue ?? -1) { return false }
        if !genres.isEmpty {
            let own = (item.raw["Genres"]?.arrayValue ?? []).compactMap { $0.stringValue?.lowercased() }
            if !own.contains(where: genres.contains) { return false }
        }
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

    /// Sorted by the keys asked for (`SortName` when none), ties broken by sort name and id so pages never
    /// overlap. Unknown keys are ignored, as Jellyfin ignores them.
    func sort(_ items: [CatalogItem], state: (CatalogItem) -> UserState) -> [CatalogItem] {
        let keys = sortBy.isEmpty ? ["sortname"] : sortBy
        // `Random` orders by a draw per item and query, as SQL's `RANDOM()` does.
        if keys.first == "random" { return items.shuffled() }
        let states = Dictionary(items.map { ($0.id, state($0)) }, uniquingKeysWith: { first, _ in first })
        return items.sorted { left, right in
            for (position, key) in keys.enumerated() {
                let down = descending.count == 1 ? descending[0] : (position < descending.count && descending[position])
                let order = ItemQuery.compare(key, left, right, states[left.id], states[right.id])
                if order != 0 { return down ? order > 0 : order < 0 }
            }
            if left.sortName != right.sortName { return left.sortName < right.sortName }
            return left.id < right.id
        }
    }

    /// -1, 0 or 1 for one sort key; an absent value sorts first (as SQL's NULL does in Jellyfin's queries).
    static func compare(
        _ key: String, _ left: CatalogItem, _ right: CatalogItem, _ leftState: UserState?,
        _ rightState: UserState?
    ) -> Int {
        func order<T: Comparable>(_ a: T?, _ b: T?) -> Int {
            switch (a, b) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let a?, let b?): return a < b ? -1 : (a > b ? 1 : 0)
            }
        }
        switch key {
        case "sortname", "name": return order(left.sortName, right.sortName)
        case "datecreated": return order(left.dateCreated, right.dateCreated)
        case "premieredate", "productionyear": return order(left.premiereDate, right.premiereDate)
        case "indexnumber": return order(left.indexNumber, right.indexNumber)
        case "parentindexnumber": return order(left.parentIndexNumber, right.parentIndexNumber)
        case "runtime": return order(left.runTimeTicks, right.runTimeTicks)
        case "dateplayed", "datelastcontentadded":
            return order(leftState?.lastPlayed, rightState?.lastPlayed)
        case "playcount": return order(leftState?.playCount, rightState?.playCount)
        default: return 0
        }
    }
}
