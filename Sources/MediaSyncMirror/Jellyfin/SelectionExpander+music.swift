import MediaSyncCore
import MediaSyncServer

/// Music, playlists and collections: what album, artist, playlist and collection selections (and the music,
/// playlists and box sets libraries) expand to.
extension SelectionExpander {
    /// What a whole-library listing asks for: every kind of item a mirror keeps, so a library of any kind (movies,
    /// shows, music, music videos, home videos, box sets, playlists, or a mixed one) lists in one paged listing.
    static let libraryItemTypes = [
        "Movie", "Series", "Season", "Episode", "MusicVideo", "Video", "MusicAlbum", "Audio", "BoxSet", "Playlist",
        "AudioBook", "Book",
    ]

    /// Items kept like movies: one folder each, their versions, their images.
    static let movieLike: Set<String> = ["Movie", "MusicVideo", "Video"]

    /// Selections whose members live in folders of their own (not below the selected item): when one cannot be
    /// listed, nothing held is taken for deselected (``MirrorItems/keepsUnlisted``).
    static let listKinds: Set<Selection.Kind> = [.album, .artist, .playlist, .collection, .audiobook]

    /// Items with files of their own (the others are folders of them).
    static let hasMedia: Set<String> = ["Movie", "Episode", "MusicVideo", "Video", "Audio", "AudioBook"]

    /// The order an album's tracks are asked in and kept in: disc, then track, then the server's sort name (which
    /// for a track is `disc - track - name`, `Audio.SortName`, v10.10.7).
    static let trackListingOrder = ["ParentIndexNumber", "IndexNumber", "SortName"]

    /// Tracks in disc and track order; tracks without numbers after the numbered ones of their disc, by name.
    static func trackOrder(_ first: BaseItem, _ second: BaseItem) -> Bool {
        let a = (first.parentIndexNumber ?? 0, first.indexNumber ?? Int.max, first.name ?? "", first.id)
        let b = (second.parentIndexNumber ?? 0, second.indexNumber ?? Int.max, second.name ?? "", second.id)
        return a < b
    }

    /// What some selection's members expanded to.
    struct Members {
        var movies: [MovieEntry] = []
        var series: [SeriesEntry] = []
        var albums: [AlbumEntry] = []
        var lists: [ListEntry] = []

        mutating func formUnion(_ other: Members) {
            movies += other.movies
            series += other.series
            albums += other.albums
            lists += other.lists
        }
    }

    /// An album, artist, playlist or collection selection.
    func music(_ selection: Selection, listed: inout Set<String>, result: inout MirrorItems) async throws -> Members {
        let item = try await server.item(id: selection.id)
        listed.insert(item.id)
        let name = item.name ?? item.id
        switch selection.kind {
        case .album:
            let tracks = try await albumTracks(item.id)
            listed.formUnion(tracks.map(\.id))
            if tracks.isEmpty { result.rejected.append("album \(name) has no tracks on the server; nothing to fetch") }
            return try await members(
                of: tracks, selection: selection, context: "album \(name)", albums: [item.id: item], listed: &listed,
                result: &result)
        case .artist:
            // The artist's own albums (album artist), not those it only appears on (`ArtistIds` would match those
            // too: `SqliteItemRepository` v10.10.7 L3562–3592). Matched by the artist's name on the server.
            var query = ItemsQuery(
                recursive: true, includeItemTypes: ["MusicAlbum"], fields: SelectionExpander.fields,
                sortBy: ["ProductionYear", "SortName"], limit: pageSize)
            query.albumArtistIds = [item.id]
            let albums = try await server.items(query)
            listed.formUnion(albums.map(\.id))
            // Tracks missing from one of its albums are still within this selection (not deselected).
            result.selectedTops.formUnion(albums.map(\.id))
            if albums.isEmpty {
                result.rejected.append(
                    "artist \(name) has no albums of its own on the server (as album artist); nothing to fetch")
            }
            return try await members(
                of: albums, selection: selection, context: "artist \(name)", listed: &listed, result: &result)
        case .playlist, .collection:
            return try await listMembers(item, selection: selection, listed: &listed, result: &result)
        case .movie, .series, .season, .library, .audiobook, .book:
            return Members()
        }
    }

