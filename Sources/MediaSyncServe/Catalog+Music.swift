import Foundation
import MediaSyncJSON

/// The ids of the views `serve` adds for music and the other kinds the mirror learned: stable, made of the server
/// id. (The podcasts keep the `music` view id they had before music was served.)
struct MusicViews: Sendable {
    let music: String
    let musicVideos: String
    let homeVideos: String
    let playlists: String
    let boxSets: String

    init(serverId: String) {
        music = Catalog.viewId(serverId: serverId, collectionType: "music-library")
        musicVideos = Catalog.viewId(serverId: serverId, collectionType: "musicvideos")
        homeVideos = Catalog.viewId(serverId: serverId, collectionType: "homevideos")
        playlists = Catalog.viewId(serverId: serverId, collectionType: "playlists")
        boxSets = Catalog.viewId(serverId: serverId, collectionType: "boxsets")
    }
}

/// Albums, tracks, artists, playlists and box sets as ``Catalog/build(root:index:serverId:documents:)`` reads them
/// from the mirror's `metadata.json` files (`docs/layout.md`, "Music, playlists and collections").
struct MusicCatalog {
    let views: MusicViews
    let images: [String: [String: HeldFile]]
    let lyrics: [String: HeldFile]
    private var albums: [CatalogItem] = []
    private var tracks: [CatalogItem] = []
    private var lists: [(raw: JSONObject, id: String, entries: [String])] = []

    init(views: MusicViews, images: [String: [String: HeldFile]], lyrics: [String: HeldFile]) {
        self.views = views
        self.images = images
        self.lyrics = lyrics
    }

    /// One album's folder: the album item (nil for a loose track's folder, or an album the sync could not read) and
    /// its tracks as received. Only the tracks with a media file held are kept; an album none of whose tracks is
    /// held is not listed.
    mutating func addAlbum(
        folderId: String, album: JSONObject?, tracks values: [JSONValue],
        versions: (JSONObject, String) -> [HeldVersion]
    ) {
        let first = values.first?.objectValue
        var albumRaw = album.flatMap { $0["Id"]?.stringValue == nil ? nil : $0 }
        if albumRaw == nil, let first, let albumId = first["AlbumId"]?.stringValue,
            ServeIds.plain(albumId) == ServeIds.plain(folderId)
        {
            // The album item is missing, but the tracks name it: an album made of what they say of it.
            albumRaw = Self.album(from: first, id: albumId)
        }
        let albumId = albumRaw?["Id"]?.stringValue
        var held: [CatalogItem] = []
        for value in values {
            guard var raw = value.objectValue, let id = raw["Id"]?.stringValue else { continue }
            let versions = versions(raw, id)
            guard !versions.isEmpty else { continue }
            // `HasLyrics` is on every `Audio` DTO from 10.9 (`DtoService` v10.10.7 L268–271): true when the lyrics
            // are held here.
            raw["HasLyrics"] = .bool(lyrics[id] != nil)
            if albumId.flatMap({ images[$0]?["Primary"] }) == nil { raw["AlbumPrimaryImageTag"] = nil }
            strip(&raw)
            let name = raw["Name"]?.stringValue ?? id
            let disc = raw["ParentIndexNumber"]?.intValue.map { Int($0) }
            let number = raw["IndexNumber"]?.intValue.map { Int($0) }
            held.append(
                CatalogItem(
                    id: id, type: raw["Type"]?.stringValue ?? "Audio", name: name,
                    sortName: raw["SortName"]?.stringValue ?? Self.trackSortName(name, disc: disc, number: number),
                    parentId: albumId ?? views.music, viewId: views.music, indexNumber: number,
                    parentIndexNumber: disc, dateCreated: raw["DateCreated"]?.stringValue,
                    premiereDate: raw["PremiereDate"]?.stringValue, runTimeTicks: raw["RunTimeTicks"]?.intValue,
                    raw: raw, versions: versions, images: images[id] ?? [:], lyrics: lyrics[id]))
        }
        guard !held.isEmpty else { return }
        tracks += held
        guard var raw = albumRaw, let albumId else { return }
        // The album's length is its held tracks' (as `ChildCount` is their number).
        let total = held.compactMap(\.runTimeTicks).reduce(0, +)
        if total > 0 {
            raw["RunTimeTicks"] = JellyfinDTO.number(total)
            if raw["CumulativeRunTimeTicks"] != nil { raw["CumulativeRunTimeTicks"] = JellyfinDTO.number(total) }
        }
        strip(&raw)
        albums.append(
            CatalogItem(
                id: albumId, type: "MusicAlbum", name: raw["Name"]?.stringValue ?? albumId,
                sortName: raw["SortName"]?.stringValue, parentId: views.music, viewId: views.music,
                dateCreated: raw["DateCreated"]?.stringValue ?? held.compactMap(\.dateCreated).max(),
                premiereDate: raw["PremiereDate"]?.stringValue, runTimeTicks: total > 0 ? total : nil,
                isFolder: true, raw: raw, images: images[albumId] ?? [:]))
    }

    /// A playlist or box set and its entries' item ids, in its order (resolved by ``lists(among:)``).
    mutating func addList(_ raw: JSONObject, id: String, entries: [String]) {
        lists.append((raw, id, entries))
    }

