import Foundation
import MediaSync
import MediaSyncJSON
import MediaSyncTestServer
import Testing

@testable import MediaSyncServe

/// A mirror holding music synced from the test server (an album of two discs with lyrics, a playlist listing a track
/// twice, a collection of a movie, a series and the album), served and browsed as a music client does.
@Suite struct MusicServeTests {
    /// Two artists of two albums of six tracks; the first album on two discs (1–3 twice) with lyrics on its first two
    /// tracks; a guest on the second album's last track; a playlist (tracks 1 and 2 of each of the first two albums,
    /// then the first track again); a box set of the movie, the series and the first album.
    static func library() -> TestLibrary {
        TestLibrary(
            movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 4_000, seed: 7,
            music: TestLibrary.MusicSpec(tracksPerDisc: 6, mediaSize: 3_000))
    }

    /// The album, the playlist and the collection selected and synced; `serve`'s password set.
    static func synced(_ fixture: ServeFixture) async throws -> TestLibrary.MusicIds {
        let ids = try #require(fixture.library.musicIds)
        for (kind, id) in [
            (Selection.Kind.album, ids.twoDiscAlbumId), (.playlist, ids.playlistId), (.collection, ids.boxSetId),
        ] {
            try fixture.index.select(Selection(id: try #require(id), kind: kind, addedAt: "2026-01-01T00:00:00Z"))
        }
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
        return ids
    }

    /// Signs in: the token and the user id.
    static func signIn(_ http: ServeHTTP) async throws -> (token: String, userId: String) {
        let auth = try await http.signIn()
        #expect(auth.status == 200)
        let token = auth.object["AccessToken"] as? String ?? ""
        let userId = (auth.object["User"] as? [String: Any])?["Id"] as? String ?? ""
        return (token, userId)
    }

    static func ids(_ reply: Reply) -> [String] { reply.items.map { $0["Id"] as? String ?? "" } }

    /// A list's entries as the mirror keeps them (its `metadata.json`), in order.
    static func entries(_ fixture: ServeFixture, _ listId: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.root.path + "/Downloads/\(listId)/metadata.json"))
        let document = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        return (document["entries"] as? [[String: Any]] ?? []).compactMap { $0["itemId"] as? String }
    }

    @Test func aMusicClientBrowsesAlbumsArtistsPlaylistsAndCollections() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            let ids = try await Self.synced(fixture)
            let library = fixture.library
            let albumId = try #require(ids.twoDiscAlbumId)
            let album = try #require(library.item(withId: albumId))
            let albumTracks = library.tracks(ofAlbum: albumId)
            let playlistId = try #require(ids.playlistId)
            let playlist = try #require(library.item(withId: playlistId))
            let entries = playlist.linkedChildren.map(\.itemId)
            let boxSetId = try #require(ids.boxSetId)
            // The second album: the playlist holds its first two tracks.
            let secondId = try #require(library.item(withId: entries[1])?.albumId)
            let second = try #require(library.item(withId: secondId))
            let artist = try #require(library.musicArtists.first { $0.name == "Test Artist 1" })
            let guest = try #require(ids.guestArtistId)

