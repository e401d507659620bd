import Foundation
import MediaSyncCore

/// Music, playlists and box sets, added on request (``TestLibrary/addMusic(_:)``) so a library without them keeps its
/// two views and ids.
///
/// Layout, as Jellyfin's resolvers make it (`MusicArtistResolver`, `MusicAlbumResolver`, `PlaylistsFolder`,
/// `CollectionManager.EnsureLibraryFolder`, v10.8.13–v10.11.11): a `music` CollectionFolder holding folder artists
/// (`MusicArtist`, folders), their albums (`MusicAlbum`) and the albums' tracks (`Audio`, flat: a multi-disc album's
/// discs are told apart by `ParentIndexNumber` only); a `ManualPlaylistsFolder` (`CollectionType` `playlists`) holding
/// one audio `Playlist`; a `boxsets` CollectionFolder named "Collections" holding one `BoxSet`. Playlists and box sets
/// hold *linked* children, in their stored order.
extension TestLibrary {
    /// What ``TestLibrary/addMusic(_:)`` generates.
    public struct MusicSpec: Sendable, Equatable {
        /// Folder artists with albums (the artist without albums and the guest are extra).
        public var artists: Int
        public var albumsPerArtist: Int
        public var discsPerAlbum: Int
        public var tracksPerDisc: Int
        /// Base file size of a track; each gets a small per-track extra.
        public var mediaSize: Int
        /// Base track length in seconds; each track adds up to 59 s.
        public var trackSeconds: Int
        /// The special cases: the first album split over two discs whose track numbers repeat (when it has one disc
        /// of at least two tracks), a guest artist on one track, an artist without albums, lyrics on two tracks,
        /// a playlist and a box set. They add no tracks: the library has
        /// `artists × albumsPerArtist × discsPerAlbum × tracksPerDisc` tracks either way.
        public var extras: Bool

        public init(
            artists: Int = 2, albumsPerArtist: Int = 2, discsPerAlbum: Int = 1, tracksPerDisc: Int = 6,
            mediaSize: Int = 64 * 1024, trackSeconds: Int = 180, extras: Bool = true
        ) {
            self.artists = artists
            self.albumsPerArtist = albumsPerArtist
            self.discsPerAlbum = discsPerAlbum
            self.tracksPerDisc = tracksPerDisc
            self.mediaSize = mediaSize
            self.trackSeconds = trackSeconds
            self.extras = extras
        }

        /// Tracks the spec generates.
        public var trackCount: Int {
            max(0, artists) * max(0, albumsPerArtist) * max(0, discsPerAlbum) * max(0, tracksPerDisc)
        }
    }

    /// The ids of the special cases ``TestLibrary/addMusic(_:)`` made (nil when the spec could not hold one).
    public struct MusicIds: Sendable, Equatable {
        public var musicViewId: String
        public var playlistsViewId: String
        public var boxSetsViewId: String
        /// The album whose tracks are on two discs, numbered 1, 2, 3… on each.
        public var twoDiscAlbumId: String?
        /// A by-name artist (no parent, not a folder) who is a track artist on one track only.
        public var guestArtistId: String?
        /// The album with the guest's track; its album artist is someone else.
        public var guestAlbumId: String?
        public var guestTrackId: String?
        /// A folder artist with no albums.
        public var artistWithoutAlbumsId: String?
        /// A track with timed (LRC) lyrics, and one with plain (TXT) lyrics.
        public var timedLyricsTrackId: String?
        public var plainLyricsTrackId: String?
        /// The audio playlist: tracks of two albums, one of them listed twice.
        public var playlistId: String?
        /// The box set: the first movie, the first series and the first album (those that exist).
        public var boxSetId: String?
    }

    /// Id of the `music` CollectionFolder ("" without music).
    public var musicViewId: String { views.first(where: { $0.collectionType == "music" })?.id ?? "" }
    /// Id of the playlists folder ("" without music).
    public var playlistsViewId: String { views.first(where: { $0.collectionType == "playlists" })?.id ?? "" }
    /// Id of the "Collections" (`boxsets`) CollectionFolder ("" without music).
    public var boxSetsViewId: String { views.first(where: { $0.collectionType == "boxsets" })?.id ?? "" }

    /// Every `MusicArtist` (folder artists, then by-name ones), in library order.
    public var musicArtists: [TestItem] { items.filter { $0.type == "MusicArtist" } }
    /// Every `MusicAlbum`, in library order.
    public var albums: [TestItem] { items.filter { $0.type == "MusicAlbum" } }
    /// Every `Audio` track, in library order.
    public var tracks: [TestItem] { items.filter { $0.type == "Audio" } }
    /// Every `Playlist`.
    public var playlists: [TestItem] { items.filter { $0.type == "Playlist" } }
    /// Every `BoxSet`.
    public var boxSets: [TestItem] { items.filter { $0.type == "BoxSet" } }

