import Foundation
import MediaSyncCore
import MediaSyncServer

/// Expands selections into the items, seasons, episodes and versions to mirror.
public struct SelectionExpander: Sendable {
    let server: any MediaServer
    /// Items per page of a whole-library listing (``libraryPageSize`` unless a test asks for small pages).
    let pageSize: Int

    /// The latest play event recorded here per item that the server does not have yet: applied over the server's
    /// state before the selections' rules (an episode watched offline makes room for the next in the same sync).
    let pending: [String: PlayEvent]
    /// The time `--delete-played` grace periods are counted to.
    let now: Date
    /// Media sources as last listed, by item `Etag`: with it, library listings are light (see
    /// ``MediaSourceCache``); without it, they carry every item's media sources as before. It may still be being
    /// read from the index: a listing waits for the server most of its time, and the cache is read meanwhile.
    let cache: Task<MediaSourceCache, any Error>?
    /// Asked for what the index lacks rather than what the selections list (whole media sources of items not
    /// cached yet): questions a later sync with the same listing does not ask again (see `ListingMemo`).
    let followUps: any MediaServer
    /// Asked only when an item says `CanDownload: false`, to tell the user's policy from the item's own reasons.
    let permission: DownloadPermission

    public init(
        server: any MediaServer, pageSize: Int = SelectionExpander.libraryPageSize, pending: [String: PlayEvent] = [:],
        now: Date = Date(), cache: MediaSourceCache? = nil
    ) {
        self.init(
            server: server, pageSize: pageSize, pending: pending, now: now,
            loadingCache: cache.map { ready in Task { ready } })
    }

    /// An expander whose media-source cache is still being read (see ``cache``).
    /// - Parameter followUps: where the follow-up questions go (see ``followUps``); `server` when nil.
    public init(
        server: any MediaServer, followUps: (any MediaServer)? = nil,
        pageSize: Int = SelectionExpander.libraryPageSize, pending: [String: PlayEvent] = [:], now: Date = Date(),
        loadingCache cache: Task<MediaSourceCache, any Error>?
    ) {
        self.cache = cache
        self.server = server
        self.followUps = followUps ?? server
        self.permission = DownloadPermission(server: server)
        self.pageSize = max(1, pageSize)
        self.pending = pending
        self.now = now
    }

    /// The fields every listing asks for: media sources for the versions, Etag for change detection, a video's
    /// chapters and trickplay (the server fills them for videos only; 10.8 has no trickplay and ignores the name).
    public static let fields = [
        "MediaSources", "Etag", "Path", "DateCreated", "ParentId", "ProviderIds", "MediaStreams", "CanDownload",
        "Chapters", "Trickplay",
    ]

    /// The fields of a light library listing: everything but media sources and streams (asked by id for the items
    /// that need them).
    public static let lightFields = fields.filter { $0 != "MediaSources" && $0 != "MediaStreams" }

    /// Items per page of a whole-library listing.
    public static let libraryPageSize = 500

    /// The order asked for on listings: as stable as every version allows (see the library listing).
    public static let listingOrder = ["SortName", "DateCreated"]

    /// A series' seasons and episodes, when a library listing already brought them.
    struct Listed {
        var seasons: [BaseItem] = []
        var episodes: [BaseItem] = []
    }