            try await fixture.serving { http in
                let (token, userId) = try await Self.signIn(http)

                // The views: music, the playlists folder (a `UserView`), the collections, and the movie and series
                // the collection brought; the same through the legacy route.
                let views = try await http.send("GET", "/UserViews?userId=\(userId)", token: token)
                let byType = Dictionary(
                    views.items.map { ($0["CollectionType"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
                #expect(Set(byType.keys) == ["movies", "tvshows", "music", "boxsets", "playlists"])
                #expect(byType["music"]?["Type"] as? String == "CollectionFolder")
                #expect(byType["playlists"]?["Type"] as? String == "UserView")
                #expect(byType["boxsets"]?["Name"] as? String == "Collections")
                let legacyViews = try await http.send("GET", "/Users/\(userId)/Views", token: token)
                #expect(Self.ids(legacyViews) == Self.ids(views))
                let music = byType["music"]?["Id"] as? String ?? ""
                let playlists = byType["playlists"]?["Id"] as? String ?? ""
                let boxSets = byType["boxsets"]?["Id"] as? String ?? ""

                // The albums held, with their held tracks counted, their cover and their artists as the server gave.
                let albums = try await http.send(
                    "GET",
                    "/Users/\(userId)/Items?ParentId=\(music)&IncludeItemTypes=MusicAlbum&Recursive=true"
                        + "&SortBy=SortName&Fields=PrimaryImageAspectRatio,SortName",
                    token: token)
                #expect(Self.ids(albums) == [albumId, secondId])
                #expect(albums.items.map { $0["ChildCount"] as? Int } == [6, 2])
                #expect((albums.items.first?["ImageTags"] as? [String: String])?["Primary"] != nil)
                #expect(albums.items.allSatisfy { $0["ParentId"] as? String == music })
                #expect(
                    (albums.items.first?["AlbumArtists"] as? [[String: Any]])?.first?["Id"] as? String == artist.id)
                let cover = try await http.send("GET", "/Items/\(albumId)/Images/Primary")
                #expect(cover.status == 200 && !cover.body.isEmpty)
                // The music view lists its albums as children.
                let children = try await http.send("GET", "/Items?ParentId=\(music)", token: token)
                #expect(Set(Self.ids(children)) == [albumId, secondId])

                // An album's tracks in disc and track order, asked as clients ask, and without a sort.
                let expected = albumTracks.map(\.id)
                for query in ["&SortBy=ParentIndexNumber,IndexNumber,SortName", "", "&Recursive=true"] {
                    let tracks = try await http.send(
                        "GET", "/Items?ParentId=\(albumId)&IncludeItemTypes=Audio\(query)", token: token)
                    #expect(Self.ids(tracks) == expected, "\(query)")
                }
                let ordered = try await http.send(
                    "GET", "/Items?ParentId=\(albumId)&SortBy=ParentIndexNumber,IndexNumber,SortName", token: token)
                #expect(ordered.items.map { $0["ParentIndexNumber"] as? Int } == [1, 1, 1, 2, 2, 2])
                #expect(ordered.items.map { $0["IndexNumber"] as? Int } == [1, 2, 3, 1, 2, 3])
                #expect(
                    ordered.items.allSatisfy {
                        $0["AlbumId"] as? String == albumId && $0["ParentId"] as? String == albumId
                    })
                #expect(ordered.items.allSatisfy { $0["AlbumPrimaryImageTag"] != nil })
                let page = try await http.send(
                    "GET", "/Items?ParentId=\(albumId)&SortBy=ParentIndexNumber,IndexNumber&StartIndex=2&Limit=2",
                    token: token)
                #expect(Self.ids(page) == Array(expected[2..<4]))
                #expect(page.object["TotalRecordCount"] as? Int == 6)
                let secondDisc = try await http.send(
                    "GET", "/Items?ParentId=\(albumId)&ParentIndexNumber=2&SortBy=IndexNumber", token: token)
                #expect(Self.ids(secondDisc) == Array(expected[3...]))
                let search = try await http.send(
                    "GET", "/Items?SearchTerm=disc%202&IncludeItemTypes=Audio&Recursive=true", token: token)
                #expect(Set(Self.ids(search)) == Set(expected[3...]))

                // Artists: the album artists, and every artist (the guest is an artist of the second album).
                let albumArtists = try await http.send(
                    "GET", "/Artists/AlbumArtists?ParentId=\(music)&userId=\(userId)", token: token)
                #expect(Self.ids(albumArtists) == [artist.id])
                #expect(albumArtists.items.first?["Type"] as? String == "MusicArtist")
                let everyone = try await http.send("GET", "/Artists?ParentId=\(music)&SortBy=SortName", token: token)
                #expect(Set(Self.ids(everyone)) == [artist.id, guest])
                let counted = try await http.send(
                    "GET", "/Artists/AlbumArtists?IncludeItemTypes=MusicAlbum&SearchTerm=artist", token: token)
                #expect(counted.items.first?["AlbumCount"] as? Int == 2)
                let one = try await http.send("GET", "/Users/\(userId)/Items/\(artist.id)", token: token)
                #expect(one.object["Name"] as? String == artist.name)
                #expect(one.object["Type"] as? String == "MusicArtist")
                // An artist's albums (newest first by default), its songs, and the guest's appearance.
                let byArtist = try await http.send(
                    "GET", "/Items?ArtistIds=\(artist.id)&IncludeItemTypes=MusicAlbum&Recursive=true", token: token)
                #expect(Self.ids(byArtist) == [secondId, albumId])
                #expect((second.productionYear ?? 0) > (album.productionYear ?? 0))
                let songs = try await http.send(
                    "GET", "/Items?ArtistIds=\(artist.id)&IncludeItemTypes=Audio&Recursive=true", token: token)
                #expect(songs.object["TotalRecordCount"] as? Int == 8)
                for (query, expected) in [
                    ("AlbumArtistIds=\(guest)", [String]()), ("ContributingArtistIds=\(guest)", [secondId]),
                    ("ArtistIds=\(guest)", [secondId]),
                    ("AlbumArtistIds=\(artist.id)&SortBy=SortName", [albumId, secondId]),
                ] {
                    let asked = try await http.send(
                        "GET", "/Items?\(query)&IncludeItemTypes=MusicAlbum&Recursive=true", token: token)
                    #expect(Self.ids(asked) == expected, "\(query)")
                }
                let underArtist = try await http.send(
                    "GET", "/Items?ParentId=\(artist.id)&SortBy=SortName", token: token)
                #expect(Self.ids(underArtist) == [albumId, secondId])

                // The playlist: its entries in order, the first track twice, through both routes.
                let lists = try await http.send("GET", "/Items?ParentId=\(playlists)", token: token)
                #expect(Self.ids(lists) == [playlistId])
                #expect(lists.items.first?["ChildCount"] as? Int == entries.count)
                let playlistItems = try await http.send(
                    "GET", "/Playlists/\(playlistId)/Items?userId=\(userId)&Fields=MediaSources", token: token)
                #expect(Self.ids(playlistItems) == entries)
                #expect(entries.count == 5 && entries.first == entries.last)
                #expect(playlistItems.items.map { $0["PlaylistItemId"] as? String ?? "" } == entries)
                #expect(playlistItems.items.allSatisfy { ($0["MediaSources"] as? [Any])?.count == 1 })
                let pagedEntries = try await http.send(
                    "GET", "/Playlists/\(playlistId)/Items?StartIndex=3&Limit=5", token: token)
                #expect(Self.ids(pagedEntries) == Array(entries[3...]))
                #expect(pagedEntries.object["TotalRecordCount"] as? Int == entries.count)
                let asChildren = try await http.send("GET", "/Items?ParentId=\(playlistId)", token: token)
                #expect(Self.ids(asChildren) == entries)
                let dto = try await http.send("GET", "/Playlists/\(playlistId)", token: token)
                #expect(dto.object["ItemIds"] as? [String] == entries)
                #expect(try await http.send("GET", "/Playlists/\(albumId)/Items", token: token).status == 404)
                let allPlaylists = try await http.send(
                    "GET", "/Items?IncludeItemTypes=Playlist&Recursive=true", token: token)
                #expect(Self.ids(allPlaylists) == [playlistId])

                // The collection: its movie, series and album in its order; asked for as a type, the parent is not
                // looked at (as Jellyfin does).
                let boxSetList = try await http.send("GET", "/Items?ParentId=\(boxSets)", token: token)
                #expect(Self.ids(boxSetList) == [boxSetId])
                let members = try await http.send("GET", "/Items?ParentId=\(boxSetId)", token: token)
                #expect(Self.ids(members) == (try Self.entries(fixture, boxSetId)))
                #expect(Set(members.items.map { $0["Type"] as? String ?? "" }) == ["Movie", "Series", "MusicAlbum"])
                let asType = try await http.send(
                    "GET", "/Items?IncludeItemTypes=BoxSet&Recursive=true&ParentId=\(music)", token: token)
                #expect(Self.ids(asType) == [boxSetId])

                // The newest music is grouped by album.
                let latest = try await http.send(
                    "GET", "/Items/Latest?ParentId=\(music)&IncludeItemTypes=Audio&Limit=10", token: token)
                let latestItems = latest.json as? [[String: Any]] ?? []
                #expect(Set(latestItems.map { $0["Id"] as? String ?? "" }) == [albumId, secondId])
                #expect(latestItems.allSatisfy { $0["Type"] as? String == "MusicAlbum" })
            }
        }
    }