    /// An album's tracks in disc and track order.
    public func tracks(ofAlbum albumId: String) -> [TestItem] {
        children(of: albumId.lowercased()).filter { $0.type == "Audio" }.sorted {
            ($0.parentIndexNumber ?? 0, $0.indexNumber ?? 0, $0.name) < (
                $1.parentIndexNumber ?? 0, $1.indexNumber ?? 0, $1.name
            )
        }
    }

    /// Adds music, the playlists folder and the Collections library (see ``MusicSpec``); deterministic from the seed.
    /// A library that already has music is left as it is.
    public mutating func addMusic(_ spec: MusicSpec = MusicSpec()) {
        guard musicViewId.isEmpty else { return }
        let seed = self.seed
        func id(_ label: String) -> String { SplitMix64.hexID(seed: seed, label: label) }
        let baseDate = 1_690_000_000.0 + 10_000_000
        let musicView = id("view-music")
        let playlistsView = id("view-playlists")
        let boxSetsView = id("view-boxsets")
        views += [
            TestItem(
                id: musicView, name: "Music", type: "CollectionFolder", path: "/config/root/default/Music",
                collectionType: "music", imageTags: ["Primary": id("img-\(musicView)")],
                dateCreated: Date(timeIntervalSince1970: baseDate), etag: id("etag-\(musicView)"), isFolder: true),
            // `PlaylistsFolder` at `<data>/playlists`, client type `ManualPlaylistsFolder` (LibraryManager L749–757,
            // PlaylistsFolder L28/L54–57, v10.8.13).
            TestItem(
                id: playlistsView, name: "Playlists", type: "ManualPlaylistsFolder", path: "/config/data/playlists",
                collectionType: "playlists", imageTags: [:], dateCreated: Date(timeIntervalSince1970: baseDate),
                etag: id("etag-\(playlistsView)"), isFolder: true),
            // The "Collections" library made on first use (`CollectionManager.EnsureLibraryFolder` L81–118, v10.8.13).
            TestItem(
                id: boxSetsView, name: "Collections", type: "CollectionFolder",
                path: "/config/root/default/Collections",
                collectionType: "boxsets", imageTags: ["Primary": id("img-\(boxSetsView)")],
                dateCreated: Date(timeIntervalSince1970: baseDate), etag: id("etag-\(boxSetsView)"), isFolder: true),
        ]
        var ids = MusicIds(musicViewId: musicView, playlistsViewId: playlistsView, boxSetsViewId: boxSetsView)
        var added: [TestItem] = []
        var counter = 0
        func nextDate() -> Date {
            counter += 1
            return Date(timeIntervalSince1970: baseDate + Double(counter) * 60)
        }
        let artistCount = max(0, spec.artists)
        let albumCount = max(0, spec.albumsPerArtist)
        // Where the guest sings: the artist's second album, else the next artist's first, else the only album.
        let guestAlbum: (Int, Int)? =
            !spec.extras || artistCount == 0 || albumCount == 0
            ? nil : albumCount > 1 ? (0, 1) : artistCount > 1 ? (1, 0) : (0, 0)
        let guestName = "Guest Star"
        var albumNumber = 0
        for a in 0..<artistCount {
            let artistId = id("music-artist-\(a)")
            let artistName = "Test Artist \(a + 1)"
            added.append(
                TestItem(
                    id: artistId, name: artistName, type: "MusicArtist", parentId: musicView,
                    path: "/media/Music/\(artistName)", imageTags: ["Primary": id("img-\(artistId)")],
                    dateCreated: nextDate(), etag: id("etag-\(artistId)"), isFolder: true))
            for b in 0..<albumCount {
                albumNumber += 1
                var discs = max(0, spec.discsPerAlbum)
                var perDisc = [Int](repeating: max(0, spec.tracksPerDisc), count: discs)
                if spec.extras, a == 0, b == 0, discs == 1, spec.tracksPerDisc >= 2 {
                    // Two discs whose track numbers repeat, same number of tracks in all.
                    discs = 2
                    perDisc = [(spec.tracksPerDisc + 1) / 2, spec.tracksPerDisc / 2]
                }
                let guest = guestAlbum.map { $0 == (a, b) } ?? false
                let album = TestLibrary.makeAlbum(
                    seed: seed, label: "music-album-\(a)-\(b)", artistId: artistId, artistName: artistName,
                    name: "Test Album \(albumNumber)", year: 1990 + b * 3 + a % 10,
                    container: albumNumber % 2 == 1
                        ? "flac" : "mp3",
                    tracksPerDisc: perDisc, guest: guest ? guestName : nil, spec: spec, date: nextDate)
                added += album
                if a == 0, b == 0, perDisc.count > 1 { ids.twoDiscAlbumId = album[0].id }
                if guest {
                    ids.guestAlbumId = album[0].id
                    ids.guestTrackId = album.last(where: { $0.artists.contains(guestName) })?.id
                }
            }
        }
        if spec.extras {
            if ids.guestAlbumId != nil {
                // A by-name artist: made for a name no folder artist has (`LibraryManager.GetArtist` →
                // `CreateItemByName`, L960–999, v10.8.13); no parent, not a folder, stored under `<metadata>/artists`.
                let guestId = id("music-artist-guest")
                ids.guestArtistId = guestId
                added.append(
                    TestItem(
                        id: guestId, name: guestName, type: "MusicArtist",
                        path: "/config/metadata/artists/\(guestName)", imageTags: [:], dateCreated: nextDate(),
                        etag: id("etag-\(guestId)"), isFolder: false))
            }
            let lonelyId = id("music-artist-without-albums")
            ids.artistWithoutAlbumsId = lonelyId
            added.append(
                TestItem(
                    id: lonelyId, name: "Test Artist Without Albums", type: "MusicArtist", parentId: musicView,
                    path: "/media/Music/Test Artist Without Albums", imageTags: ["Primary": id("img-\(lonelyId)")],
                    dateCreated: nextDate(), etag: id("etag-\(lonelyId)"), isFolder: true))
        }
        items += added
        guard spec.extras else {
            musicIds = ids
            return
        }
        // Lyrics on the first two tracks of the first album: timed (LRC, with tags) and plain (TXT).
        let albumIds = albums.map(\.id)
        if let first = albumIds.first {
            let albumTracks = tracks(ofAlbum: first)
            if let timed = albumTracks.first, let position = items.firstIndex(where: { $0.id == timed.id }) {
                items[position].lyrics = TestLyrics(
                    lines: [
                        TestLyricLine(text: "First line of \(timed.name)", start: 120_000_000),
                        TestLyricLine(text: "Second line", start: 175_000_000),
                        TestLyricLine(text: "Third line", start: 232_500_000),
                        TestLyricLine(text: "Last line", start: 300_000_000),
                    ], artist: timed.artists.first, album: timed.album, title: timed.name)
                ids.timedLyricsTrackId = timed.id
            }
            if albumTracks.count > 1, let position = items.firstIndex(where: { $0.id == albumTracks[1].id }) {
                items[position].lyrics = TestLyrics(lines: [
                    TestLyricLine(text: "A plain line"), TestLyricLine(text: "Another plain line"),
                    TestLyricLine(text: "The end"),
                ])
                ids.plainLyricsTrackId = albumTracks[1].id
            }
        }
        // The playlist: tracks of the first two albums interleaved, the first track listed again at the end.
        let a = albumIds.first.map { tracks(ofAlbum: $0) } ?? []
        let b = albumIds.count > 1 ? tracks(ofAlbum: albumIds[1]) : []
        var entries: [String] = []
        for index in 0..<2 {
            if index < a.count { entries.append(a[index].id) }
            if index < b.count { entries.append(b[index].id) }
        }
        if let repeated = a.first { entries.append(repeated.id) }
        if !entries.isEmpty {
            let playlistId = id("playlist-0")
            ids.playlistId = playlistId
            var playlist = TestItem(
                id: playlistId, name: "Test Playlist", type: "Playlist", parentId: playlistsView,
                path: "/config/data/playlists/Test Playlist/playlist.xml",
                imageTags: ["Primary": id("img-\(playlistId)")], dateCreated: nextDate(),
                etag: id("etag-\(playlistId)"), isFolder: true)
            playlist.mediaType = "Audio"
            playlist.linkedChildren = entries.enumerated().map {
                TestLinkedChild(itemId: $0.element, serial: $0.offset)
            }
            items.append(playlist)
        }
        // The box set: a movie, a series and an album, stored in that order.
        let linked = [movies.first?.id, series.first?.id, albumIds.first].compactMap { $0 }
        if !linked.isEmpty {
            let boxSetId = id("boxset-0")
            ids.boxSetId = boxSetId
            var boxSet = TestItem(
                id: boxSetId, name: "Test Collection", type: "BoxSet", parentId: boxSetsView,
                path: "/config/data/collections/Test Collection [boxset]",
                imageTags: ["Primary": id("img-\(boxSetId)")], dateCreated: nextDate(),
                etag: id("etag-\(boxSetId)"), isFolder: true)
            boxSet.displayOrder = "PremiereDate"
            boxSet.linkedChildren = linked.enumerated().map { TestLinkedChild(itemId: $0.element, serial: $0.offset) }
            items.append(boxSet)
        }
        musicIds = ids
    }