    public func expand(_ selections: [Selection]) async throws -> MirrorItems {
        var result = MirrorItems()
        var movies: [String: MovieEntry] = [:]
        var movieOrder: [String] = []
        var series: [String: SeriesEntry] = [:]
        var seriesOrder: [String] = []
        func addMovie(_ entry: MovieEntry) {
            if let existing = movies[entry.item.id] {
                movies[entry.item.id] = MovieEntry(item: entry.item, versions: union(existing.versions, entry.versions))
            } else {
                movies[entry.item.id] = entry
                movieOrder.append(entry.item.id)
            }
        }
        func addSeries(_ entry: SeriesEntry) {
            if let existing = series[entry.series.id] {
                series[entry.series.id] = SeriesEntry(
                    series: entry.series, seasons: merge(existing.seasons, entry.seasons))
            } else {
                series[entry.series.id] = entry
                seriesOrder.append(entry.series.id)
            }
        }
        var albums: [String: AlbumEntry] = [:]
        var albumOrder: [String] = []
        var lists: [String: ListEntry] = [:]
        var listOrder: [String] = []
        func addAlbum(_ entry: AlbumEntry) {
            if var existing = albums[entry.folderId] {
                let known = Set(existing.tracks.map(\.item.id))
                existing.tracks += entry.tracks.filter { !known.contains($0.item.id) }
                existing.tracks.sort { SelectionExpander.trackOrder($0.item, $1.item) }
                existing.album = existing.album ?? entry.album
                albums[entry.folderId] = existing
            } else {
                albums[entry.folderId] = entry
                albumOrder.append(entry.folderId)
            }
        }
        func addList(_ entry: ListEntry) {
            if lists[entry.item.id] == nil { listOrder.append(entry.item.id) }
            lists[entry.item.id] = entry
        }
        var counter = 0
        // The first selection that names an item decides its rank and, for a movie or an episode, its quality
        // (selections come by priority).
        func rank(_ id: String, group: Int, media: Bool = false) {
            counter += 1
            guard result.ranks[id] == nil else { return }
            result.ranks[id] = BudgetRank(group: group, order: counter)
            if media, let quality = selections[group].quality { result.qualities[id] = quality }
            if media, selections[group].trickplay != .smallest { result.trickplay[id] = selections[group].trickplay }
        }
        // A book is its file as it is: no quality or trickplay applies to it.
        func rank(movie entry: MovieEntry, group: Int) {
            rank(entry.item.id, group: group, media: entry.item.type != "Book")
        }
        func rank(album entry: AlbumEntry, group: Int) {
            if let album = entry.album { rank(album.id, group: group) }
            for track in entry.tracks {
                // The first selection that names a track decides its quality, as for movies and episodes.
                if result.ranks[track.item.id] == nil, let quality = selections[group].audioQuality {
                    result.audioQualities[track.item.id] = quality
                }
                rank(track.item.id, group: group)
            }
        }
        /// What a selection's members expanded to, put with the rest.
        func add(_ members: Members, group: Int) {
            for entry in members.movies {
                addMovie(entry)
                rank(movie: entry, group: group)
            }
            for entry in members.series {
                addSeries(entry)
                rank(series: entry, group: group)
            }
            for entry in members.albums {
                addAlbum(entry)
                rank(album: entry, group: group)
            }
            for entry in members.lists {
                addList(entry)
                rank(entry.item.id, group: group)
            }
        }
        func rank(series entry: SeriesEntry, group: Int) {
            rank(entry.series.id, group: group)
            for season in entry.seasons {
                if let item = season.season { rank(item.id, group: group) }
                for episode in season.episodes { rank(episode.item.id, group: group, media: true) }
            }
        }
        for (group, selection) in selections.enumerated() {
            // Ids listed for this selection count only once all of it was listed: a selection that fails halfway
            // must not make its items look deliberately left out (their files would go without confirmation).
            var listed = Set<String>()
            do {
                switch selection.kind {
                case .movie:
                    result.selectedTops.insert(selection.id)
                    let item = overlaid(try await server.item(id: selection.id))
                    listed.insert(item.id)
                    if wantsPlayed(item, selection: selection, result: &result),
                        let entry = try await movie(
                            item, allVersions: selection.allVersions, rejected: &result.rejected)
                    {
                        addMovie(entry)
                        rank(movie: entry, group: group)
                    }
                case .series:
                    result.selectedTops.insert(selection.id)
                    let item = try await server.item(id: selection.id)
                    listed.insert(item.id)
                    if let entry = try await seriesEntry(
                        item, selection: selection, seasonId: nil, listedIds: &listed, result: &result)
                    {
                        addSeries(entry)
                        rank(series: entry, group: group)
                    }
                case .season:
                    let season = try await server.item(id: selection.id)
                    guard let seriesId = season.seriesId ?? season.parentId else {
                        result.rejected.append("season \(selection.id) names no series; skipped")
                        continue
                    }
                    result.selectedTops.insert(seriesId)
                    listed.insert(season.id)
                    let item = try await server.item(id: seriesId)
                    listed.insert(item.id)
                    if let entry = try await seriesEntry(
                        item, selection: selection, seasonId: season.id, listedIds: &listed, result: &result)
                    {
                        addSeries(entry)
                        rank(series: entry, group: group)
                    }
                case .album, .artist, .playlist, .collection:
                    result.selectedTops.insert(selection.id)
                    let members = try await music(selection, listed: &listed, result: &result)
                    add(members, group: group)
                case .audiobook:
                    result.selectedTops.insert(selection.id)
                    let members = try await audiobook(selection, listed: &listed, result: &result)
                    result.selectedTops.formUnion(members.albums.map(\.folderId))
                    add(members, group: group)
                case .book:
                    result.selectedTops.insert(selection.id)
                    add(try await book(selection, listed: &listed, result: &result), group: group)
                case .library:
                    // One paged listing of everything in the library (movies, series, seasons, episodes): no
                    // request per series, and the full id listing that shows deletions. Sorted explicitly
                    // (`SortName`, then `DateCreated`): without `sortBy` 10.10 sends no ORDER BY at all and 10.11
                    // orders by `SortName` only (`BaseItemRepository.ApplyOrder`, v10.11.11), so pages would be
                    // less stable than the server allows. `Id` is no `ItemSortBy` value (an unknown one is refused).
                    result.libraries.append(selection.id)
                    var children = try await server.items(
                        ItemsQuery(
                            parentId: selection.id, recursive: true,
                            includeItemTypes: SelectionExpander.libraryItemTypes,
                            fields: cache == nil ? SelectionExpander.fields : SelectionExpander.lightFields,
                            sortBy: SelectionExpander.listingOrder, limit: pageSize))
                    if cache != nil { children = try await withMediaSources(children, result: &result) }
                    listed.formUnion(children.map(\.id))
                    var members: [String: Listed] = [:]
                    for child in children.map(overlaid) where !child.isVirtual {
                        if child.type == "Season", let series = child.seriesId ?? child.parentId {
                            members[series, default: Listed()].seasons.append(child)
                        } else if child.type == "Episode", let series = child.seriesId {
                            members[series, default: Listed()].episodes.append(child)
                        }
                    }
                    // Music, playlists and collections of the library (a music, playlists or box sets library, or
                    // a mixed one): expanded as their own selections would be.
                    let others = try await libraryMembers(
                        children.map(overlaid), selection: selection, listed: &listed, result: &result)
                    add(others, group: group)
                    // Audiobooks and books of the library (a books library, or a mixed one).
                    let audiobooks = children.filter { $0.type == "AudioBook" }.map(overlaid)
                    if !audiobooks.isEmpty {
                        add(
                            try await audiobookMembers(
                                audiobooks, folders: [:], selection: selection,
                                context: "library \(selection.name ?? selection.id)", result: &result),
                            group: group)
                    }
                    let books = try await withPeople(
                        children.filter { $0.type == "Book" && !$0.isVirtual }.map(overlaid))
                    for child in books {
                        if let entry = await bookEntry(child, rejected: &result.rejected) {
                            addMovie(entry)
                            rank(movie: entry, group: group)
                        }
                    }
                    for child in children.map(overlaid) {
                        if SelectionExpander.movieLike.contains(child.type ?? "") {
                            if wantsPlayed(child, selection: selection, result: &result),
                                let entry = try await movie(
                                    child, allVersions: selection.allVersions, rejected: &result.rejected)
                            {
                                addMovie(entry)
                                rank(movie: entry, group: group)
                            }
                        } else if child.type == "Series" {
                            if let entry = try await seriesEntry(
                                child, selection: selection, seasonId: nil, listed: members[child.id] ?? Listed(),
                                listedIds: &listed, result: &result)
                            {
                                addSeries(entry)
                                rank(series: entry, group: group)
                            }
                        }
                    }
                }
                result.listed.formUnion(listed)
            } catch let error as JellyfinError where error.kind == .authenticationNeeded {
                // Jellyfin answers 401 both for a token it no longer accepts and for a library the user may no
                // longer access (`ItemsController.GetItems`): only a refused `/Users/Me` means signing in again.
                guard await server.signInIsValid() else { throw error }
                if SelectionExpander.listKinds.contains(selection.kind) { result.keepsUnlisted = true }
                result.failed.append(
                    "\(selection.kind.rawValue) \(selection.name ?? selection.id) is not accessible to this user "
                        + "(\(error.detail ?? "401 Unauthorized")); nothing of it was synced or deleted")
            } catch let error as JellyfinError where error.status == 400 || error.status == 404 {
                // A library or item the server does not know (400 invalid parent id, 404), or an endpoint or a proxy
                // that failed: reported; its files go only once the server confirms their items gone, by id.
                if SelectionExpander.listKinds.contains(selection.kind) { result.keepsUnlisted = true }
                result.failed.append(
                    "\(selection.kind.rawValue) \(selection.name ?? selection.id) could not be listed (\(error.message)); "
                        + "nothing of it was synced, its files are kept")
            } catch let error as JellyfinError where error.kind == .notFound && error.status == nil {
                // Deleted on the server (a listing that succeeded does not hold it): nothing of it is wanted any
                // more (its files go with `sync --delete`). A 404 answer is not that: an endpoint or a proxy in
                // front of the server failed, and the error makes the listing fail (nothing is deleted).
                result.gone.append(
                    "\(selection.kind.rawValue) \(selection.name ?? selection.id) is no longer on the server")
            }
        }
        result.movies = movieOrder.compactMap { movies[$0] }
        result.series = seriesOrder.compactMap { series[$0] }
        result.albums = albumOrder.compactMap { albums[$0] }
        result.lists = listOrder.compactMap { lists[$0] }
        return result
    }