    @Test func aTrackStreamsWithRangesItsLyricsAnswerAndItsPlayGoesHome() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            let ids = try await Self.synced(fixture)
            let library = fixture.library
            let albumId = try #require(ids.twoDiscAlbumId)
            let tracks = library.tracks(ofAlbum: albumId)
            let timedId = try #require(ids.timedLyricsTrackId)
            let timed = try #require(library.item(withId: timedId))
            let plain = try #require(ids.plainLyricsTrackId)
            let without = tracks[2]
            let bytes = try #require(library.mediaBytes(forMediaSourceId: timed.mediaSources[0].id))

            try await fixture.serving { http in
                let (token, userId) = try await Self.signIn(http)

                // The item and its playback info: the held file, direct play only, its lyrics stream kept.
                let item = try await http.send("GET", "/Users/\(userId)/Items/\(timed.id)", token: token)
                #expect(item.object["Type"] as? String == "Audio")
                #expect(item.object["HasLyrics"] as? Bool == true)
                #expect(item.object["CanDownload"] as? Bool == true)
                let bare = try await http.send("GET", "/Items/\(without.id)", token: token)
                #expect(bare.object["HasLyrics"] as? Bool == false)
                let info = try await http.send(
                    "POST", "/Items/\(timed.id)/PlaybackInfo?userId=\(userId)", token: token,
                    json: ["DeviceProfile": [:] as [String: Any]])
                let source = (info.object["MediaSources"] as? [[String: Any]])?.first ?? [:]
                #expect(source["Container"] as? String == timed.mediaSources[0].container)
                #expect(source["SupportsTranscoding"] as? Bool == false)
                #expect((source["Size"] as? NSNumber)?.intValue == bytes.count)
                let streams = source["MediaStreams"] as? [[String: Any]] ?? []
                #expect(streams.contains { $0["Type"] as? String == "Lyric" && $0["Path"] == nil })
                let bareInfo = try await http.send("GET", "/Items/\(without.id)/PlaybackInfo", token: token)
                let bareStreams =
                    (bareInfo.object["MediaSources"] as? [[String: Any]])?.first?["MediaStreams"] as? [[String: Any]]
                #expect(bareStreams?.contains { $0["Type"] as? String == "Lyric" } == false)

                // The stream, a range of it (no token needed, as on Jellyfin), HEAD, and the routes that need one.
                let ranged = try await http.send(
                    "GET", "/Audio/\(timed.id)/stream?static=true", headers: ["Range": "bytes=10-109"])
                #expect(ranged.status == 206)
                #expect(ranged.body == Array(bytes[10...109]))
                #expect(ranged.headers["content-range"] == "bytes 10-109/\(bytes.count)")
                let byContainer = try await http.send("GET", "/Audio/\(timed.id)/stream.flac?static=true")
                #expect(byContainer.status == 200 && byContainer.body == bytes)
                let head = try await http.send("HEAD", "/Audio/\(timed.id)/stream")
                #expect(head.headers["content-length"] == "\(bytes.count)")
                #expect(try await http.send("GET", "/Audio/\(timed.id)/universal").status == 401)
                // Whatever the universal route is asked for, the held file comes back as it is.
                let universal = try await http.send(
                    "GET",
                    "/Audio/\(timed.id)/universal?UserId=\(userId)&Container=opus,mp3&TranscodingContainer=ts"
                        + "&AudioCodec=aac&MaxStreamingBitrate=64000&api_key=\(token)",
                    headers: ["Range": "bytes=0-"])
                #expect(universal.status == 206 && universal.body == bytes)
                for route in ["Download", "File"] {
                    let whole = try await http.send("GET", "/Items/\(timed.id)/\(route)", token: token)
                    #expect(whole.status == 200 && whole.body == bytes, "\(route)")
                    #expect(try await http.send("GET", "/Items/\(timed.id)/\(route)").status == 401, "\(route)")
                }

                // Lyrics: the timed lines with their start in ticks, the plain ones without; none: 404.
                let lyrics = try await http.send("GET", "/Audio/\(timed.id)/Lyrics", token: token)
                #expect(lyrics.status == 200)
                let lines = lyrics.object["Lyrics"] as? [[String: Any]] ?? []
                let expectedLines = timed.lyrics?.lines ?? []
                #expect(lines.map { $0["Text"] as? String } == expectedLines.map(\.text))
                #expect(lines.map { ($0["Start"] as? NSNumber)?.int64Value } == expectedLines.map(\.start))
                #expect(lyrics.object["Metadata"] is [String: Any])
                let plainLyrics = try await http.send("GET", "/Audio/\(plain)/Lyrics", token: token)
                let plainLines = plainLyrics.object["Lyrics"] as? [[String: Any]] ?? []
                #expect(plainLines.map { $0["Text"] as? String } == ["A plain line", "Another plain line", "The end"])
                #expect(plainLines.allSatisfy { $0["Start"] == nil })
                #expect(try await http.send("GET", "/Audio/\(without.id)/Lyrics", token: token).status == 404)
                #expect(try await http.send("GET", "/Audio/\(albumId)/Lyrics", token: token).status == 404)
                #expect(try await http.send("GET", "/Audio/\(timed.id)/Lyrics").status == 401)

                // Played: a stop half-way through a track shorter than five minutes plays it (Jellyfin's rule for
                // songs); one at 2 % records nothing.
                let runtime = try #require(timed.runTimeTicks)
                #expect(runtime < 300 * 10_000_000)
                let start: [String: Any] = ["ItemId": timed.id, "PositionTicks": 0]
                #expect(try await http.send("POST", "/Sessions/Playing", token: token, json: start).status == 204)
                let stop: [String: Any] = ["ItemId": timed.id, "PositionTicks": runtime / 2]
                #expect(
                    try await http.send("POST", "/Sessions/Playing/Stopped", token: token, json: stop).status == 204)
                let data = try await http.send("GET", "/UserItems/\(timed.id)/UserData", token: token)
                #expect(data.object["Played"] as? Bool == true)
                #expect(data.object["PlaybackPositionTicks"] as? Int == 0)
                let barely: [String: Any] = ["ItemId": without.id, "PositionTicks": (without.runTimeTicks ?? 0) / 50]
                _ = try await http.send("POST", "/Sessions/Playing", token: token, json: ["ItemId": without.id])
                _ = try await http.send("POST", "/Sessions/Playing/Stopped", token: token, json: barely)
                let untouched = try await http.send("GET", "/UserItems/\(without.id)/UserData", token: token)
                #expect(untouched.object["Played"] as? Bool == false)
            }
            // The next sync sends the one mark home.
            let pending = try fixture.index.playEvents(state: .pending)
            #expect(pending.map(\.itemId) == [timed.id])
            try await fixture.sync()
            #expect(fixture.upstream.userData(of: timed.id)?.played == true)
            #expect(fixture.upstream.userData(of: without.id)?.played == false)
        }
    }
}

