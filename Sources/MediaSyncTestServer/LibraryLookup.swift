import Foundation

/// Indexes over a library snapshot, built once per snapshot on first use: item by id, children by parent,
/// unplayed descendants per folder. Without them a listing of N items costs N scans of the library (the
/// 10,000-item benchmark library spent most of a no-op sync in the server).
final class LibraryLookup: @unchecked Sendable {
    struct Tables {
        /// Position in `items` (views are looked up separately).
        var position: [String: Int] = [:]
        /// Positions of the listed (not alternate-version) children, in library order.
        var children: [String: [Int]] = [:]
        /// Unplayed non-folder descendants per folder id.
        var unplayed: [String: Int] = [:]
        /// Positions of the items naming each series (its seasons and episodes), in library order.
        var bySeries: [String: [Int]] = [:]
        /// The `MusicArtist` for each clean name (``TestLibrary/cleanName(_:)``): a folder artist before a by-name one
        /// (`CreateItemByName` orders by `IsAccessedByName`, LibraryManager L960–999, v10.8.13), else the first.
        var artistByName: [String: Int] = [:]
    }

    /// One `/Items` query's filtered and ordered candidates, made for its first page and read by every later page
    /// of the same query (every page of a 100,000-item listing filtered and sorted the whole library again, so the
    /// server's cost per page grew with the library rather than with the page).
    struct Listing {
        /// Positions in the views, then the items (`views.count` and up), in the order answered.
        var candidates: [Int]
        /// Where each run of candidates equal in every sort key begins (ascending); empty when unsorted. A run's
        /// order is decided per request where the profile leaves ties in any order.
        var tieRuns: [Int]
    }

    private let lock = NSLock()
    private var tables: Tables?
    /// Descendant positions per folder, filled as listings ask (every page of a listing asks again).
    private var descendants: [String: [Int]] = [:]
    /// Listings by their query without paging (see ``Listing``).
    private var listings: [String: Listing] = [:]

    /// The listing made for `key`, made by `make` the first time it is asked for.
    func listing(_ key: String, make: () -> Listing) -> Listing {
        if let known = lock.withLock({ listings[key] }) { return known }
        let made = make()
        lock.withLock { listings[key] = made }
        return made
    }

    func descendantPositions(of id: String, in library: TestLibrary) -> [Int] {
        if let known = lock.withLock({ descendants[id] }) { return known }
        let tables = tables(for: library)
        var positions: [Int] = []
        var frontier = [id]
        var seen: Set<String> = [id]
        while let next = frontier.popLast() {
            for position in tables.children[next] ?? [] {
                positions.append(position)
                let child = library.items[position].id
                if seen.insert(child).inserted { frontier.append(child) }
            }
        }
        positions.sort()
        lock.withLock { descendants[id] = positions }
        return positions
    }

    func tables(for library: TestLibrary) -> Tables {
        lock.lock()
        defer { lock.unlock() }
        if let tables { return tables }
        var built = Tables()
        for (position, item) in library.items.enumerated() {
            if built.position[item.id] == nil { built.position[item.id] = position }
            if let parent = item.parentId, !item.isAlternateVersion {
                built.children[parent, default: []].append(position)
            }
            if let series = item.seriesId { built.bySeries[series, default: []].append(position) }
            if item.type == "MusicArtist" {
                let key = TestLibrary.cleanName(item.name)
                if let known = built.artistByName[key] {
                    if library.items[known].parentId == nil, item.parentId != nil { built.artistByName[key] = position }
                } else {
                    built.artistByName[key] = position
                }
            }
        }
        for item in library.items where !item.isFolder && !item.played && !item.isAlternateVersion {
            var parent = item.parentId
            var seen = Set<String>()
            while let id = parent, seen.insert(id).inserted {
                built.unplayed[id, default: 0] += 1
                parent = built.position[id].map { library.items[$0].parentId } ?? nil
            }
        }
        tables = built
        return built
    }
}

extension LibraryLookup: Equatable {
    /// Caches never make two libraries different.
    static func == (lhs: LibraryLookup, rhs: LibraryLookup) -> Bool { true }
}

extension TestLibrary {
    /// Listed descendants of `id` in library order (the children of the children, …).
    func descendants(of id: String) -> [TestItem] {
        lookup.descendantPositions(of: id, in: self).map { items[$0] }
    }

    /// The positions in ``items`` of ``descendants(of:)``.
    func descendantPositions(of id: String) -> [Int] {
        lookup.descendantPositions(of: id, in: self)
    }

    /// The positions in ``items`` of ``children(of:)``.
    func childPositions(of id: String) -> [Int] {
        lookup.tables(for: self).children[id] ?? []
    }

    /// Listed direct children of `id` in library order.
    func children(of id: String) -> [TestItem] {
        (lookup.tables(for: self).children[id] ?? []).map { items[$0] }
    }

    /// The items (seasons, episodes) whose `seriesId` is `id`, in library order.
    func members(ofSeries id: String) -> [TestItem] {
        (lookup.tables(for: self).bySeries[id] ?? []).map { items[$0] }
    }

    /// Unplayed, listed, non-folder descendants of a folder.
    func unplayedCount(of id: String) -> Int {
        lookup.tables(for: self).unplayed[id] ?? 0
    }

    /// The `MusicArtist` named `name` (any case and accents), if there is one.
    func artist(named name: String) -> TestItem? {
        lookup.tables(for: self).artistByName[TestLibrary.cleanName(name)].map { items[$0] }
    }

    /// A name as Jellyfin compares artists: its `CleanName`, lower case without diacritics (`GetCleanValue`,
    /// SqliteItemRepository, v10.8.13).
    static func cleanName(_ name: String) -> String {
        name.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: Locale(identifier: "en_US_POSIX"))
            .lowercased()
    }

    /// The items a playlist or box set links to, in stored order; entries whose item is gone are skipped
    /// (`Folder.GetLinkedChildrenInfos`, v10.8.13 L1558–1563). Each comes with its entry.
    func linkedEntries(of container: TestItem) -> [(entry: TestLinkedChild, item: TestItem)] {
        let tables = lookup.tables(for: self)
        return container.linkedChildren.compactMap { entry in
            tables.position[entry.itemId].map { (entry, items[$0]) }
        }
    }

    /// The distinct items a playlist or box set links to that the user may see, first occurrence first: `GetChildren`
    /// collects them in a dictionary by id and filters linked children per user (`Folder.AddChildren`, v10.10.7;
    /// `FilterLinkedChildrenPerUser`, Playlist.cs L63, BoxSet.cs L27, v10.8.13).
    func visibleLinkedItems(of container: TestItem) -> [TestItem] {
        var seen = Set<String>()
        return linkedEntries(of: container).map(\.item).filter { !isInaccessible($0) && seen.insert($0.id).inserted }
    }

    /// Whether the item lies below a library the user may no longer access.
    func isInaccessible(_ item: TestItem) -> Bool {
        guard !inaccessibleViews.isEmpty else { return false }
        var parent = item.parentId
        var seen = Set<String>()
        while let id = parent, seen.insert(id).inserted {
            if inaccessibleViews.contains(id) { return true }
            parent = lookup.tables(for: self).position[id].map { items[$0].parentId } ?? nil
        }
        return false
    }
}