    func movie(_ item: BaseItem, allVersions: Bool, rejected: inout [String]) async throws -> MovieEntry? {
        guard SafeName.id(item.id) != nil else {
            rejected.append("movie \(item.id.debugDescription): its id cannot be a folder name; skipped")
            return nil
        }
        let refusedBefore = rejected.count
        let versions = try await self.versions(of: item, all: allVersions, rejected: &rejected)
        guard !versions.isEmpty else {
            // A movie whose versions were refused was reported with them: one line per refused item.
            if rejected.count == refusedBefore {
                rejected.append("movie \(item.name ?? item.id) has no downloadable version; skipped")
            }
            return nil
        }
        return MovieEntry(item: item, versions: versions)
    }

    /// - Parameter listed: the seasons and episodes when already listed; nil asks the server for them.
    func seriesEntry(
        _ item: BaseItem, selection: Selection, seasonId: String?, listed: Listed? = nil, listedIds: inout Set<String>,
        result: inout MirrorItems
    ) async throws -> SeriesEntry? {
        guard SafeName.id(item.id) != nil else {
            result.rejected.append("series \(item.id.debugDescription): its id cannot be a folder name; skipped")
            return nil
        }
        let seasons: [BaseItem]
        var episodes: [BaseItem]
        if let listed {
            seasons = listed.seasons
            episodes = listed.episodes
        } else {
            seasons = try await server.seasons(seriesId: item.id)
            episodes = try await server.episodes(seriesId: item.id, seasonId: seasonId).filter { !$0.isVirtual }
                .map(overlaid)
            listedIds.formUnion(seasons.map(\.id))
            listedIds.formUnion(episodes.map(\.id))
        }
        func number(of episode: BaseItem) -> Int {
            if let number = episode.parentIndexNumber { return number }
            if let season = seasons.first(where: { $0.id == episode.seasonId }), let number = season.indexNumber {
                return number
            }
            return 0
        }
        if let wanted = selection.season {
            episodes = episodes.filter { number(of: $0) == wanted }
        }
        episodes.sort { (number(of: $0), $0.indexNumber ?? 0) < (number(of: $1), $1.indexNumber ?? 0) }
        let all = episodes
        if all.isEmpty {
            let name = item.name ?? item.id
            result.empty.append(
                "\(name)\(selection.season.map { " season \($0)" } ?? ""): the server lists no episodes")
        }
        if let window = selection.nextUnplayed {
            episodes = SelectionExpander.nextUnplayed(all, count: window)
        }
        if selection.deletePlayedAfter != nil {
            // Every played episode of the selection, not only the window's: those before it go too.
            let wanted = Set(all.filter { wantsPlayed($0, selection: selection, result: &result) }.map(\.id))
            episodes = episodes.filter { wanted.contains($0.id) }
        }
        var bySeason: [Int: [EpisodeEntry]] = [:]
        for episode in episodes {
            guard SafeName.id(episode.id) != nil else {
                result.rejected.append("episode \(episode.id.debugDescription): its id cannot be a file name; skipped")
                continue
            }
            let versions = try await self.versions(
                of: episode, all: selection.allVersions, rejected: &result.rejected)
            guard !versions.isEmpty else { continue }
            bySeason[number(of: episode), default: []].append(EpisodeEntry(item: episode, versions: versions))
        }
        let seasonEntries = bySeason.keys.sorted().map { key in
            let seasonItem =
                seasons.first { $0.indexNumber == key && SafeName.id($0.id) != nil }
                ?? bySeason[key]?.first.flatMap { entry in seasons.first { $0.id == entry.item.seasonId } }
            return SeasonEntry(number: key, season: seasonItem, episodes: bySeason[key] ?? [])
        }
        return SeriesEntry(series: item, seasons: seasonEntries)
    }