    /// An album (first) and its tracks, in library order: by file name, `NN Title.ext`, so a multi-disc album's
    /// discs interleave (track 1 of each disc, then track 2…) until sorted by disc and track.
    static func makeAlbum(
        seed: UInt64, label: String, artistId: String, artistName: String, name: String, year: Int,
        container: String, tracksPerDisc: [Int], guest: String?, spec: MusicSpec, date: () -> Date
    ) -> [TestItem] {
        func id(_ text: String) -> String { SplitMix64.hexID(seed: seed, label: text) }
        let albumId = id(label)
        let folder = "/media/Music/\(artistName)/\(name)"
        let albumTag = id("img-\(albumId)")
        var tracks: [TestItem] = []
        let multiDisc = tracksPerDisc.count > 1
        var slots: [(disc: Int, track: Int)] = []
        for track in 0..<(tracksPerDisc.max() ?? 0) {
            for (disc, count) in tracksPerDisc.enumerated() where track < count { slots.append((disc, track)) }
        }
        let lastSlot = slots.indices.last
        for (index, slot) in slots.enumerated() {
            let trackId = id("\(label)-track-\(slot.disc)-\(slot.track)")
            let number = slot.track + 1
            let title = multiDisc ? "Track \(number) (Disc \(slot.disc + 1))" : "Track \(number)"
            let fileBase = (number < 10 ? "0\(number)" : "\(number)") + " " + title
            let seconds = max(1, spec.trackSeconds) + Int(SplitMix64.hash("length-\(seed)-\(trackId)") % 60)
            let ticks = Int64(seconds) * 10_000_000
            let spread = UInt64(max(1, min(4096, spec.mediaSize / 8)))
            let size = max(0, spec.mediaSize) + Int(SplitMix64.hash("size-\(seed)-\(trackId)") % spread)
            let created = date()
            var source = TestMediaSource(
                id: trackId, name: fileBase, path: "\(folder)/\(fileBase).\(container)", container: container,
                size: size, etag: id("source-etag-\(trackId)"), runTimeTicks: ticks, lastModified: created)
            source.audio =
                container == "flac"
                ? TestAudioStream(codec: "flac", bitRate: 1_000_000, bitDepth: 16)
                : TestAudioStream(codec: "mp3", bitRate: 320_000)
            var track = TestItem(
                id: trackId, name: title, type: "Audio", parentId: albumId, indexNumber: number,
                parentIndexNumber: slot.disc + 1, productionYear: year, path: source.path, mediaSources: [source],
                dateCreated: created, etag: id("etag-\(trackId)"), runTimeTicks: ticks, isFolder: false)
            track.mediaType = "Audio"
            track.album = name
            track.albumId = albumId
            track.albumArtists = [artistName]
            track.artists = guest != nil && index == lastSlot ? [artistName, guest ?? ""] : [artistName]
            tracks.append(track)
        }
        var album = TestItem(
            id: albumId, name: name, type: "MusicAlbum", parentId: artistId, productionYear: year, path: folder,
            imageTags: ["Primary": albumTag], dateCreated: date(), etag: id("etag-\(albumId)"),
            runTimeTicks: tracks.isEmpty ? nil : tracks.reduce(Int64(0)) { $0 + ($1.runTimeTicks ?? 0) }, isFolder: true
        )
        album.albumArtists = namesByFrequency(tracks.map(\.albumArtists))
        album.artists = namesByFrequency(tracks.map(\.artists))
        return [album] + tracks
    }

