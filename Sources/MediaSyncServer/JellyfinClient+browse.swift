extension JellyfinClient {
    /// The fields asked for on seasons.
    static let seasonFields = ["Etag", "Path", "DateCreated", "ParentId", "ProviderIds"]
    /// The fields asked for on episodes: versions, change signals and paths, chapters and trickplay.
    static let episodeFields = [
        "MediaSources", "Etag", "Path", "DateCreated", "ParentId", "ProviderIds", "CanDownload", "Chapters",
        "Trickplay",
    ]

    /// The user's library views (`GET /UserViews?userId=`): movies, shows, music…
    /// - Throws: ``JellyfinError``.
    ///
    /// Jellyfin 10.8 has only `GET /Users/{userId}/Views` (`UserViewsController`, v10.8.13 L69): a 404 or 405 from
    /// `/UserViews` falls back to it.
    public func userViews() async throws -> [BaseItem] {
        let userId = try requireUserId()
        let call = Call(path: "/UserViews", query: [("userId", userId)], action: "list the libraries")
        do {
            return try await fetch(QueryResult<BaseItem>.self, call).items
        } catch let error as JellyfinError where error.status == 404 || error.status == 405 {
            let segment = try JellyfinID.pathSegment(userId, role: "user id")
            let old = Call(path: "/Users/\(segment)/Views", action: "list the libraries")
            return try await fetch(QueryResult<BaseItem>.self, old).items
        }
    }

    /// Every item matching the query (`GET /Items?userId=…`), fetched page by page.
    ///
    /// `userId` is always sent (Jellyfin 10.8 answers 400 without it for a user token). Paging stops at an
    /// empty or short page, or at a page that brings nothing new, so a server that lies about its total can
    /// neither make it loop nor cut it short (`TotalRecordCount` only decides how many pages are asked at once);
    /// items the server repeats are kept once (by `Id`).
    /// - Throws: ``JellyfinError``; ``JellyfinError/Kind/invalidResponse`` when a listing runs past
    ///   ``maxPages`` pages.
    public func items(_ query: ItemsQuery) async throws -> [BaseItem] {
        let userId = try requireUserId()
        return try await allPages(
            path: "/Items", parameters: [("userId", userId)] + query.parameters, pageSize: query.limit,
            action: "list the items", resource: nil)
    }

    /// One item by id, with the media fields (via `GET /Items?ids=`).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/notFound`` when the server does not list it,
    ///   ``JellyfinError/Kind/invalidID`` for an unusable id.
    public func item(id: String, fields: [String] = ItemsQuery.mediaFields) async throws -> BaseItem {
        try JellyfinID.validate(id, role: "item id")
        let found = try await items(ItemsQuery(ids: [id], fields: fields, limit: ItemsQuery.defaultPageSize))
        guard let item = found.first(where: { $0.id.lowercased() == id.lowercased() }) else {
            throw JellyfinError(.notFound, "not found: the server has no item \(id) (or this user may not see it)")
        }
        return item
    }

    /// Ids asked about in one `/Items?ids=` request (33 bytes each in the URL).
    public static let idsPerRequest = 100

    /// Which of these items the server still has, asked by id (`GET /Items?ids=…&userId=…`, batched), with no
    /// heavy fields. With `parentId`, only those below that folder or library (`recursive=true`): Jellyfin applies
    /// the parent as a filter next to the ids (`ItemsController.GetItems`). Unusable ids are never sent.
    /// - Throws: ``JellyfinError``.
    public func existingItems(ids: [String], below parentId: String?) async throws -> [BaseItem] {
        let usable = ids.filter { (try? JellyfinID.validate($0, role: "item id")) != nil }
        var found: [BaseItem] = []
        var start = 0
        while start < usable.count {
            let batch = Array(usable[start..<min(usable.count, start + JellyfinClient.idsPerRequest)])
            start += batch.count
            found += try await items(
                ItemsQuery(
                    parentId: parentId, recursive: parentId == nil ? nil : true, ids: batch, fields: ["ParentId"],
                    limit: JellyfinClient.idsPerRequest))
        }
        return found
    }

    /// The seasons of a series (`GET /Shows/{id}/Seasons?userId=&fields=`), without virtual ones.
    /// - Throws: ``JellyfinError``.
    public func seasons(seriesId: String) async throws -> [BaseItem] {
        let userId = try requireUserId()
        let segment = try JellyfinID.pathSegment(seriesId, role: "series id")
        let call = Call(
            path: "/Shows/\(segment)/Seasons",
            query: [("userId", userId), ("fields", JellyfinClient.seasonFields.joined(separator: ","))],
            action: "list the seasons", resource: "series \(seriesId)")
        return try await fetch(QueryResult<BaseItem>.self, call).items.filter { !$0.isVirtual }
    }

    /// The episodes of a series, or of one season of it
    /// (`GET /Shows/{id}/Episodes?userId=&seasonId=&isMissing=false&fields=MediaSources,Etag,Path,DateCreated,…`).
    ///
    /// Missing (virtual) episodes are never returned: the server is asked to leave them out, and any item with
    /// `LocationType` `Virtual` is dropped here too.
    /// - Throws: ``JellyfinError``.
    public func episodes(seriesId: String, seasonId: String? = nil) async throws -> [BaseItem] {
        let userId = try requireUserId()
        let segment = try JellyfinID.pathSegment(seriesId, role: "series id")
        var parameters: [(name: String, value: String)] = [("userId", userId)]
        if let seasonId {
            parameters.append(("seasonId", try JellyfinID.validate(seasonId, role: "season id")))
        }
        parameters.append(("isMissing", "false"))
        parameters.append(("fields", JellyfinClient.episodeFields.joined(separator: ",")))
        let episodes = try await allPages(
            path: "/Shows/\(segment)/Episodes", parameters: parameters, pageSize: ItemsQuery.defaultPageSize,
            action: "list the episodes", resource: "series \(seriesId)")
        return episodes.filter { !$0.isVirtual }
    }

    /// The versions of an item with their streams, external subtitles included
    /// (`GET /Items/{id}/PlaybackInfo?userId=`).
    /// - Throws: ``JellyfinError`` (``JellyfinError/Kind/forbidden`` when the server says `NotAllowed`).
    public func playbackInfo(itemId: String) async throws -> [MediaSource] {
        let userId = try requireUserId()
        let segment = try JellyfinID.pathSegment(itemId, role: "item id")
        let call = Call(
            path: "/Items/\(segment)/PlaybackInfo", query: [("userId", userId)], action: "read the versions of an item",
            resource: "item \(itemId)")
        let info = try await fetch(PlaybackInfoResponse.self, call)
        if let code = info.errorCode {
            if code == "NotAllowed" {
                throw JellyfinError(.forbidden, "this user may not play item \(itemId) (PlaybackInfo: NotAllowed)")
            }
            throw JellyfinError(.requestRejected, "the server refused the versions of item \(itemId) (\(code))")
        }
        return info.mediaSources
    }

    /// Pages asked for at once once the server has said how long a listing is: the server builds the next
    /// pages while this side reads the last ones.
    public static let pageWindow = 4

    /// Fetches every page of a listing that takes `startIndex` and `limit`.
    ///
    /// The first page is asked alone; when its `TotalRecordCount` says more are to come, up to ``pageWindow``
    /// pages are asked for together and read in order, with the same stopping rules as one by one.
    ///
    /// Pages are independent queries: a library scan between two of them shifts the later ones, so an item can
    /// be skipped. A listing whose distinct items fall short of the last `TotalRecordCount` is listed once more and
    /// the two are merged (what is still missing then is caught by the confirmation by id before any deletion).
    func allPages(
        path: String, parameters: [(name: String, value: String)], pageSize requested: Int, action: String,
        resource: String?
    ) async throws -> [BaseItem] {
        let first = try await onePass(
            path: path, parameters: parameters, pageSize: requested, action: action, resource: resource)
        guard let total = first.total, first.items.count < total else { return first.items }
        let second = try await onePass(
            path: path, parameters: parameters, pageSize: first.pageSize, action: action, resource: resource)
        var seen = Set(first.items.map { Array($0.id.utf8) })
        return first.items + second.items.filter { seen.insert(Array($0.id.utf8)).inserted }
    }

    private func onePass(
        path: String, parameters: [(name: String, value: String)], pageSize requested: Int, action: String,
        resource: String?
    ) async throws -> (items: [BaseItem], total: Int?, pageSize: Int) {
        var total: Int?
        var pageSize = max(1, min(requested, 10_000))
        var items: [BaseItem] = []
        // By the ids' bytes: Swift's String equality would take two ids that differ only by Unicode normalisation
        // (NFC and NFD) for one, and drop the second without a word.
        var seen = Set<[UInt8]>()
        var start = 0
        var pages = 0
        var moreAnnounced = false
        func call(_ from: Int, _ size: Int) -> Call {
            var call = Call(
                path: path, query: parameters + [("startIndex", String(from)), ("limit", String(size))],
                action: action, resource: resource)
            call.listingPage = true
            return call
        }
        while pages < JellyfinClient.maxPages {
            let window = moreAnnounced ? min(JellyfinClient.pageWindow, JellyfinClient.maxPages - pages) : 1
            let size = pageSize
            let starts = (0..<window).map { start + $0 * size }
            let fetched: [QueryResult<BaseItem>]
            do {
                if window == 1 {
                    fetched = [try await fetch(QueryResult<BaseItem>.self, call(start, size))]
                } else {
                    fetched = try await withThrowingTaskGroup(of: (Int, QueryResult<BaseItem>).self) { group in
                        for (position, from) in starts.enumerated() {
                            group.addTask {
                                (position, try await self.fetch(QueryResult<BaseItem>.self, call(from, size)))
                            }
                        }
                        var ordered: [(Int, QueryResult<BaseItem>)] = []
                        for try await result in group { ordered.append(result) }
                        return ordered.sorted { $0.0 < $1.0 }.map(\.1)
                    }
                }
            } catch let error as JellyfinError where error.isStall {
                // A page the server did not answer within the listing's stall limit: asked again smaller, from the
                // same place, and the rest of the listing keeps the smaller size (see ``ListingPatience``).
                guard let smaller = patience.smaller(than: size) else {
                    throw JellyfinError(
                        .transport,
                        "\(error.message); pages of \(size) items did not come within \(patience.stallSeconds) s either",
                        retryable: true, isStall: true)
                }
                pageSize = smaller
                moreAnnounced = false
                continue
            }
            for page in fetched {
                pages += 1
                total = page.totalRecordCount ?? total
                var fresh = 0
                for item in page.items where seen.insert(Array(item.id.utf8)).inserted {
                    items.append(item)
                    fresh += 1
                }
                start += page.items.count
                // A short page ends the listing whatever TotalRecordCount claims; a page of repeats means the
                // server ignores startIndex. A full page never ends it, even at the claimed total: a total below
                // the real count would otherwise hide items that are still there (and `sync --delete` would
                // delete their files). That costs one empty page when the length is a multiple of the page size.
                if page.items.count < pageSize || fresh == 0 {
                    return (items, total, pageSize)
                }
                moreAnnounced = page.totalRecordCount.map { $0 > start + pageSize } ?? false
            }
        }
        throw JellyfinError.invalidResponse(
            "the listing at \(JellyfinClient.template(path)) did not end after \(JellyfinClient.maxPages) pages; "
                + "the server's paging looks broken")
    }
}