/// The pure parts: lyrics read from LRC, the song rule, artist filters and the new routes.
@Suite struct MusicPartsTests {
    @Test func lrcIsAnsweredAsJellyfinReadsIt() throws {
        let text =
            "[ar:Someone]\n[ti:A Song]\n[length:03:05]\n[00:12.50] Second \n[00:01.00][00:30.00]First and again\n"
        let dto = LyricsAnswer.lyricDto(fromLRC: text)
        #expect(dto["Metadata"]?["Artist"]?.stringValue == "Someone")
        #expect(dto["Metadata"]?["Title"]?.stringValue == "A Song")
        #expect(dto["Metadata"]?["Length"]?.intValue == 1_850_000_000)
        let lines = dto["Lyrics"]?.arrayValue ?? []
        #expect(lines.map { $0["Text"]?.stringValue } == ["First and again", "Second", "First and again"])
        #expect(lines.map { $0["Start"]?.intValue } == [10_000_000, 125_000_000, 300_000_000])
        let plain = LyricsAnswer.lyricDto(fromLRC: "One\n\nTwo\n")
        #expect((plain["Lyrics"]?.arrayValue ?? []).map { $0["Text"]?.stringValue } == ["One", "", "Two"])
        #expect((plain["Lyrics"]?.arrayValue ?? []).allSatisfy { $0["Start"] == nil })
        #expect(plain["Metadata"]?.objectValue?.members.isEmpty == true)
        #expect(LyricsAnswer.ticks("01:02.345") == 623_450_000)
        #expect(LyricsAnswer.ticks("1:02") == 620_000_000)
        #expect(LyricsAnswer.ticks("ar:x") == nil)
        #expect(LyricsAnswer.ticks("00:75.00") == nil)
    }