    /// An album's artist list from its tracks' lists: most frequent first, ties in order of appearance
    /// (`AlbumMetadataService.SetArtistsFromSongs`, v10.9.11 L112–129).
    static func namesByFrequency(_ lists: [[String]]) -> [String] {
        var order: [String] = []
        var counts: [String: Int] = [:]
        for name in lists.joined() {
            if counts[name] == nil { order.append(name) }
            counts[name, default: 0] += 1
        }
        return order.enumerated().sorted {
            let (x, y) = (counts[$0.element] ?? 0, counts[$1.element] ?? 0)
            return x != y ? x > y : $0.offset < $1.offset
        }.map(\.element)
    }

    // MARK: Music mutations (for reconciliation tests)

    /// A new load of every playlist: on 10.8/10.9 each entry's `PlaylistItemId` is a `Guid.NewGuid()` made when the
    /// playlist is read from the database (`LinkedChild` L13–25, `[JsonIgnore]`, v10.8.13), i.e. after a restart or
    /// a cache eviction, so every id changes. 10.10+ answer the item's id and do not change.
    public mutating func reloadPlaylists() {
        playlistLoads += 1
    }

    /// Moves a playlist's (or box set's) entry at `from` to `to` (positions in the stored list); the entry keeps its
    /// `PlaylistItemId` until the next load.
    public mutating func moveLinkedEntry(of containerId: String, from: Int, to: Int) {
        guard let position = lookup.tables(for: self).position[containerId.lowercased()] else { return }
        var entries = items[position].linkedChildren
        guard entries.indices.contains(from) else { return }
        let entry = entries.remove(at: from)
        entries.insert(entry, at: min(max(0, to), entries.count))
        items[position].linkedChildren = entries
    }