    /// A playlist's or a collection's entries, in its order, and what they expand to.
    func listMembers(_ list: BaseItem, selection: Selection, listed: inout Set<String>, result: inout MirrorItems)
        async throws -> Members
    {
        let name = list.name ?? list.id
        let isPlaylist = list.type == "Playlist"
        let what = isPlaylist ? "playlist \(name)" : "collection \(name)"
        guard SafeName.id(list.id) != nil else {
            result.rejected.append("\(what): its id cannot be a folder name; skipped")
            return Members()
        }
        let entries: [BaseItem]
        if isPlaylist {
            entries = try await server.playlistEntries(playlistId: list.id).map(overlaid)
            await reportHidden(entries, playlist: list, what: what, result: &result)
        } else {
            // A box set's linked children, in its display order (`BoxSet.GetChildren`, v10.10.7 L115–134).
            entries = try await server.items(
                ItemsQuery(parentId: list.id, fields: SelectionExpander.fields, limit: pageSize)
            ).map(overlaid)
        }
        listed.formUnion(entries.map(\.id))
        var members = try await members(
            of: entries, selection: selection, context: what, listed: &listed, result: &result)
        members.lists.append(ListEntry(item: list, entries: entries))
        return members
    }

    /// Says in one line how many of a playlist's entries this user may not see. From 10.10 the server leaves them out
    /// of the entries without a word (`PlaylistsController.GetPlaylistItems` v10.10.7 L519) while
    /// `GET /Playlists/{id}` still lists their ids. Asked only of a server whose entries carry their item's id as
    /// `PlaylistItemId` (10.10 and later): older ones have no such route.
    func reportHidden(_ entries: [BaseItem], playlist: BaseItem, what: String, result: inout MirrorItems) async {
        guard !entries.isEmpty,
            entries.allSatisfy({ entry in
                entry.playlistItemId.map(JellyfinID.comparable) == JellyfinID.comparable(entry.id)
            })
        else { return }
        // Only a count for the report: a failure to ask fails nothing.
        guard let all = try? await server.playlistItemIds(playlistId: playlist.id) else { return }
        let visible = Set(entries.map { JellyfinID.comparable($0.id) })
        let hidden = all.filter { !visible.contains(JellyfinID.comparable($0)) }
        guard !hidden.isEmpty else { return }
        // Still entries of the playlist: their files held here are within the selection, never taken for deselected.
        result.selectedTops.formUnion(hidden.map(JellyfinID.comparable))
        result.rejected.append(
            "\(what): \(hidden.count) of its \(all.count) entries are not visible to this user (the server lists "
                + "them but does not show them); kept without them")
    }