    @Test(arguments: [
        (Int64(0), Int64?.some(2_000_000_000), false), (40_000_000, 2_000_000_000, false),
        (1_000_000_000, 2_000_000_000, true), (1_900_000_000, 2_000_000_000, true),
        (1_000_000_000, 4_000_000_000, false), (3_700_000_000, 4_000_000_000, true), (5, nil, true),
    ])
    func aSongIsPlayedAsJellyfinDecides(position: Int64, runtime: Int64?, played: Bool) {
        #expect(PlayTracker.trackPlayed(position: position, runtime: runtime) == played)
    }

    static func track(_ id: String, album: String, artists: [String], albumArtist: String) -> CatalogItem {
        let raw: JSONObject = [
            "Album": .string("One"), "Artists": .array(artists.map { .string($0) }),
            "AlbumArtists": .array([.object(["Name": .string(albumArtist), "Id": .string("a-\(albumArtist)")])]),
        ]
        return CatalogItem(
            id: id, type: "Audio", name: id, parentId: album, viewId: "vm", raw: raw,
            versions: [HeldVersion(id: id, container: "mp3", file: ItemQueryTests.file, subtitles: [])])
    }

    static let catalog = Catalog(
        views: [CatalogItem(id: "vm", type: "CollectionFolder", name: "Music", isFolder: true)],
        items: [
            CatalogItem(
                id: "al1", type: "MusicAlbum", name: "One", parentId: "vm", viewId: "vm", isFolder: true,
                raw: ["AlbumArtists": .array([.object(["Name": .string("Ann"), "Id": .string("a-Ann")])])]),
            track("t1", album: "al1", artists: ["Ann"], albumArtist: "Ann"),
            track("t2", album: "al1", artists: ["Ann", "Bob"], albumArtist: "Ann"),
            CatalogItem(id: "a-Ann", type: "MusicArtist", name: "Ann", viewId: "vm", isFolder: true),
            CatalogItem(id: "a-Bob", type: "MusicArtist", name: "Bob", viewId: "vm", isFolder: true),
            CatalogItem(id: "pl", type: "Playlist", name: "List", parentId: "vm", isFolder: true),
        ],
        entries: ["pl": ["t2", "t1", "t2"]])