    /// Appends entries linking `itemIds` to a playlist or box set (a playlist may list an item twice).
    public mutating func addLinkedEntries(to containerId: String, itemIds: [String]) {
        guard let position = lookup.tables(for: self).position[containerId.lowercased()] else { return }
        var next = (items[position].linkedChildren.map(\.serial).max() ?? -1) + 1
        for itemId in itemIds {
            items[position].linkedChildren.append(TestLinkedChild(itemId: TestServer.normalizeID(itemId), serial: next))
            next += 1
        }
    }

    /// Removes the entries at `offsets` (positions in the stored list) from a playlist or box set.
    public mutating func removeLinkedEntries(from containerId: String, at offsets: [Int]) {
        guard let position = lookup.tables(for: self).position[containerId.lowercased()] else { return }
        let doomed = Set(offsets)
        items[position].linkedChildren = items[position].linkedChildren.enumerated().filter {
            !doomed.contains($0.offset)
        }.map(\.element)
    }

    /// Sets a box set's `DisplayOrder` (`PremiereDate`, `SortName`, or on 10.10+ any sort name, `Default` meaning the
    /// stored order).
    public mutating func setDisplayOrder(of boxSetId: String, _ order: String) {
        guard let position = lookup.tables(for: self).position[boxSetId.lowercased()] else { return }
        items[position].displayOrder = order
    }

    /// Adds an album of `tracks` single-disc tracks to a folder artist; returns the album's id (nil for an unknown
    /// artist). Its files are `mediaSize` bytes (plus a small extra), flac.
    @discardableResult
    public mutating func addAlbum(
        toArtist artistId: String, name: String, year: Int = 2020, tracks: Int = 3, mediaSize: Int = 64 * 1024
    ) -> String? {
        let lowered = artistId.lowercased()
        guard let artist = item(withId: lowered), artist.type == "MusicArtist" else { return nil }
        let base = 1_690_000_000.0 + 20_000_000 + Double(items.count) * 60
        var counter = 0
        let made = TestLibrary.makeAlbum(
            seed: seed, label: "music-added-album-\(lowered)-\(name)", artistId: lowered, artistName: artist.name,
            name: name, year: year, container: "flac", tracksPerDisc: [max(0, tracks)], guest: nil,
            spec: MusicSpec(mediaSize: mediaSize)
        ) {
            counter += 1
            return Date(timeIntervalSince1970: base + Double(counter) * 60)
        }
        guard let album = made.first, item(withId: album.id) == nil else { return nil }
        items += made
        return album.id
    }

    /// Removes a track (its file is gone); its album's artist lists are computed again from the tracks left, as a
    /// scan's album refresh does. Playlist and box set entries linking it stay and are skipped when listed.
    public mutating func removeTrack(withId id: String) {
        let lowered = id.lowercased()
        guard let track = item(withId: lowered), track.type == "Audio" else { return }
        removeItem(withId: lowered)
        guard let albumId = track.albumId, let position = lookup.tables(for: self).position[albumId] else { return }
        let left = children(of: albumId).filter { $0.type == "Audio" }
        items[position].albumArtists = TestLibrary.namesByFrequency(left.map(\.albumArtists))
        items[position].artists = TestLibrary.namesByFrequency(left.map(\.artists))
        items[position].runTimeTicks = left.isEmpty ? nil : left.reduce(Int64(0)) { $0 + ($1.runTimeTicks ?? 0) }
    }
}
