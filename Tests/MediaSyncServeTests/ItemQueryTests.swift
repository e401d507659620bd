import MediaSyncJSON
import MediaSyncServe
import Testing

@Suite struct ItemQueryTests {
    static let file = HeldFile(path: "/dev/null", size: 1, modified: 0)

    static func playable(
        _ id: String, _ type: String, _ name: String, parent: String, created: String, index: Int? = nil,
        season: Int? = nil, series: String? = nil, year: Int? = nil, genres: [String] = []
    ) -> CatalogItem {
        var raw = JSONObject()
        if let year { raw["ProductionYear"] = .number(Double(year)) }
        if !genres.isEmpty { raw["Genres"] = .array(genres.map { .string($0) }) }
        return CatalogItem(
            id: id, type: type, name: name, parentId: parent, seriesId: series, indexNumber: index,
            parentIndexNumber: season, dateCreated: created, premiereDate: created, runTimeTicks: 1_000, raw: raw,
            versions: [HeldVersion(id: id, container: "mkv", file: file, subtitles: [])])
    }

    /// Movies B (1999, drama), a (2001, comedy and drama), C (2001); one series with one season of three episodes.
    static let catalog = Catalog(
        views: [
            CatalogItem(id: "vm", type: "CollectionFolder", name: "Movies", isFolder: true),
            CatalogItem(id: "vt", type: "CollectionFolder", name: "Shows", isFolder: true),
        ],
        items: [
            playable("m1", "Movie", "B movie", parent: "vm", created: "2024-01-02", year: 1999, genres: ["Drama"]),
            playable(
                "m2", "Movie", "a movie", parent: "vm", created: "2024-01-03", year: 2001, genres: ["Comedy", "Drama"]),
            playable("m3", "Movie", "C movie", parent: "vm", created: "2024-01-01", year: 2001),
            CatalogItem(id: "s1", type: "Series", name: "Show", parentId: "vt", isFolder: true),
            CatalogItem(id: "se1", type: "Season", name: "Season 1", parentId: "s1", seriesId: "s1", isFolder: true),
            playable("e2", "Episode", "Two", parent: "se1", created: "2024-02-02", index: 2, season: 1, series: "s1"),
            playable("e1", "Episode", "One", parent: "se1", created: "2024-02-01", index: 1, season: 1, series: "s1"),
            playable("e3", "Episode", "Three", parent: "se1", created: "2024-02-03", index: 3, season: 1, series: "s1"),
        ])

    /// e1 played, e2 half-way, m3 a favorite.
    static func state(_ item: CatalogItem) -> UserState {
        switch item.id {
        case "m3": return UserState(isFavorite: true)
        case "e1": return UserState(played: true, playCount: 1)
        case "e2": return UserState(positionTicks: 500)
        default: return UserState()
        }
    }