    @Test(arguments: [
        ("ArtistIds=a-Bob&Recursive=true", ["t2"]),
        ("AlbumArtistIds=a-Bob&Recursive=true", []),
        ("ContributingArtistIds=a-Bob&Recursive=true", ["t2"]),
        ("AlbumArtistIds=a-Ann&Recursive=true&IncludeItemTypes=MusicAlbum", ["al1"]),
        ("ExcludeArtistIds=a-Bob&Recursive=true&IncludeItemTypes=Audio", ["t1"]),
        ("AlbumIds=al1&Recursive=true", ["t1", "t2"]),
        ("ArtistIds=nobody&Recursive=true", []),
        ("ParentId=a-Ann", ["al1"]),
        ("ParentId=pl", ["t2", "t1", "t2"]),
        ("ParentId=pl&SortBy=SortName", ["t1", "t2", "t2"]),
        ("ParentId=vm&Recursive=true&IncludeItemTypes=MusicArtist", ["a-Ann", "a-Bob"]),
    ])
    func artistAlbumAndListQueries(query: String, expected: [String]) throws {
        let selected = try ItemQuery(RequestQuery(query)).select(Self.catalog) { _ in UserState() }
        #expect(selected.items.map(\.id) == expected)
    }

    @Test(arguments: [
        ("/Artists", RouteMatch.found(.artists(albumArtistsOnly: false))),
        ("/artists/albumartists", .found(.artists(albumArtistsOnly: true))),
        ("/Playlists/p1", .found(.playlist(id: "p1"))),
        ("/Playlists/p1/Items", .found(.playlistItems(id: "p1"))),
        ("/Audio/t1/Lyrics", .found(.lyrics(id: "t1"))),
        ("/Audio/t1/stream", .found(.stream(id: "t1", anonymous: true))),
        ("/Items/t1/File", .found(.stream(id: "t1", anonymous: false))),
    ])
    func musicRoutes(path: String, expected: RouteMatch) {
        #expect(RouteTable.match(method: "GET", path: path) == expected)
    }
}

