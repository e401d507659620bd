import Foundation
import MediaSyncJSON
import Testing

@testable import MediaSyncTestServer

/// Music, playlists and box sets: the library's shape and the routes per Jellyfin version.
@Suite struct MusicRouteTests {
    static let spec = TestLibrary.MusicSpec(artists: 2, albumsPerArtist: 2, discsPerAlbum: 1, tracksPerDisc: 6)

    static func makeServer(_ profile: JellyfinProfile = .newest) throws -> (TestServer, TestLibrary) {
        let library = TestLibrary(music: spec)
        let server = try TestSupport.makeServer(library)
        server.profile = profile
        return (server, library)
    }

    static func get(_ server: TestServer, _ path: String, headers: [(String, String)] = []) throws -> RawResponse {
        try TestSupport.request(server, path, headers: [TestSupport.authHeader(server.library.accessToken)] + headers)
    }

    static func items(_ response: RawResponse) -> [JSONValue] {
        guard case .array(let items)? = response.json?["Items"] else { return [] }
        return items
    }

    static func ids(_ response: RawResponse) -> [String] {
        items(response).compactMap { $0["Id"]?.stringValue }
    }

    @Test func musicIsOptInAndDeterministic() throws {
        let plain = TestLibrary()
        let withMusic = TestLibrary(music: Self.spec)
        #expect(plain.views.count == 2)
        #expect(plain.musicIds == nil)
        #expect(plain.tracks.isEmpty)
        // The video part is unchanged by music.
        #expect(Array(withMusic.views.prefix(2)) == plain.views)
        #expect(Array(withMusic.items.prefix(plain.items.count)) == plain.items)
        #expect(withMusic.views.map(\.collectionType) == ["movies", "tvshows", "music", "playlists", "boxsets"])
        #expect(withMusic.views[3].type == "ManualPlaylistsFolder")
        #expect(withMusic.views[4].name == "Collections")
        #expect(withMusic == TestLibrary(music: Self.spec))
        #expect(withMusic.tracks.count == Self.spec.trackCount)
        #expect(withMusic.albums.count == 4)
        // Two folder artists with albums, the one without, and the by-name guest.
        #expect(withMusic.musicArtists.count == 4)
        let ids = try #require(withMusic.musicIds)
        #expect(ids.twoDiscAlbumId != nil && ids.guestArtistId != nil && ids.guestAlbumId != nil)
        #expect(ids.timedLyricsTrackId != nil && ids.plainLyricsTrackId != nil)
        #expect(ids.playlistId != nil && ids.boxSetId != nil && ids.artistWithoutAlbumsId != nil)
        var added = TestLibrary()
        added.addMusic(Self.spec)
        #expect(added == withMusic)
        added.addMusic(Self.spec)
        #expect(added == withMusic)
        #expect(TestLibrary(seed: 2, music: Self.spec).musicIds?.playlistId != ids.playlistId)
    }

    @Test func albumTracksComeInDiscAndTrackOrder() throws {
        let (server, library) = try Self.makeServer(.v10_10)
        defer { server.shutdown() }
        let albumId = try #require(library.musicIds?.twoDiscAlbumId)
        let album = try #require(library.item(withId: albumId))
        let sorted = try Self.get(
            server,
            "/Items?userId=\(library.userId)&ParentId=\(albumId)&Recursive=true&IncludeItemTypes=Audio"
                + "&SortBy=ParentIndexNumber,IndexNumber,SortName&Fields=SortName,MediaSources,ParentId")
        #expect(sorted.status == 200)
        let tracks = Self.items(sorted)
        let positions = tracks.map { [$0["ParentIndexNumber"]?.intValue ?? -1, $0["IndexNumber"]?.intValue ?? -1] }
        #expect(positions == [[1, 1], [1, 2], [1, 3], [2, 1], [2, 2], [2, 3]])
        #expect(tracks.first?["SortName"]?.stringValue == "0001 - 0001 - Track 1 (Disc 1)")
        // Unsorted, 10.10 answers library order: the files sort by name, so the discs interleave.
        let unsorted = try Self.get(
            server, "/Items?userId=\(library.userId)&ParentId=\(albumId)&Recursive=true&IncludeItemTypes=Audio")
        #expect(
            Self.items(unsorted).map { $0["ParentIndexNumber"]?.intValue ?? -1 } == [1, 2, 1, 2, 1, 2])
        // SortName alone sorts by disc and track too.
        let bySortName = try Self.get(
            server,
            "/Items?userId=\(library.userId)&ParentId=\(albumId)&Recursive=true&IncludeItemTypes=Audio&SortBy=SortName")
        #expect(Self.ids(bySortName) == Self.ids(sorted))

