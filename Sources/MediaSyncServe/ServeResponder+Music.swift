import Foundation
import Hummingbird
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncMirror

/// The music routes: artists, playlists and lyrics (the albums and tracks are items, answered by `/Items`).
extension ServeResponder {
    /// `ArtistsController.GetArtists` and `GetAlbumArtists` (v10.10.7): the artists (`MusicArtist`) named by the
    /// music under `ParentId` (a folder: everything in it; another item: that item itself), as
    /// `LibraryManager.GetArtists` / `GetAlbumArtists` read them from the items' artist values (track artists and
    /// album artists, or album artists only). `IncludeItemTypes`, `ExcludeItemTypes` and `ParentId` choose those items;
    /// `SearchTerm`, the name filters, `Filters`, `IsFavorite`, the sort and the page apply to the artists. With
    /// `IncludeItemTypes`, each artist carries its counts (`ChildCount`, `AlbumCount`, `SongCount`), as Jellyfin sets
    /// them only then.
    func artists(_ call: Call, albumArtistsOnly: Bool) throws -> Response {
        let catalog = state.catalog()
        let query = ItemQuery(call.query)
        var pool: [CatalogItem]
        if let parentId = query.parentId {
            guard let parent = catalog.item(parentId) else {
                throw ServeFailure(.badRequest, "no item with that ParentId")
            }
            pool = parent.isFolder ? catalog.members(of: parent, recursive: true) : [parent]
        } else {
            pool = Array(catalog.items.values)
        }
        pool = pool.filter { item in
            let type = item.type.lowercased()
            return (item.type == "MusicAlbum" || item.type == "Audio")
                && (query.includeTypes.isEmpty || query.includeTypes.contains(type))
                && !query.excludeTypes.contains(type)
        }
        func credited(_ item: CatalogItem) -> Set<String> {
            Set(item.albumArtistNames + (albumArtistsOnly ? [] : item.trackArtistNames))
        }
        let names = pool.reduce(into: Set<String>()) { $0.formUnion(credited($1)) }
        // Several ids for one name (an artist renamed between syncs): each stands, as the server gave them.
        let candidates = catalog.items.values.filter {
            $0.type == "MusicArtist" && names.contains($0.name.lowercased())
        }
        var outer = query
        outer.parentId = nil
        outer.includeTypes = []
        outer.excludeTypes = []
        outer.mediaTypes = []
        outer.genres = []
        outer.years = []
        outer.ids = []
        let selected = outer.page(candidates, catalog: catalog) { userState($0, catalog) }
        let counted = !query.includeTypes.isEmpty
        let items = selected.items.map { artist -> JSONValue in
            var dto = itemDTO(artist, catalog, withMediaSources: false)
            guard counted, case .object(var members) = dto else { return dto }
            let name = artist.name.lowercased()
            let own = pool.filter { credited($0).contains(name) }
            members["ChildCount"] = JellyfinDTO.number(own.count)
            members["AlbumCount"] = JellyfinDTO.number(own.filter { $0.type == "MusicAlbum" }.count)
            members["SongCount"] = JellyfinDTO.number(own.filter { $0.type == "Audio" }.count)
            dto = .object(members)
            return dto
        }
        return Self.json(Self.queryResult(items, total: selected.total, start: query.startIndex))
    }

    /// `PlaylistsController.GetPlaylist` (v10.10.7 L162–182): a `PlaylistDto`. The mirror's playlists are the one
    /// user's own copies: not open to others, shared with no one; `ItemIds` its held entries, in order.
    func playlist(_ id: String) throws -> Response {
        let catalog = state.catalog()
        let list = try lookup(id, catalog)
        guard list.type == "Playlist" else { throw ServeFailure(.notFound, "Playlist not found") }
        let ids = (catalog.children[list.id] ?? []).map { JSONValue.string($0) }
        return Self.json(
            JellyfinDTO.object([("OpenAccess", .bool(false)), ("Shares", .array([])), ("ItemIds", .array(ids))]))
    }

    /// `PlaylistsController.GetPlaylistItems` (v10.10.7 L487–546): the held entries in the playlist's order (an item
    /// listed twice stands twice), `StartIndex` skipped and `Limit` taken; each entry's `PlaylistItemId` is its item's
    /// id, as 10.10 and later answer (10.8–10.9 made one anew on each load; see `docs/layout.md`).
    func playlistItems(_ id: String, _ call: Call) throws -> Response {
        let catalog = state.catalog()
        let list = try lookup(id, catalog)
        guard list.type == "Playlist" else { throw ServeFailure(.notFound, "Playlist not found") }
        let entries = (catalog.children[list.id] ?? []).compactMap { catalog.items[$0] }
        let start = min(max(0, call.query.int("StartIndex") ?? 0), entries.count)
        let end = call.query.int("Limit").map { min(entries.count, start + max(0, $0)) } ?? entries.count
        let fields = ItemQuery(call.query).fields
        let items = entries[start..<end].map { entry in
            Self.withPlaylistItemId(
                itemDTO(entry, catalog, withMediaSources: fields.contains("mediasources"), fields: fields), entry.id)
        }
        return Self.json(Self.queryResult(items, total: entries.count, start: start))
    }

    /// `PlaylistItemId` placed where `BaseItemDto` has it: after `Id` and `Etag`.
    static func withPlaylistItemId(_ dto: JSONValue, _ id: String) -> JSONValue {
        guard case .object(let object) = dto else { return dto }
        var members: [JSONMember] = []
        var placed = false
        let before: Set<String> = ["Name", "OriginalTitle", "ServerId", "Id", "Etag", "SourceType"]
        for member in object.members {
            if !placed && !before.contains(member.key) {
                members.append(JSONMember("PlaylistItemId", .string(id)))
                placed = true
            }
            members.append(member)
        }
        if !placed { members.append(JSONMember("PlaylistItemId", .string(id))) }
        return .object(JSONObject(members))
    }

    /// `LyricsController.GetLyrics` (v10.10.7 L63–80): a track's lyrics as a `LyricDto`, read from the LRC file held
    /// beside it; 404 for a track without one, or an item that is not a track.
    func lyrics(_ id: String) throws -> Response {
        let item = try lookup(id, state.catalog())
        guard item.type == "Audio", let held = item.lyrics, held.size <= Self.largestLyrics,
            let bytes = FileBytes.read(held.path)
        else { throw ServeFailure(.notFound, "no lyrics") }
        return Self.json(LyricsAnswer.lyricDto(fromLRC: String(decoding: bytes, as: UTF8.self)))
    }

    /// The largest lyrics file read for a client (a song's LRC is a few KB).
    static let largestLyrics: Int64 = 1 << 20
}