/// A mirror made on disk and indexed by `reindex`: what the test server's music does not make (a music video, a home
/// video, a loose track, an album whose item the sync could not read), and a track held as a transcode.
@Suite struct HandMadeMusicMirrorTests {
    static let artistId = "aaaa0000000000000000000000000001"
    static var artist: [String: Any] { ["Name": "Solo Artist", "Id": artistId] }

    /// Writes `Downloads/<folder>/metadata.json` and each media file named by its versions.
    static func write(
        _ root: MirrorRoot, folder: String, itemType: String, item: [String: Any]?, tracks: [[String: Any]]? = nil,
        media: [(itemId: String, file: String)]
    ) throws {
        let directory = root.path + "/Downloads/\(folder)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var versions: [[String: Any]] = []
        for (itemId, file) in media {
            try Data(repeating: 7, count: 500).write(to: URL(fileURLWithPath: directory + "/" + file))
            let name = (file as NSString).deletingPathExtension
            versions.append([
                "versionId": String(name.split(separator: "-").last ?? ""),
                "container": (file as NSString).pathExtension,
                "isStatic": true, "mediaSourceId": itemId, "downloadDate": "2026-01-01T00:00:00Z", "taskId": "t",
                "itemId": itemId,
            ])
        }
        var metadata: [String: Any] = [
            "itemId": folder, "itemType": itemType, "displayTitle": folder, "versions": versions,
        ]
        if let item { metadata["item"] = item }
        if let tracks { metadata["tracks"] = tracks }
        try JSONSerialization.data(withJSONObject: metadata).write(
            to: URL(fileURLWithPath: directory + "/metadata.json"))
    }

    static func track(_ id: String, name: String, albumId: String?, number: Int) -> [String: Any] {
        var track: [String: Any] = [
            "Name": name, "Id": id, "Type": "Audio", "IndexNumber": number, "RunTimeTicks": 1_800_000_000,
            "AlbumArtist": "Solo Artist", "AlbumArtists": [artist], "Artists": ["Solo Artist"], "ArtistItems": [artist],
            "MediaType": "Audio",
        ]
        if let albumId {
            track["AlbumId"] = albumId
            track["Album"] = "Lost Album"
        }
        return track
    }