    @Test(arguments: [
        ("", ["vm", "vt"], 2),
        ("ParentId=vm", ["m2", "m1", "m3"], 3),
        ("parentId=vm&sortBy=DateCreated&sortOrder=Descending", ["m2", "m1", "m3"], 3),
        ("ParentId=vm&SortBy=DateCreated", ["m3", "m1", "m2"], 3),
        ("ParentId=vm&StartIndex=1&Limit=1", ["m1"], 3),
        ("ParentId=vt", ["s1"], 1),
        ("ParentId=vt&Recursive=true&IncludeItemTypes=Episode&SortBy=IndexNumber", ["e1", "e2", "e3"], 3),
        ("Recursive=true&IncludeItemTypes=Movie,Series", ["m2", "m1", "m3", "s1"], 4),
        ("Recursive=true&includeItemTypes=Movie&includeItemTypes=Series", ["m2", "m1", "m3", "s1"], 4),
        ("Recursive=true&SearchTerm=MOVIE", ["m2", "m1", "m3"], 3),
        ("Ids=e3,m1", ["e3", "m1"], 2),
        ("ids=e3&ids=m1&SortBy=SortName", ["m1", "e3"], 2),
        ("ParentId=se1&Filters=IsPlayed", ["e1"], 1),
        ("ParentId=se1&Filters=IsUnplayed&SortBy=IndexNumber", ["e2", "e3"], 2),
        ("ParentId=se1&Filters=IsResumable", ["e2"], 1),
        ("ParentId=se1&IsPlayed=false&SortBy=IndexNumber&SortOrder=Descending", ["e3", "e2"], 2),
        ("ParentId=vm&SortBy=PremiereDate,SortName&SortOrder=Descending,Ascending", ["m2", "m1", "m3"], 3),
        ("ParentId=vm&StartIndex=5", [], 3),
        ("Recursive=true&IsFavorite=true", ["m3"], 1),
        ("ParentId=vm&IsFavorite=false", ["m2", "m1"], 2),
        ("ParentId=vm&Filters=IsFavorite", ["m3"], 1),
        ("Recursive=true&MediaTypes=Video&IncludeItemTypes=Movie,Series", ["m2", "m1", "m3"], 3),
        ("Recursive=true&MediaTypes=Audio", [], 0),
        ("ParentId=vm&ExcludeItemIds=m2,m3", ["m1"], 1),
        ("Recursive=true&NameStartsWith=b", ["m1"], 1),
        ("ParentId=vm&NameStartsWithOrGreater=B", ["m1", "m3"], 2),
        ("ParentId=vm&NameLessThan=c", ["m2", "m1"], 2),
        ("Recursive=true&Years=2001", ["m2", "m3"], 2),
        ("Recursive=true&Years=1999,2001&SortBy=PremiereDate", ["m3", "m1", "m2"], 3),
        ("Recursive=true&Genres=drama", ["m2", "m1"], 2),
        ("Recursive=true&Genres=Western|Comedy", ["m2"], 1),
    ])
    func selects(query: String, ids: [String], total: Int) throws {
        let result = try ItemQuery(RequestQuery(query)).select(Self.catalog, state: Self.state)
        #expect(result.items.map(\.id) == ids)
        #expect(result.total == total)
        // The same through the listing memo, on a catalog of its own: once to fill it, once from it.
        let catalog = Catalog(views: Self.catalog.views, items: Array(Self.catalog.items.values))
        for _ in 0..<2 {
            let paged = try ItemQuery(RequestQuery(query)).selectPage(catalog, state: Self.state)
            #expect(paged.items.map(\.id) == ids)
            #expect(paged.total == total)
        }
    }

    /// Pages of one query come from one selection kept for the catalog; a query that reads played state is worked
    /// out again each time, so a mark made between two pages shows at once.
    @Test func pagesShareOneSelectionUnlessTheyReadPlayedState() throws {
        let catalog = Catalog(views: Self.catalog.views, items: Array(Self.catalog.items.values))
        let pages = try ["StartIndex=0&Limit=2", "StartIndex=2&Limit=2"].map { paging in
            try ItemQuery(RequestQuery("Recursive=true&IncludeItemTypes=Movie,Series&\(paging)"))
                .selectPage(catalog, state: Self.state)
        }
        #expect(pages.flatMap { $0.items.map(\.id) } == ["m2", "m1", "m3", "s1"])
        #expect(pages.map(\.total) == [4, 4])
        let unplayed = ItemQuery(RequestQuery("ParentId=se1&Filters=IsUnplayed&SortBy=IndexNumber"))
        #expect(try unplayed.selectPage(catalog, state: Self.state).items.map(\.id) == ["e2", "e3"])
        let afterAMark = try unplayed.selectPage(catalog) { item in
            item.id == "e2" ? UserState(played: true, playCount: 1) : Self.state(item)
        }
        #expect(afterAMark.items.map(\.id) == ["e3"])
    }

    @Test func aRandomOrderHoldsEveryItemOnce() throws {
        let result = try ItemQuery(RequestQuery("ParentId=se1&SortBy=Random")).select(Self.catalog, state: Self.state)
        #expect(result.items.map(\.id).sorted() == ["e1", "e2", "e3"])
        #expect(result.total == 3)
    }

    @Test func anUnknownParentIsRefused() {
        #expect(throws: ItemQuery.Refusal.unknownParent) {
            try ItemQuery(RequestQuery("ParentId=nope")).select(Self.catalog, state: Self.state)
        }
    }

    @Test func fieldsAreReadWithoutCase() {
        #expect(ItemQuery(RequestQuery("fields=MediaSources,Path")).fields == ["mediasources", "path"])
    }
}