        let track = try #require(tracks.first)
        #expect(track["Type"]?.stringValue == "Audio")
        #expect(track["MediaType"]?.stringValue == "Audio")
        #expect(track["IsFolder"] == .bool(false))
        #expect(track["ParentId"]?.stringValue == albumId)
        #expect(track["AlbumId"]?.stringValue == albumId)
        #expect(track["Album"]?.stringValue == album.name)
        #expect(track["AlbumPrimaryImageTag"]?.stringValue == album.imageTags["Primary"])
        #expect(track["AlbumArtist"]?.stringValue == "Test Artist 1")
        #expect(track["AlbumArtists"]?[0]?["Id"]?.stringValue == album.parentId)
        #expect(track["ArtistItems"]?[0]?["Id"]?.stringValue == album.parentId)
        #expect(track["Artists"] == .array([.string("Test Artist 1")]))
        #expect(track["Container"]?.stringValue == "flac")
        #expect(track["RunTimeTicks"]?.intValue != nil)
        #expect(track["HasLyrics"] == .bool(true))
        let source = try #require(track["MediaSources"]?[0])
        #expect(source["Container"]?.stringValue == "flac")
        #expect(source["Id"]?.stringValue == track["Id"]?.stringValue)
        #expect(source["MediaStreams"]?[0]?["Type"]?.stringValue == "Audio")
        #expect(source["MediaStreams"]?[0]?["Codec"]?.stringValue == "flac")
        #expect(source["MediaStreams"]?[0]?["Channels"] == .integer(2))
        #expect(source["MediaStreams"]?[0]?["SampleRate"] == .integer(44_100))
        #expect(source["MediaStreams"]?[1]?["Type"]?.stringValue == "Lyric")
        #expect(source["Bitrate"] == .integer(1_000_000))