    /// A whole library's music, playlists and collections (its movies and series are expanded by the caller).
    func libraryMembers(
        _ children: [BaseItem], selection: Selection, listed: inout Set<String>, result: inout MirrorItems
    ) async throws -> Members {
        let albums = Dictionary(
            children.filter { $0.type == "MusicAlbum" }.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let tracks = children.filter { $0.type == "Audio" }
        var found = Members()
        if !tracks.isEmpty {
            found = try await members(
                of: tracks, selection: selection, context: "library \(selection.name ?? selection.id)", albums: albums,
                listed: &listed, result: &result)
        }
        for list in children where list.type == "Playlist" || list.type == "BoxSet" {
            found.formUnion(try await listMembers(list, selection: selection, listed: &listed, result: &result))
        }
        return found
    }

    /// The tracks of an album in disc and track order, whatever folders (discs) they are in.
    func albumTracks(_ albumId: String) async throws -> [BaseItem] {
        try await server.items(
            ItemsQuery(
                parentId: albumId, recursive: true, includeItemTypes: ["Audio"], fields: SelectionExpander.fields,
                sortBy: SelectionExpander.trackListingOrder, limit: pageSize)
        ).map(overlaid).sorted(by: SelectionExpander.trackOrder)
    }

    /// What a list of items expands to: tracks into their albums' folders, movies, music videos and home videos as
    /// movies, episodes into their series, whole series and albums with everything of them, audiobooks into their
    /// books and books as their files. Other kinds (photos, nested playlists) are said in one line each and left out.
    /// - Parameter albums: album items already at hand, by id (the others the tracks name are asked for by id).
    func members(
        of items: [BaseItem], selection: Selection, context: String, albums known: [String: BaseItem] = [:],
        listed: inout Set<String>, result: inout MirrorItems
    ) async throws -> Members {
        var members = Members()
        var albums = known
        var tracksByFolder: [String: [BaseItem]] = [:]
        var folders: [String] = []
        var episodesBySeries: [String: [BaseItem]] = [:]
        var seriesOrder: [String] = []
        var seen = Set<String>()
        var leftOut: [String: Int] = [:]
        var audiobooks: [BaseItem] = []
        func addTrack(_ track: BaseItem) {
            guard SafeName.id(track.id) != nil else {
                result.rejected.append("track \(track.id.debugDescription): its id cannot be a file name; skipped")
                return
            }
            let folder = track.albumId.flatMap { SafeName.id($0) } ?? track.id
            if tracksByFolder[folder] == nil { folders.append(folder) }
            tracksByFolder[folder, default: []].append(track)
        }
        for item in items where !item.isVirtual && seen.insert(item.id).inserted {
            let type = item.type ?? ""
            switch type {
            case "Audio":
                addTrack(item)
            case _ where SelectionExpander.movieLike.contains(type):
                if let entry = try await movie(item, allVersions: selection.allVersions, rejected: &result.rejected) {
                    members.movies.append(entry)
                }
            case "Episode":
                guard let seriesId = item.seriesId else {
                    leftOut["episode without a series", default: 0] += 1
                    continue
                }
                if episodesBySeries[seriesId] == nil { seriesOrder.append(seriesId) }
                episodesBySeries[seriesId, default: []].append(item)
            case "Series":
                if let entry = try await seriesEntry(
                    item, selection: selection, seasonId: nil, listedIds: &listed, result: &result)
                {
                    members.series.append(entry)
                }
            case "MusicAlbum":
                albums[item.id] = item
                let tracks = try await albumTracks(item.id)
                listed.formUnion(tracks.map(\.id))
                for track in tracks { addTrack(track) }
            case "AudioBook":
                audiobooks.append(item)
            case "Book":
                if let entry = await bookEntry(item, rejected: &result.rejected) { members.movies.append(entry) }
            default:
                leftOut[type.isEmpty ? "item of no type" : type, default: 0] += 1
            }
        }
        // The albums the tracks name and nothing brought yet, asked for by id: their folder's metadata.json holds them.
        let missing = folders.filter { albums[$0] == nil && tracksByFolder[$0]?.first?.albumId != nil }
        for album in try await itemsById(missing) { albums[album.id] = album }
        for folder in folders {
            var entries: [TrackEntry] = []
            for track in (tracksByFolder[folder] ?? []).sorted(by: SelectionExpander.trackOrder) {
                let versions = try await versions(of: track, all: selection.allVersions, rejected: &result.rejected)
                if !versions.isEmpty { entries.append(TrackEntry(item: track, versions: versions)) }
            }
            guard !entries.isEmpty else { continue }
            members.albums.append(AlbumEntry(folderId: folder, album: albums[folder], tracks: entries))
        }
        for seriesId in seriesOrder {
            let series = try await server.item(id: seriesId)
            let seasons = try await server.seasons(seriesId: seriesId)
            if let entry = try await seriesEntry(
                series, selection: selection, seasonId: nil,
                listed: Listed(seasons: seasons, episodes: episodesBySeries[seriesId] ?? []), listedIds: &listed,
                result: &result)
            {
                members.series.append(entry)
            }
        }
        if !audiobooks.isEmpty {
            members.formUnion(
                try await audiobookMembers(
                    audiobooks, folders: [:], selection: selection, context: context, result: &result))
        }
        for (type, count) in leftOut.sorted(by: { $0.key < $1.key }) {
            result.rejected.append(
                "\(context): \(count) \(type) \(count == 1 ? "entry is" : "entries are") not kept (a mirror keeps "
                    + "video, music and books); skipped")
        }
        return members
    }
}
