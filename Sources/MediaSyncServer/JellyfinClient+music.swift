import MediaSyncJSON

extension JellyfinClient {
    /// Entries of a playlist asked per page.
    public static let playlistPageSize = 500

    /// A playlist's entries in the playlist's order (`GET /Playlists/{id}/Items?userId=&startIndex=&limit=&fields=`),
    /// a track listed twice included.
    ///
    /// Unlike ``items(_:)``, entries are not kept once by `Id`: an item may stand at two positions. `userId` is always
    /// sent (10.8 answers 400 without it, `PlaylistsController.GetPlaylistItems` v10.8.13 L169). From 10.10 the
    /// server leaves out, silently and uncounted, the entries this user may not see (L519, v10.10.7).
    /// - Throws: ``JellyfinError``; ``JellyfinError/Kind/invalidResponse`` when the pages do not end.
    public func playlistEntries(playlistId: String, fields: [String]) async throws -> [BaseItem] {
        let userId = try requireUserId()
        let segment = try JellyfinID.pathSegment(playlistId, role: "playlist id")
        var entries: [BaseItem] = []
        var start = 0
        for _ in 0..<JellyfinClient.maxPages {
            var call = Call(
                path: "/Playlists/\(segment)/Items",
                query: [
                    ("userId", userId), ("fields", fields.joined(separator: ",")), ("startIndex", String(start)),
                    ("limit", String(JellyfinClient.playlistPageSize)),
                ],
                action: "list the playlist's entries", resource: "playlist \(playlistId)")
            call.listingPage = true
            let page = try await fetch(QueryResult<BaseItem>.self, call)
            entries += page.items
            start += page.items.count
            // A short page ends it, whatever the total says; so does reaching a total the server gave.
            if page.items.count < JellyfinClient.playlistPageSize { return entries }
            if let total = page.totalRecordCount, start >= total { return entries }
        }
        throw JellyfinError.invalidResponse(
            "the entries of playlist \(playlistId) did not end after \(JellyfinClient.maxPages) pages; the server's "
                + "paging looks broken")
    }

    /// The ids of every entry of a playlist, including those this user may not see (`GET /Playlists/{id}`,
    /// `ItemIds`; 10.10 and later, `PlaylistsController.GetPlaylist` v10.10.7 L162–182). Nil when the server has no
    /// such route (10.8 and 10.9 answer 404 or 405).
    /// - Throws: ``JellyfinError`` for other failures.
    public func playlistItemIds(playlistId: String) async throws -> [String]? {
        let segment = try JellyfinID.pathSegment(playlistId, role: "playlist id")
        let call = Call(path: "/Playlists/\(segment)", action: "read the playlist", resource: nil)
        do {
            let response = try await send(call)
            guard let parsed = try? JSONValue(parsing: response.body), let ids = parsed["ItemIds"]?.arrayValue else {
                return nil
            }
            return ids.compactMap(\.stringValue)
        } catch let error as JellyfinError where error.status == 404 || error.status == 405 {
            return nil
        }
    }

    /// The artists that are an album's album artist (`GET /Artists/AlbumArtists?userId=&searchTerm=`,
    /// `ArtistsController` v10.10.7 L289): by-name artists too, which `/Items` does not list (they have no parent).
    /// - Throws: ``JellyfinError``.
    public func albumArtists(search: String?, parentId: String?) async throws -> [BaseItem] {
        var parameters: [(name: String, value: String)] = [("userId", try requireUserId())]
        if let search, !search.isEmpty { parameters.append(("searchTerm", search)) }
        if let parentId { parameters.append(("parentId", parentId)) }
        return try await allPages(
            path: "/Artists/AlbumArtists", parameters: parameters, pageSize: ItemsQuery.defaultPageSize,
            action: "list the artists", resource: nil)
    }

    /// The URL of a track transcoded by the server (`<server>/Audio/{id}/universal?…`, `UniversalAudioController`).
    ///
    /// No `Container` is sent: no file plays as it is, so the answer is always a transcode to `container`, whose
    /// extension the file is kept under (a track that already fits is fetched as the original instead). `AudioCodec`
    /// and `TranscodingContainer` agree (ffmpeg picks its muxer from the container); `TranscodingProtocol=http` asks
    /// for one progressive file, never an HLS playlist; `AudioBitRate` and `MaxStreamingBitrate` the cap (the
    /// controller passes `AudioBitRate ?? MaxStreamingBitrate` to the encoder, v10.10.7 L258). The token is not in it.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id, or not signed in.
    public func universalAudioURL(
        itemId: String, mediaSourceId: String, codec: String, container: String, maxBitrate: Int
    ) throws -> String {
        let segment = try JellyfinID.pathSegment(itemId, role: "item id")
        return url(
            "/Audio/\(segment)/universal",
            query: [
                ("UserId", try requireUserId()), ("DeviceId", identity.deviceId),
                ("MediaSourceId", try JellyfinID.validate(mediaSourceId, role: "media source id")),
                ("AudioCodec", codec), ("TranscodingContainer", container), ("TranscodingProtocol", "http"),
                ("MaxStreamingBitrate", String(maxBitrate)), ("AudioBitRate", String(maxBitrate)),
            ])
    }

    /// The URL of a track's lyrics (`<server>/Audio/{id}/Lyrics`, 10.9 and later): a `LyricDto`.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id.
    public func lyricsURL(itemId: String) throws -> String {
        url("/Audio/\(try JellyfinID.pathSegment(itemId, role: "item id"))/Lyrics")
    }
}