    /// A light listing's movies and episodes with their media sources: from the cache when the item's `Etag` is
    /// the one cached, else asked for by id (and noted in ``MirrorItems/mediaSourceUpdates``).
    func withMediaSources(_ children: [BaseItem], result: inout MirrorItems) async throws -> [BaseItem] {
        let entries = try await cache?.value.entries ?? [:]
        var completed = children
        var needed: [Int] = []
        for (position, child) in children.enumerated()
        where SelectionExpander.hasMedia.contains(child.type ?? "") && !child.isVirtual {
            if let etag = child.etag, let entry = entries[child.id], entry.etag == etag,
                case .object(var fields) = child.raw, case .object(let cached) = entry.fields
            {
                fields.merge(cached)
                completed[position] = BaseItem(unchecked: .object(fields), id: child.id)
                result.abridgedSources.insert(child.id)
            } else {
                needed.append(position)
            }
        }
        guard !needed.isEmpty else { return completed }
        let full = try await followUps.fullItems(ids: needed.map { children[$0].id })
        let byId = Dictionary(full.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for position in needed {
            guard let item = byId[children[position].id] else { continue }
            completed[position] = item
            if let etag = item.etag, case .object(let fields) = item.raw,
                let cached = MediaSourceCache.fields(of: fields)
            {
                result.mediaSourceUpdates[item.id] = MediaSourceCache.Entry(etag: etag, fields: cached)
            }
        }
        return completed
    }

    /// The item with the play state recorded here and not yet on the server applied over its `UserData`, so the
    /// selections' rules and the `metadata.json` written see what the user did offline.
    func overlaid(_ item: BaseItem) -> BaseItem {
        guard let event = pending[item.id], case .object(var fields) = item.raw else { return item }
        let state = PlayStatePlanner.applying(event, to: ServerPlayState(item.userData))
        var userData = item.raw["UserData"]?.objectValue ?? [:]
        userData["Played"] = .bool(state.played)
        userData["PlaybackPositionTicks"] = .number(Double(state.positionTicks))
        userData["LastPlayedDate"] = state.lastPlayed.map { .string(WholeSecondTime.string($0)) } ?? .null
        fields["UserData"] = .object(userData)
        return BaseItem(unchecked: .object(fields), id: item.id)
    }

    /// Whether a movie or an episode is still wanted under its selection's `--delete-played`: a played one is not,
    /// and is noted as released (its files go) or kept (grace period; played state not yet on the server).
    func wantsPlayed(_ item: BaseItem, selection: Selection, result: inout MirrorItems) -> Bool {
        guard let grace = selection.deletePlayedAfter else { return true }
        let server = pending[item.id] == nil ? ServerPlayState(item.userData) : nil
        switch PlayStatePlanner.release(server: server, pending: pending[item.id], grace: grace, now: now) {
        case .wanted: return true
        case .kept:
            result.keptPlayed.insert(item.id)
            return false
        case .released:
            result.released.insert(item.id)
            return false
        }
    }

    /// The next `count` unplayed episodes after the last played one (from the start when none was played).
    static func nextUnplayed(_ episodes: [BaseItem], count: Int) -> [BaseItem] {
        let lastPlayed = episodes.lastIndex { $0.userData?.played == true }
        let start = lastPlayed.map { $0 + 1 } ?? 0
        return Array(episodes[start...].filter { $0.userData?.played != true }.prefix(max(0, count)))
    }

    func versions(of item: BaseItem, all: Bool, rejected: inout [String]) async throws -> [MediaSource] {
        let name = item.name ?? item.id
        if item.canDownload == false {
            let refusal = DownloadRefusal.reason(for: item, userMayDownload: await permission.userMayDownload())
            // The user's policy is not the item's: the item stays wanted (its held files are kept, even with
            // `--delete`), and the sync says once, up front, that nothing can be downloaded.
            if let line = refusal.line(name: name) {
                rejected.append(line)
                return []
            }
        }
        var sources = item.mediaSources ?? []
        if sources.isEmpty {
            sources = try await server.playbackInfo(itemId: item.id)
        }
        var seen = Set<String>()
        var kept: [MediaSource] = []
        for source in sources {
            let versionId = LibraryLayout.versionId(itemId: item.id, mediaSourceId: source.id)
            guard SafeName.id(versionId) != nil else {
                rejected.append(
                    "a version of \(item.name ?? item.id) has an unusable id \(versionId.debugDescription); skipped")
                continue
            }
            guard seen.insert(versionId).inserted else { continue }
            if source.protocol == "Http" || source.isRemote == true {
                // A `.strm` or remote source: the server's Download would answer the `.strm` text, never the movie.
                rejected.append(
                    "a version of \(name) is a remote stream (Protocol \(source.protocol ?? "?"), a .strm file): it has "
                        + "no file to download; skipped")
                continue
            }
            kept.append(source)
            if !all { break }
        }
        return kept
    }

    private func union(_ first: [MediaSource], _ second: [MediaSource]) -> [MediaSource] {
        var ids = Set(first.map { $0.id ?? "" })
        return first + second.filter { ids.insert($0.id ?? "").inserted }
    }

    private func merge(_ first: [SeasonEntry], _ second: [SeasonEntry]) -> [SeasonEntry] {
        var byNumber: [Int: SeasonEntry] = [:]
        for season in first + second {
            if var existing = byNumber[season.number] {
                let known = Set(existing.episodes.map(\.item.id))
                existing.episodes += season.episodes.filter { !known.contains($0.item.id) }
                existing.season = existing.season ?? season.season
                byNumber[season.number] = existing
            } else {
                byNumber[season.number] = season
            }
        }
        return byNumber.keys.sorted().compactMap { byNumber[$0] }
    }
}

extension SelectionExpander {
    /// These items from the server, asked by id one batch of ``JellyfinClient/idsPerRequest`` after another (in the
    /// listing's order, so the answers a listing records come in the same order each run).
    func itemsById(_ ids: [String], fields: [String] = SelectionExpander.fields) async throws -> [BaseItem] {
        var found: [BaseItem] = []
        var start = 0
        while start < ids.count {
            let batch = Array(ids[start..<min(ids.count, start + JellyfinClient.idsPerRequest)])
            start += batch.count
            found += try await server.items(ItemsQuery(ids: batch, fields: fields, limit: JellyfinClient.idsPerRequest))
        }
        return found
    }
}