    @Test func videosALooseTrackAndAnAlbumWithoutItsItemAreListed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-music-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = MirrorRoot(path: folder + "/root")
        try root.prepare()
        let musicVideo = "bbbb0000000000000000000000000001"
        let homeVideo = "bbbb0000000000000000000000000002"
        try Self.write(
            root, folder: musicVideo, itemType: "MusicVideo",
            item: ["Name": "A Clip", "Id": musicVideo, "Type": "MusicVideo"],
            media: [(musicVideo, "\(musicVideo)-\(musicVideo).mp4")])
        try Self.write(
            root, folder: homeVideo, itemType: "Video", item: ["Name": "Holidays", "Id": homeVideo, "Type": "Video"],
            media: [(homeVideo, "\(homeVideo)-\(homeVideo).mkv")])
        let loose = "cccc0000000000000000000000000001"
        try Self.write(
            root, folder: loose, itemType: "MusicAlbum", item: nil,
            tracks: [Self.track(loose, name: "Single", albumId: nil, number: 1)],
            media: [(loose, "\(loose)-\(loose).mp3")])
        let album = "dddd0000000000000000000000000001"
        let (first, second) = ("eeee0000000000000000000000000001", "eeee0000000000000000000000000002")
        try Self.write(
            root, folder: album, itemType: "MusicAlbum", item: nil,
            tracks: [
                Self.track(second, name: "Second", albumId: album, number: 2),
                Self.track(first, name: "First", albumId: album, number: 1),
            ],
            media: [(first, "\(first)-\(first).flac"), (second, "\(second)-\(second).flac")])
        _ = try Mirror.rebuildIndex(root)
        let index = try MirrorIndex(path: root.indexPath)
        let catalog = try Catalog.build(root: root, index: index, serverId: "s1")

        let views = Dictionary(
            catalog.views.map { ($0.raw["CollectionType"]?.stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(Set(views.keys) == ["musicvideos", "homevideos", "music"])
        #expect(catalog.children[views["musicvideos"]?.id ?? ""] == [musicVideo])
        #expect(catalog.children[views["homevideos"]?.id ?? ""] == [homeVideo])
        #expect(catalog.item(musicVideo)?.type == "MusicVideo" && catalog.item(homeVideo)?.type == "Video")
        // The loose track stands in the music view; the album is made of what its tracks say of it.
        let music = try #require(views["music"]?.id)
        #expect(Set(catalog.children[music] ?? []) == [loose, album])
        #expect(catalog.item(loose)?.parentId == music)
        let made = try #require(catalog.item(album))
        #expect(made.type == "MusicAlbum" && made.name == "Lost Album" && made.isFolder)
        #expect(made.runTimeTicks == 3_600_000_000)
        let tracks = try ItemQuery(RequestQuery("ParentId=\(album)")).select(catalog) { _ in UserState() }
        #expect(tracks.items.map(\.id) == [first, second])
        // The artist holds both, by the id its pairs give.
        let artistId = Self.artistId
        #expect(catalog.item(artistId)?.type == "MusicArtist")
        #expect(Set(catalog.children[artistId] ?? []) == [loose, album])
    }

    @Test func aTranscodedTrackSaysItsOwnCodec() throws {
        #expect(MusicCatalog.transcode(validator: "transcode:aq:opus/128000")?.codec == "opus")
        #expect(MusicCatalog.transcode(validator: "transcode:aq:opus/128000")?.bitrate == 128_000)
        #expect(MusicCatalog.transcode(validator: "transcode:v:720p") == nil)
        #expect(MusicCatalog.transcode(validator: "\"etag\"") == nil)
        let stream: JSONObject = [
            "Codec": .string("flac"), "BitRate": .number(1_000_000), "BitDepth": .number(16), "Type": .string("Audio"),
            "Index": .number(0),
        ]
        let source: JSONObject = [
            "Id": .string("t1"), "Container": .string("flac"), "Bitrate": .number(1_000_000),
            "MediaStreams": .array([.object(stream)]),
        ]
        let item = CatalogItem(
            id: "t1", type: "Audio", name: "t", raw: ["Id": .string("t1"), "MediaSources": .array([.object(source)])])
        let version = HeldVersion(
            id: "t1", container: "ogg", file: ItemQueryTests.file, subtitles: [], transcodeCodec: "opus",
            transcodeBitrate: 128_000)
        let dto = JellyfinDTO(serverId: "s", serverName: "n", version: "10.10.7", userId: "u", userName: "n")
        let answered = dto.mediaSource(item, version)
        #expect(answered["Container"]?.stringValue == "ogg")
        #expect(answered["Bitrate"]?.intValue == 128_000)
        let audio = answered["MediaStreams"]?.arrayValue?.first
        #expect(audio?["Codec"]?.stringValue == "opus")
        #expect(audio?["BitRate"]?.intValue == 128_000)
        #expect(audio?["BitDepth"] == nil)
    }
}