    /// The albums, their tracks and the artists named in them (album artists and track artists, with the ids the
    /// server gave, as `ArtistItems` and `AlbumArtists` carry them).
    func finished() -> [CatalogItem] {
        var artists: [CatalogItem] = []
        var seen = Set<String>()
        for item in albums + tracks {
            for key in ["AlbumArtists", "ArtistItems"] {
                for pair in item.upstream(key)?.arrayValue ?? [] {
                    guard let id = pair["Id"]?.stringValue, let name = pair["Name"]?.stringValue, !name.isEmpty,
                        seen.insert(ServeIds.plain(id)).inserted
                    else { continue }
                    artists.append(
                        CatalogItem(id: id, type: "MusicArtist", name: name, viewId: views.music, isFolder: true))
                }
            }
        }
        return albums + tracks + artists
    }

    /// The playlists and box sets with at least one entry among `held`, and each one's entries (the held items'
    /// ids, in the list's order, repeats kept; entries not held are left out, as Jellyfin leaves out linked
    /// children that are gone or hidden).
    func lists(among held: [CatalogItem]) -> (items: [CatalogItem], entries: [String: [String]]) {
        var byId: [String: String] = [:]
        for item in held { byId[ServeIds.plain(item.id)] = item.id }
        var items: [CatalogItem] = []
        var entries: [String: [String]] = [:]
        for list in lists {
            let resolved = list.entries.compactMap { byId[ServeIds.plain($0)] }
            guard !resolved.isEmpty else { continue }
            let isPlaylist = list.raw["Type"]?.stringValue == "Playlist"
            let view = isPlaylist ? views.playlists : views.boxSets
            var item = Catalog.catalogItem(
                list.raw, id: list.id, parent: view, view: view, versions: [], images: images)
            item.isFolder = true
            items.append(item)
            entries[list.id] = resolved
        }
        return (items, entries)
    }

    /// A track's sort name when the server sent none: disc and number as `0000 - `, then the name
    /// (`Audio.CreateSortName`, v10.10.7).
    static func trackSortName(_ name: String, disc: Int?, number: Int?) -> String {
        func four(_ value: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + " - "
        }
        return (disc.map(four) ?? "") + (number.map(four) ?? "") + name
    }

    /// An album item made of what one of its tracks says of it.
    static func album(from track: JSONObject, id: String) -> JSONObject {
        var raw = JSONObject()
        raw["Name"] = track["Album"] ?? .string(id)
        raw["Id"] = .string(id)
        for key in ["PremiereDate", "ProductionYear", "Genres", "GenreItems"] where track[key] != nil {
            raw[key] = track[key]
        }
        raw["IsFolder"] = .bool(true)
        raw["Type"] = .string("MusicAlbum")
        let albumArtists = track["AlbumArtists"]?.arrayValue ?? []
        raw["Artists"] = .array(albumArtists.compactMap { $0["Name"] })
        raw["ArtistItems"] = .array(albumArtists)
        if let first = track["AlbumArtist"] { raw["AlbumArtist"] = first }
        raw["AlbumArtists"] = .array(albumArtists)
        raw["MediaType"] = .string("Unknown")
        return raw
    }

    /// The references to images of other items (an artist's backdrop and logo, mostly) that the mirror does not hold
    /// are taken out, so a client does not ask for them: `Parent…ItemId` and its tag, `AlbumPrimaryImageTag` kept only
    /// with the album's cover held.
    func strip(_ raw: inout JSONObject) {
        let references = [
            ("ParentBackdropItemId", "ParentBackdropImageTags", "Backdrop"),
            ("ParentLogoItemId", "ParentLogoImageTag", "Logo"), ("ParentThumbItemId", "ParentThumbImageTag", "Thumb"),
            ("ParentArtItemId", "ParentArtImageTag", "Art"),
            ("ParentPrimaryImageItemId", "ParentPrimaryImageTag", "Primary"),
        ]
        for (idKey, tagKey, type) in references where raw[idKey] != nil || raw[tagKey] != nil {
            let owner = raw[idKey]?.stringValue
            let held = owner.flatMap { images[$0] ?? images[ServeIds.plain($0)] }?[type]
            if held == nil {
                raw[idKey] = nil
                raw[tagKey] = nil
            }
        }
    }

    /// The codec and highest bit rate of a track held as the server's transcode: its index entry's validator is
    /// `transcode:aq:<codec>/<bits per second>` (`SyncDownloads.record`, `AudioQuality.signature`). Nil for any other
    /// file.
    static func transcode(validator: String?) -> (codec: String, bitrate: Int64?)? {
        guard let validator, validator.hasPrefix("transcode:aq:") else { return nil }
        let rest = validator.dropFirst("transcode:aq:".count)
        let parts = rest.split(separator: "/", maxSplits: 1)
        guard let codec = parts.first, !codec.isEmpty else { return nil }
        return (String(codec).lowercased(), parts.count > 1 ? Int64(parts[1]) : nil)
    }
}

extension CatalogItem {
    /// A playlist or a box set: its children are its entries, in its order.
    public var isList: Bool { type == "Playlist" || type == "BoxSet" }

    /// The album artists' names, lowercased (`AlbumArtists`, else `AlbumArtist`): Jellyfin's item values of type 1.
    public var albumArtistNames: [String] {
        let pairs = (upstream("AlbumArtists")?.arrayValue ?? []).compactMap { $0["Name"]?.stringValue?.lowercased() }
        if !pairs.isEmpty { return pairs }
        return upstream("AlbumArtist")?.stringValue.map { [$0.lowercased()] } ?? []
    }

    /// The track (or album) artists' names, lowercased (`Artists`, else `ArtistItems`): item values of type 0.
    public var trackArtistNames: [String] {
        let names = (upstream("Artists")?.arrayValue ?? []).compactMap { $0.stringValue?.lowercased() }
        if !names.isEmpty { return names }
        return (upstream("ArtistItems")?.arrayValue ?? []).compactMap { $0["Name"]?.stringValue?.lowercased() }
    }
}