        // The album: artists, year, image, child count.
        let albums = try Self.get(
            server, "/Items?userId=\(library.userId)&ids=\(albumId)&Fields=ChildCount,RecursiveItemCount")
        let dto = try #require(Self.items(albums).first)
        #expect(dto["Type"]?.stringValue == "MusicAlbum")
        #expect(dto["IsFolder"] == .bool(true))
        #expect(dto["ProductionYear"] == .integer(album.productionYear ?? 0))
        #expect(dto["ImageTags"]?["Primary"]?.stringValue == album.imageTags["Primary"])
        #expect(dto["AlbumArtist"]?.stringValue == "Test Artist 1")
        #expect(dto["ChildCount"] == .integer(6))
        #expect(dto["RecursiveItemCount"] == .integer(6))
    }

    @Test func artistFiltersMatchByNameAndRole() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let ids = try #require(library.musicIds)
        let guest = try #require(ids.guestArtistId)
        let guestAlbum = try #require(ids.guestAlbumId)
        let guestTrack = try #require(ids.guestTrackId)
        let base = "/Items?userId=\(library.userId)&Recursive=true"
        func albums(_ query: String) throws -> [String] {
            Self.ids(try Self.get(server, "\(base)&IncludeItemTypes=MusicAlbum&\(query)"))
        }
        #expect(try albums("ArtistIds=\(guest)") == [guestAlbum])
        #expect(try albums("AlbumArtistIds=\(guest)") == [])
        #expect(try albums("ContributingArtistIds=\(guest)") == [guestAlbum])
        let tracks = try Self.get(server, "\(base)&IncludeItemTypes=Audio&ContributingArtistIds=\(guest)")
        #expect(Self.ids(tracks) == [guestTrack])
        let guestDTO = try #require(Self.items(tracks).first)
        #expect(guestDTO["Artists"] == .array([.string("Test Artist 1"), .string("Guest Star")]))
        #expect(guestDTO["ArtistItems"]?[1]?["Id"]?.stringValue == guest)
        #expect(guestDTO["AlbumArtist"]?.stringValue == "Test Artist 1")

        let first = library.musicArtists[0]
        let second = library.musicArtists[1]
        let ownAlbums = library.children(of: first.id).map(\.id)
        #expect(ownAlbums.count == 2)
        // `ArtistIds` with exactly MusicAlbum and no SortBy: newest first.
        let byYear = library.children(of: first.id).sorted { ($0.productionYear ?? 0) > ($1.productionYear ?? 0) }
        #expect(try albums("ArtistIds=\(first.id)") == byYear.map(\.id))
        #expect(Set(try albums("AlbumArtistIds=\(first.id)")) == Set(ownAlbums))
        #expect(try albums("ContributingArtistIds=\(first.id)") == [])
        // Several ids are OR-ed.
        #expect(Set(try albums("ArtistIds=\(first.id),\(second.id)")) == Set(library.albums.map(\.id)))
        // An artist without albums has none.
        let lonely = try #require(ids.artistWithoutAlbumsId)
        #expect(try albums("AlbumArtistIds=\(lonely)") == [])
        #expect(Self.ids(try Self.get(server, "/Items?userId=\(library.userId)&ParentId=\(lonely)")) == [])
        // By name, without case: a track tagged "GUEST STAR" is the guest's.
        server.updateLibrary { library in
            guard let position = library.items.firstIndex(where: { $0.id == guestTrack }) else { return }
            library.items[position].artists = ["Test Artist 1", "GUEST STAR"]
        }
        #expect(Self.ids(try Self.get(server, "\(base)&IncludeItemTypes=Audio&ArtistIds=\(guest)")) == [guestTrack])
    }

    @Test func searchTypesAndSpecialParents() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let ids = try #require(library.musicIds)
        let playlistId = try #require(ids.playlistId)
        let boxSetId = try #require(ids.boxSetId)
        let base = "/Items?userId=\(library.userId)&Recursive=true"
        let search = try Self.get(server, "\(base)&IncludeItemTypes=MusicAlbum&SearchTerm=test%20album%203")
        #expect(Self.items(search).map { $0["Name"]?.stringValue } == ["Test Album 3"])
        // Folder artists only: the by-name guest is in no library.
        let artists = try Self.get(server, "\(base)&IncludeItemTypes=MusicArtist")
        #expect(Set(Self.ids(artists)) == Set(library.musicArtists.filter { $0.parentId != nil }.map(\.id)))
        #expect(Self.ids(try Self.get(server, "\(base)&IncludeItemTypes=Playlist")) == [playlistId])
        // A playlists folder parent lists playlists, recursive or not.
        #expect(
            Self.ids(try Self.get(server, "/Items?userId=\(library.userId)&ParentId=\(ids.playlistsViewId)")) == [
                playlistId
            ])
        // A query for exactly BoxSet drops its parent.
        #expect(
            Self.ids(
                try Self.get(server, "\(base)&ParentId=\(ids.musicViewId)&IncludeItemTypes=BoxSet")) == [boxSetId])
        #expect(
            Self.ids(try Self.get(server, "/Items?userId=\(library.userId)&ParentId=\(ids.boxSetsViewId)")) == [
                boxSetId
            ])
        // A playlist's children: each item once, in playlist order; its ChildCount counts them.
        let playlist = try #require(library.item(withId: playlistId))
        var distinct: [String] = []
        for entry in playlist.linkedChildren where !distinct.contains(entry.itemId) { distinct.append(entry.itemId) }
        #expect(playlist.linkedChildren.count == distinct.count + 1)
        #expect(Self.ids(try Self.get(server, "/Items?userId=\(library.userId)&ParentId=\(playlistId)")) == distinct)
        let dto = try Self.get(server, "/Items?userId=\(library.userId)&ids=\(playlistId)&Fields=ChildCount")
        #expect(Self.items(dto).first?["ChildCount"] == .integer(distinct.count))
        #expect(Self.items(dto).first?["MediaType"]?.stringValue == "Audio")
        #expect(Self.items(dto).first?["Type"]?.stringValue == "Playlist")
        // Views: all five.
        let views = try Self.get(server, "/UserViews?userId=\(library.userId)")
        #expect(
            Self.items(views).compactMap { $0["CollectionType"]?.stringValue } == [
                "movies", "tvshows", "music", "playlists", "boxsets",
            ])
    }

    @Test(arguments: JellyfinProfile.allCases)
    func playlistEntriesAndTheirIds(_ profile: JellyfinProfile) throws {
        let (server, library) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let playlistId = try #require(library.musicIds?.playlistId)
        let expected = try #require(library.item(withId: playlistId)).linkedChildren.map(\.itemId)
        let path = "/Playlists/\(playlistId)/Items?userId=\(library.userId)"
        let first = try Self.get(server, path)
        #expect(first.status == 200)
        #expect(Self.ids(first) == expected)
        #expect(first.json?["TotalRecordCount"] == .integer(expected.count))
        #expect(first.json?["StartIndex"] == .integer(0))
        let entryIds = Self.items(first).compactMap { $0["PlaylistItemId"]?.stringValue }
        #expect(entryIds.count == expected.count)
        server.updateLibrary { $0.reloadPlaylists() }
        let reloaded = Self.items(try Self.get(server, path)).compactMap { $0["PlaylistItemId"]?.stringValue }
        switch profile {
        case .v10_8, .v10_9:
            // A random id per entry and load: distinct even for the track listed twice, all new after a reload.
            #expect(Set(entryIds).count == expected.count)
            #expect(entryIds != expected)
            #expect(Set(reloaded).isDisjoint(with: entryIds))
            #expect(Self.ids(try Self.get(server, path)) == expected)
        case .v10_10, .v10_11:
            #expect(entryIds == expected)
            #expect(reloaded == entryIds)
        }
        // Paging.
        let page = try Self.get(server, path + "&StartIndex=1&Limit=2")
        #expect(Self.ids(page) == Array(expected[1...2]))
        #expect(page.json?["TotalRecordCount"] == .integer(expected.count))
        #expect(page.json?["StartIndex"] == .integer(1))
        // Without userId: 10.8 requires it, 10.9+ take the token's user.
        let noUser = try Self.get(server, "/Playlists/\(playlistId)/Items")
        if profile == .v10_8 {
            #expect(noUser.status == 400)
            #expect(noUser.headers["content-type"] == "application/problem+json; charset=utf-8")
            #expect(noUser.json?["errors"]?["userId"] != nil)
        } else {
            #expect(noUser.status == 200)
            #expect(Self.ids(noUser) == expected)
        }
        // An unknown id, and an album's id.
        let unknown = try Self.get(server, "/Playlists/00000000000000000000000000000001/Items?userId=\(library.userId)")
        let album = try Self.get(server, "/Playlists/\(library.albums[0].id)/Items?userId=\(library.userId)")
        #expect(unknown.status == 404)
        if profile == .v10_8 {
            #expect(unknown.json?["status"] == .integer(404))
            #expect(album.status == 500)
        } else {
            #expect(unknown.json == .string("Playlist not found"))
            #expect(album.status == 404)
        }
        #expect(try TestSupport.request(server, path).status == 401)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func playlistEntriesUserCannotSeeOrWhoseItemIsGone(_ profile: JellyfinProfile) throws {
        let (server, library) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let playlistId = try #require(library.musicIds?.playlistId)
        let movie = try #require(library.movies.first)
        let stored = try #require(library.item(withId: playlistId)).linkedChildren.map(\.itemId)
        server.updateLibrary { library in
            library.addLinkedEntries(to: playlistId, itemIds: [movie.id])
            library.inaccessibleViews = [library.moviesViewId]
        }
        let path = "/Playlists/\(playlistId)/Items?userId=\(library.userId)"
        let listed = try Self.get(server, path)
        switch profile {
        case .v10_8, .v10_9:
            #expect(Self.ids(listed) == stored + [movie.id])
            #expect(listed.json?["TotalRecordCount"] == .integer(stored.count + 1))
        case .v10_10, .v10_11:
            #expect(Self.ids(listed) == stored)
            #expect(listed.json?["TotalRecordCount"] == .integer(stored.count))
            // GET /Playlists/{id} lists every stored entry, visible or not.
            let dto = try Self.get(server, "/Playlists/\(playlistId)")
            #expect(dto.json?["ItemIds"] == .array((stored + [movie.id]).map { .string($0) }))
        }
        // An entry whose track was removed is skipped on every version.
        let gone = stored[1]
        server.updateLibrary { $0.removeTrack(withId: gone) }
        let after = Self.ids(try Self.get(server, path))
        #expect(!after.contains(gone))
        #expect(after.count == (profile == .v10_8 || profile == .v10_9 ? stored.count : stored.count - 1))
    }

    @Test(arguments: JellyfinProfile.allCases)
    func getPlaylist(_ profile: JellyfinProfile) throws {
        let (server, library) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let playlistId = try #require(library.musicIds?.playlistId)
        let response = try Self.get(server, "/Playlists/\(playlistId)")
        switch profile {
        case .v10_8:
            #expect(response.status == 404)
            #expect(response.body.isEmpty)
        case .v10_9:
            #expect(response.status == 405)
            #expect(response.headers["allow"] == "POST")
        case .v10_10, .v10_11:
            #expect(response.status == 200)
            #expect(response.json?["OpenAccess"] == .bool(false))
            #expect(response.json?["Shares"] == .array([]))
            let stored = try #require(library.item(withId: playlistId)).linkedChildren.map {
                JSONValue.string($0.itemId)
            }
            #expect(response.json?["ItemIds"] == .array(stored))
            let unknown = try Self.get(server, "/Playlists/\(library.albums[0].id)")
            #expect(unknown.status == 404)
            #expect(unknown.json == .string("Playlist not found"))
            #expect(try TestSupport.request(server, "/Playlists/\(playlistId)").status == 401)
        }
    }

    @Test func playlistMutators() throws {
        let (server, library) = try Self.makeServer(.v10_9)
        defer { server.shutdown() }
        let playlistId = try #require(library.musicIds?.playlistId)
        let path = "/Playlists/\(playlistId)/Items?userId=\(library.userId)"
        let before = Self.items(try Self.get(server, path))
        server.updateLibrary { $0.moveLinkedEntry(of: playlistId, from: 0, to: 2) }
        let moved = Self.items(try Self.get(server, path))
        #expect(moved.map { $0["Id"] } == [before[1], before[2], before[0], before[3], before[4]].map { $0["Id"] })
        // Within one load an entry keeps its PlaylistItemId when moved.
        #expect(moved[2]["PlaylistItemId"] == before[0]["PlaylistItemId"])
        server.updateLibrary { $0.removeLinkedEntries(from: playlistId, at: [0]) }
        #expect(Self.items(try Self.get(server, path)).count == 4)
        let track = library.tracks[3].id
        server.updateLibrary { $0.addLinkedEntries(to: playlistId, itemIds: [track, track]) }
        let grown = Self.items(try Self.get(server, path))
        #expect(grown.suffix(2).map { $0["Id"]?.stringValue } == [track, track])
        #expect(grown[4]["PlaylistItemId"] != grown[5]["PlaylistItemId"])
    }

    @Test func albumAndTrackMutators() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let ids = try #require(library.musicIds)
        let artist = library.musicArtists[1]
        var albumId: String?
        server.updateLibrary { albumId = $0.addAlbum(toArtist: artist.id, name: "Kind of Blue", year: 1959, tracks: 5) }
        let newAlbum = try #require(albumId)
        let found = try Self.get(
            server,
            "/Items?userId=\(library.userId)&Recursive=true&IncludeItemTypes=MusicAlbum&SearchTerm=kind%20of%20blue")
        #expect(Self.ids(found) == [newAlbum])
        let byArtist = try Self.get(
            server, "/Items?userId=\(library.userId)&Recursive=true&IncludeItemTypes=MusicAlbum&ArtistIds=\(artist.id)")
        #expect(Self.ids(byArtist).last == newAlbum)
        #expect(server.library.tracks(ofAlbum: newAlbum).count == 5)
        // Removing the guest's track takes the guest off the album.
        let guestAlbum = try #require(ids.guestAlbumId)
        let guestTrack = try #require(ids.guestTrackId)
        #expect(server.library.item(withId: guestAlbum)?.artists.contains("Guest Star") == true)
        server.updateLibrary { $0.removeTrack(withId: guestTrack) }
        #expect(server.library.item(withId: guestAlbum)?.artists == ["Test Artist 1"])
        let guest = try #require(ids.guestArtistId)
        #expect(
            Self.ids(
                try Self.get(
                    server,
                    "/Items?userId=\(library.userId)&Recursive=true&IncludeItemTypes=MusicAlbum&ArtistIds=\(guest)"
                )) == [])
    }

    @Test(arguments: JellyfinProfile.allCases)
    func lyrics(_ profile: JellyfinProfile) throws {
        let (server, library) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let ids = try #require(library.musicIds)
        let timed = try #require(ids.timedLyricsTrackId)
        let plain = try #require(ids.plainLyricsTrackId)
        let without = try #require(library.tracks.first { $0.lyrics == nil }?.id)
        let timedResponse = try Self.get(server, "/Audio/\(timed)/Lyrics")
        let trackDTO = try Self.get(server, "/Users/\(library.userId)/Items/\(timed)")
        if profile == .v10_8 {
            #expect(timedResponse.status == 404)
            #expect(timedResponse.body.isEmpty)
            #expect(trackDTO.json?["HasLyrics"] == nil)
            #expect(trackDTO.json?["MediaStreams"]?[1] == nil)
            return
        }
        #expect(timedResponse.status == 200)
        #expect(trackDTO.json?["HasLyrics"] == .bool(true))
        #expect(trackDTO.json?["MediaStreams"]?[1]?["Type"]?.stringValue == "Lyric")
        let withoutDTO = try Self.get(server, "/Users/\(library.userId)/Items/\(without)")
        #expect(withoutDTO.json?["HasLyrics"] == .bool(false))
        guard case .array(let lines)? = timedResponse.json?["Lyrics"] else {
            Issue.record("no lyrics")
            return
        }
        #expect(lines.count == 4)
        #expect(lines.first?["Start"] == .int(120_000_000))
        #expect(lines.first?["Text"]?.stringValue?.hasPrefix("First line of ") == true)
        let metadata = timedResponse.json?["Metadata"]
        if profile == .v10_9 {
            #expect(metadata?["Artist"]?.stringValue == "Test Artist 1")
            #expect(metadata?["Title"] != nil)
        } else {
            #expect(metadata == .object([]))
        }
        #expect((lines.first?["Cues"] == .array([])) == (profile == .v10_11))

        let plainResponse = try Self.get(server, "/Audio/\(plain)/Lyrics")
        #expect(plainResponse.status == 200)
        guard case .array(let plainLines)? = plainResponse.json?["Lyrics"] else {
            Issue.record("no plain lyrics")
            return
        }
        #expect(plainLines.map { $0["Text"]?.stringValue } == ["A plain line", "Another plain line", "The end"])
        #expect(plainLines.allSatisfy { $0["Start"] == nil && $0["Cues"] == nil })

        for id in [without, "00000000000000000000000000000002", library.albums[0].id] {
            let missing = try Self.get(server, "/Audio/\(id)/Lyrics")
            #expect(missing.status == 404)
            #expect(missing.headers["content-type"] == "application/problem+json; charset=utf-8")
            #expect(missing.json?["title"]?.stringValue == "Not Found")
        }
        #expect(try TestSupport.request(server, "/Audio/\(timed)/Lyrics").status == 401)
    }

    @Test func universalAudioServesTheFileWhenAContainerTakesIt() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let flac = try #require(library.tracks.first { $0.mediaSources.first?.container == "flac" })
        let mp3 = try #require(library.tracks.first { $0.mediaSources.first?.container == "mp3" })
        let source = flac.mediaSources[0]
        let bytes = try #require(library.mediaBytes(forMediaSourceId: source.id))
        let path = "/Audio/\(flac.id)/universal?UserId=\(library.userId)&DeviceId=d&Container=opus,flac%7Cflac,mp3"
        let direct = try Self.get(server, path)
        #expect(direct.status == 200)
        #expect(direct.headers["accept-ranges"] == "bytes")
        #expect(direct.headers["content-length"] == String(source.size))
        #expect(direct.headers["content-type"] == "audio/flac")
        #expect(direct.headers["last-modified"] != nil)
        #expect(direct.headers["transfer-encoding"] == nil)
        #expect(TestSupport.same(direct.body, bytes))
        let ranged = try Self.get(server, path, headers: [("Range", "bytes=100-")])
        #expect(ranged.status == 206)
        #expect(TestSupport.same(ranged.body, Array(bytes[100...])))
        let mp3Direct = try Self.get(server, "/Audio/\(mp3.id)/universal?Container=mp3")
        #expect(mp3Direct.headers["content-type"] == "audio/mpeg")
        #expect(TestSupport.same(mp3Direct.body, library.mediaBytes(forMediaSourceId: mp3.id) ?? []))
        // A codec the entry does not list, or a bit rate over the limit, is a transcode.
        let wrongCodec = try Self.get(server, "/Audio/\(flac.id)/universal?Container=flac%7Calac&AudioCodec=mp3")
        #expect(wrongCodec.headers["accept-ranges"] == "none")
        let tooFast = try Self.get(server, "\(path)&MaxStreamingBitrate=500000&AudioCodec=mp3")
        #expect(tooFast.headers["accept-ranges"] == "none")
        #expect(tooFast.headers["content-type"] == "audio/mpeg")
        // `/Items/{id}/File` serves the file without the Download permission.
        server.updateLibrary { $0.userMayDownload = false }
        let file = try Self.get(server, "/Items/\(flac.id)/File", headers: [("Range", "bytes=0-99")])
        #expect(file.status == 206)
        #expect(file.headers["content-type"] == "audio/flac")
        #expect(TestSupport.same(file.body, Array(bytes[0..<100])))
        #expect(try Self.get(server, "/Items/\(flac.id)/Download").status == 403)
        server.updateLibrary { $0.userMayDownload = true }
        // Downloads are the same bytes.
        let download = try Self.get(server, "/Items/\(flac.id)/Download")
        #expect(download.headers["content-type"] == "audio/flac")
        #expect(download.headers["content-disposition"] == "attachment; filename=\"\(source.name).flac\"")
        #expect(TestSupport.same(download.body, bytes))
    }

    @Test func universalAudioTranscodesProgressively() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let track = try #require(library.tracks.first { $0.mediaSources.first?.container == "flac" })
        let ticks = track.mediaSources[0].runTimeTicks
        func expectedLength(_ bitrate: Int) -> Int { Int(Int64(bitrate) * ticks / 80_000_000) }
        let base = "/Audio/\(track.id)/universal?UserId=\(library.userId)&DeviceId=d&TranscodingProtocol=http"
        // Stereo mp3 at 320 kbit/s is capped at 256 kbit/s.
        let mp3 = try Self.get(server, "\(base)&AudioCodec=mp3&TranscodingContainer=mp3&AudioBitRate=320000")
        #expect(mp3.status == 200)
        #expect(mp3.headers["transfer-encoding"] == "chunked")
        #expect(mp3.headers["content-length"] == nil)
        #expect(mp3.headers["accept-ranges"] == "none")
        #expect(mp3.headers["content-type"] == "audio/mpeg")
        #expect(mp3.body.count == expectedLength(256_000))
        // The same request gives the same bytes; a Range is not looked at.
        let again = try Self.get(
            server, "\(base)&AudioCodec=mp3&TranscodingContainer=mp3&AudioBitRate=320000",
            headers: [("Range", "bytes=10-")])
        #expect(again.status == 200)
        #expect(TestSupport.same(again.body, mp3.body))
        let opus = try Self.get(server, "\(base)&AudioCodec=opus&TranscodingContainer=ogg&AudioBitRate=128000")
        #expect(opus.headers["content-type"] == "audio/ogg")
        #expect(opus.body.count == expectedLength(128_000))
        let aac = try Self.get(server, "\(base)&AudioCodec=aac&TranscodingContainer=aac&MaxStreamingBitrate=96000")
        #expect(aac.headers["content-type"] == "audio/aac")
        #expect(aac.body.count == expectedLength(96_000))
        // No bit rate asked for: the cap; mono output: 128 kbit/s.
        let capped = try Self.get(server, "\(base)&AudioCodec=mp3&TranscodingContainer=mp3")
        #expect(capped.body.count == expectedLength(256_000))
        let mono = try Self.get(server, "\(base)&AudioCodec=mp3&TranscodingContainer=mp3&MaxAudioChannels=1")
        #expect(mono.body.count == expectedLength(128_000))
        // FLAC output keeps the source's bit rate.
        let lossless = try Self.get(server, "\(base)&AudioCodec=flac&TranscodingContainer=flac&AudioBitRate=128000")
        #expect(lossless.headers["content-type"] == "audio/flac")
        #expect(lossless.body.count == expectedLength(1_000_000))
        // HEAD: headers only.
        let head = try TestSupport.request(
            server, "HEAD", "\(base)&AudioCodec=mp3&TranscodingContainer=mp3",
            headers: [TestSupport.authHeader(library.accessToken)])
        #expect(head.status == 200)
        #expect(head.headers["accept-ranges"] == "none")
        #expect(head.body.isEmpty)
        // HLS answers a master playlist.
        let hls = try Self.get(
            server, "/Audio/\(track.id)/universal?AudioCodec=aac&TranscodingContainer=ts&TranscodingProtocol=hls")
        #expect(hls.status == 200)
        #expect(hls.headers["content-type"] == "application/vnd.apple.mpegurl")
        #expect(hls.text.hasPrefix("#EXTM3U"))
        // Errors per version.
        #expect(try Self.get(server, "\(base)&TranscodingProtocol=smoke").status == 400)
        #expect(try Self.get(server, "/Audio/00000000000000000000000000000003/universal").status == 404)
        server.profile = .v10_8
        #expect(try Self.get(server, "/Audio/00000000000000000000000000000003/universal").status == 400)
        #expect(try Self.get(server, "\(base)&TranscodingProtocol=smoke&AudioCodec=mp3").status == 200)
        // 10.8 counts the input's channels for the cap.
        #expect(
            TestServer.transcodeBitrate(
                codec: "mp3", requested: nil, sourceBitrate: 384_000, inputChannels: 6, maxChannels: 2,
                profile: .v10_8) == 640_000)
        #expect(
            TestServer.transcodeBitrate(
                codec: "mp3", requested: nil, sourceBitrate: 384_000, inputChannels: 6, maxChannels: 2,
                profile: .v10_9) == 256_000)
        #expect(try TestSupport.request(server, base).status == 401)
    }

    /// A transcode cut short by a fault ends without its last chunk: a client sees the body is incomplete.
    @Test func aTruncatedTranscodeLacksItsLastChunk() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let track = library.tracks[0]
        let path = "/Audio/\(track.id)/universal"
        let query = "?AudioCodec=mp3&TranscodingContainer=mp3"
        let whole = try Self.get(server, path + query)
        server.inject(.truncate(afterBytes: 1000), path: path)
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", path + query, headers: [TestSupport.authHeader(library.accessToken)])
        let head = try connection.readHead()
        #expect(head.status == 200)
        #expect(head.headers["transfer-encoding"] == "chunked")
        let rest = connection.readUntilEnd()
        #expect(rest.end == 0)
        // One chunk header, then 1,000 bytes of the body and nothing more.
        let text = String(decoding: rest.bytes.prefix(16), as: UTF8.self)
        let sizeLine = try #require(text.split(separator: "\r\n").first)
        #expect(Int(sizeLine, radix: 16) ?? 0 > 1000)
        #expect(TestSupport.same(Array(rest.bytes.dropFirst(sizeLine.count + 2)), Array(whole.body.prefix(1000))))
    }

    @Test(arguments: JellyfinProfile.allCases)
    func boxSetChildren(_ profile: JellyfinProfile) throws {
        let (server, library) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let boxSetId = try #require(library.musicIds?.boxSetId)
        let movie = try #require(library.movies.first)
        let series = try #require(library.series.first)
        let album = library.albums[0]
        let path = "/Items?userId=\(library.userId)&ParentId=\(boxSetId)"
        // PremiereDate order on every version: the album (1990), the movie (2000), the series (2010).
        #expect(Self.ids(try Self.get(server, path)) == [album.id, movie.id, series.id])
        server.updateLibrary { $0.setDisplayOrder(of: boxSetId, "Default") }
        let stored = Self.ids(try Self.get(server, path))
        if profile == .v10_8 || profile == .v10_9 {
            #expect(stored == [album.id, movie.id, series.id])
        } else {
            #expect(stored == [movie.id, series.id, album.id])
        }
        // An explicit SortBy sorts again; a library the user lost drops its item.
        let byName = Self.items(try Self.get(server, path + "&SortBy=SortName"))
        #expect(byName.compactMap { $0["Name"]?.stringValue } == [album.name, movie.name, series.name].sorted())
        server.updateLibrary { $0.inaccessibleViews = [$0.moviesViewId] }
        #expect(!Self.ids(try Self.get(server, path)).contains(movie.id))
        let boxSets = try Self.get(server, "/Items?userId=\(library.userId)&Recursive=true&IncludeItemTypes=BoxSet")
        #expect(Self.ids(boxSets) == [boxSetId])
    }

    @Test func musicItemsWorkWithTheExistingRoutes() throws {
        let (server, library) = try Self.makeServer()
        defer { server.shutdown() }
        let track = library.tracks[0]
        let album = library.albums[0]
        let byId = try Self.get(server, "/Items/\(track.id)")
        #expect(byId.status == 200)
        #expect(byId.json?["MediaSources"]?[0]?["Container"]?.stringValue == "flac")
        #expect(byId.json?["UserData"]?["Key"]?.stringValue?.hasSuffix(track.name) == true)
        let tag = try #require(album.imageTags["Primary"])
        let image = try TestSupport.request(server, "/Items/\(album.id)/Images/Primary?tag=\(tag)")
        #expect(image.status == 200)
        let both = try Self.get(server, "/Items?userId=\(library.userId)&ids=\(track.id),\(album.id)")
        #expect(Set(Self.ids(both)) == [track.id, album.id])
        let info = try Self.get(server, "/Items/\(track.id)/PlaybackInfo?userId=\(library.userId)")
        #expect(info.json?["MediaSources"]?[0]?["Id"]?.stringValue == track.id)
        let posted = try TestSupport.request(
            server, "POST", "/Items/\(track.id)/PlaybackInfo?userId=\(library.userId)",
            headers: [TestSupport.authHeader(library.accessToken)], body: Array(#"{"DeviceProfile":{}}"#.utf8))
        #expect(posted.json?["MediaSources"]?[0]?["SupportsDirectPlay"] == .bool(true))
        // 10.8: only the user route, and no HasLyrics.
        server.profile = .v10_8
        #expect(try Self.get(server, "/Items/\(track.id)").status == 405)
        let legacy = try Self.get(server, "/Users/\(library.userId)/Items/\(track.id)")
        #expect(legacy.status == 200)
        #expect(legacy.json?["HasLyrics"] == nil)
        #expect(legacy.json?["MediaStreams"]?[0]?["AudioSpatialFormat"] == nil)
    }

    @Test func aLargeMusicLibraryHasItsCounts() throws {
        let spec = TestLibrary.MusicSpec(artists: 100, albumsPerArtist: 20, tracksPerDisc: 10, mediaSize: 1024)
        let library = TestLibrary(movies: 0, series: 0, music: spec)
        #expect(library.tracks.count == 20_000)
        let server = try TestSupport.makeServer(library)
        defer { server.shutdown() }
        let page = try Self.get(
            server,
            "/Items?userId=\(library.userId)&Recursive=true&IncludeItemTypes=Audio&SortBy=SortName&StartIndex=19990&Limit=50"
        )
        #expect(page.json?["TotalRecordCount"] == .integer(20_000))
        #expect(Self.items(page).count == 10)
    }
}

extension JSONValue {
    /// The element at `index` of an array.
    fileprivate subscript(index: Int) -> JSONValue? {
        guard case .array(let values) = self, values.indices.contains(index) else { return nil }
        return values[index]
    }
}
