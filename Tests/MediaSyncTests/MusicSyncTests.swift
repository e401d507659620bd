import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// Albums, artists, playlists and collections mirrored from the test server at every Jellyfin version it models.
@Suite struct MusicSyncTests {
    /// One movie, one series and the music (two artists of two albums of six tracks; the first album on two discs 1–3
    /// twice, with lyrics; a guest on one track; a playlist with a track twice; a box set).
    static func library() -> TestLibrary {
        TestLibrary(
            movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 4_000, seed: 7,
            music: TestLibrary.MusicSpec(tracksPerDisc: 6, mediaSize: 3_000))
    }

    static func ids(_ library: TestLibrary) throws -> TestLibrary.MusicIds {
        try #require(library.musicIds)
    }

    /// The `metadata.json` at `path`, decoded.
    static func metadata(_ fixture: MirrorFixture, _ path: String) throws -> DownloadMetadata {
        let bytes = try #require(fixture.bytes(path), "no \(path)")
        return try JSONDecoder().decode(DownloadMetadata.self, from: Data(bytes))
    }

    @Test(arguments: JellyfinProfile.allCases)
    func anAlbumOfTwoDiscsWithItsLyricsAndCover(_ profile: JellyfinProfile) async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let albumId = try #require(ids.twoDiscAlbumId)
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.album, albumId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        let tracks = library.tracks(ofAlbum: albumId)
        #expect(tracks.count == 6)
        let folder = "Downloads/\(albumId)"
        let tree = Set(fixture.tree())
        for track in tracks {
            let source = track.mediaSources[0]
            let path = "\(folder)/\(track.id)-\(source.id).\(source.container)"
            #expect(tree.contains(path), "\(path)")
            #expect(fixture.bytes(path) == library.mediaBytes(forMediaSourceId: source.id))
        }
        #expect(tree.contains("\(folder)/Images/Primary.jpeg"))
        // metadata.json: the album, its tracks in disc and track order (1-1, 1-2, 1-3, 2-1, 2-2, 2-3).
        let metadata = try Self.metadata(fixture, "\(folder)/metadata.json")
        #expect(metadata.itemId == albumId)
        #expect(metadata.itemType == "MusicAlbum")
        let order = (metadata.tracks ?? []).map {
            ($0["ParentIndexNumber"]?.intValue ?? -1, $0["IndexNumber"]?.intValue ?? -1)
        }
        #expect(order.map { "\($0.0)-\($0.1)" } == ["1-1", "1-2", "1-3", "2-1", "2-2", "2-3"])
        #expect(metadata.versions.count == 6)
        #expect(Set(metadata.versions.compactMap(\.itemId)) == Set(tracks.map(\.id)))
        // Lyrics: timed and plain from 10.9; 10.8 has none and is asked nothing.
        let timed = try #require(ids.timedLyricsTrackId)
        let plain = try #require(ids.plainLyricsTrackId)
        let lyricsRequests = fixture.server.allRequests.filter { $0.path.lowercased().hasSuffix("/lyrics") }
        if profile == .v10_8 {
            #expect(!tree.contains { $0.hasSuffix(".lrc") })
            #expect(lyricsRequests.isEmpty)
        } else {
            let timedText = String(decoding: try #require(fixture.bytes("\(folder)/\(timed).lrc")), as: UTF8.self)
            #expect(timedText.split(separator: "\n").contains { $0.hasPrefix("[00:") })
            let plainText = String(decoding: try #require(fixture.bytes("\(folder)/\(plain).lrc")), as: UTF8.self)
            #expect(!plainText.isEmpty && !plainText.contains("[0"))
            #expect(lyricsRequests.count == 2)
        }
        // A second sync asks the same questions and fetches nothing.
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty && again.written.isEmpty && again.failed.isEmpty)
    }

    @Test func anArtistIsItsOwnAlbumsAndFollowsNewOnes() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let artist = library.musicArtists.first { $0.name == "Test Artist 1" }
        let artistId = try #require(artist?.id)
        let guest = try #require(ids.guestArtistId)
        try fixture.select(.artist, artistId)
        try fixture.select(.artist, guest)
        try fixture.select(.artist, try #require(ids.artistWithoutAlbumsId))
        let report = try await fixture.sync()
        let own = library.albums.filter { $0.parentId == artistId }
        #expect(own.count == 2)
        let folders = Set(fixture.tree().filter { $0.hasSuffix("/metadata.json") }.map { $0.split(separator: "/")[1] })
        #expect(folders == Set(own.map { Substring($0.id) }))
        // The guest only appears on a track: no album of its own, said in one line; so is the artist with none.
        #expect(report.rejected.filter { $0.contains("no albums of its own") }.count == 2, "\(report.rejected)")
        // An album added on the server arrives at the next sync.
        var added: String?
        fixture.server.updateLibrary { added = $0.addAlbum(toArtist: artistId, name: "New Album", tracks: 2) }
        let newAlbum = try #require(added)
        let next = try await fixture.sync()
        #expect(next.downloaded.filter { $0.hasPrefix("Downloads/\(newAlbum)/") }.count >= 2)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func aPlaylistKeepsItsOrderATrackTwiceAndFollowsMoves(_ profile: JellyfinProfile) async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let playlistId = try #require(ids.playlistId)
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.playlist, playlistId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        let playlist = try #require(library.item(withId: playlistId))
        let stored = playlist.linkedChildren.map(\.itemId)
        #expect(stored.count == 5)
        let metadata = try Self.metadata(fixture, "Downloads/\(playlistId)/metadata.json")
        let entries = try #require(metadata.entries)
        #expect(entries.map(\.itemId) == stored)
        // Each entry points at its album's folder, where its file is held once.
        for entry in entries {
            let track = try #require(library.item(withId: entry.itemId))
            let albumId = try #require(track.albumId)
            #expect(entry.folder == "Downloads/\(albumId)")
            #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(albumId)/\(track.id)-") })
        }
        let media = fixture.tree().filter { $0.hasSuffix(".flac") || $0.hasSuffix(".mp3") }
        #expect(media.count == Set(stored).count)
        // 10.8 and 10.9 make every PlaylistItemId anew on a load; entries are told apart by position: nothing changes.
        fixture.server.reloadPlaylists()
        let reloaded = try await fixture.sync()
        #expect(reloaded.downloaded.isEmpty && reloaded.written.isEmpty)
        // A move on the server: the playlist's file follows, no track is fetched again.
        fixture.server.updateLibrary { $0.moveLinkedEntry(of: playlistId, from: 0, to: 3) }
        let moved = try await fixture.sync()
        #expect(moved.downloaded.isEmpty)
        #expect(moved.written == ["Downloads/\(playlistId)/metadata.json"])
        let after = try Self.metadata(fixture, "Downloads/\(playlistId)/metadata.json")
        var expected = stored
        expected.insert(expected.remove(at: 0), at: 3)
        #expect(after.entries?.map(\.itemId) == expected)
    }

    @Test(arguments: [JellyfinProfile.v10_9, .v10_10, .v10_11])
    func aPlaylistEntryTheUserMayNotSeeIsSaidInOneLine(_ profile: JellyfinProfile) async throws {
        var library = Self.library()
        let ids = try Self.ids(library)
        let playlistId = try #require(ids.playlistId)
        // The movie is in the playlist, and the movies library is taken away from the user.
        let movie = library.movies[0]
        library.addLinkedEntries(to: playlistId, itemIds: [movie.id])
        library.inaccessibleViews.insert(library.moviesViewId)
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.playlist, playlistId)
        let report = try await fixture.sync()
        let lines = report.rejected.filter { $0.contains("not visible to this user") }
        if profile == .v10_9 {
            // 10.9 lists every entry (no visibility filter) and has no GET /Playlists/{id} to compare with.
            #expect(lines.isEmpty)
        } else {
            #expect(lines.count == 1, "\(report.rejected)")
            #expect(lines.first?.contains("1 of its 6 entries") == true, "\(lines)")
        }
        // The tracks are synced all the same.
        #expect(fixture.tree().filter { $0.hasSuffix(".flac") || $0.hasSuffix(".mp3") }.count == 4)
    }

    @Test func aCollectionHoldsItsMovieSeriesAndAlbum() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let boxSetId = try #require(ids.boxSetId)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.collection, boxSetId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        let boxSet = try #require(library.item(withId: boxSetId))
        let members = boxSet.linkedChildren.map(\.itemId)
        let tree = fixture.tree()
        for member in members {
            #expect(tree.contains("Downloads/\(member)/metadata.json"), "\(member)")
        }
        let metadata = try Self.metadata(fixture, "Downloads/\(boxSetId)/metadata.json")
        #expect(Set((metadata.entries ?? []).map(\.itemId)) == Set(members))
        #expect((metadata.entries ?? []).allSatisfy { $0.folder == "Downloads/\($0.itemId)" })
    }

    @Test func aMusicLibraryMirrorsEveryAlbum() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.library, ids.musicViewId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        let media = fixture.tree().filter { $0.hasSuffix(".flac") || $0.hasSuffix(".mp3") }
        #expect(media.count == library.tracks.count)
        let albums = Set(library.tracks.compactMap(\.albumId))
        for album in albums {
            #expect(fixture.tree().contains("Downloads/\(album)/metadata.json"))
        }
    }

    @Test func tracksAtAQualityAreTheServersTranscodeUnlessTheyFit() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let albumId = try #require(ids.twoDiscAlbumId)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.index.select(
            Selection(
                id: albumId, kind: .album, addedAt: "2026-01-01T00:00:00Z",
                audioQuality: AudioQuality(codec: "opus", maxBitrate: 128_000)))
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        let folder = "Downloads/\(albumId)"
        let transcodes = fixture.tree().filter { $0.hasPrefix(folder + "/") && $0.hasSuffix(".ogg") }
        #expect(transcodes.count == 6)
        let universal = fixture.server.allRequests.filter { $0.path.lowercased().hasSuffix("/universal") }
        #expect(universal.count == 6)
        #expect(universal.allSatisfy { $0.queryValue("AudioCodec") == "opus" && $0.queryValue("Container") == nil })
        let metadata = try Self.metadata(fixture, "\(folder)/metadata.json")
        #expect(metadata.versions.allSatisfy { !$0.isStatic && $0.container == "ogg" })
        // The same quality asks nothing more; another one fetches again.
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty)
        #expect(fixture.server.allRequests.filter { $0.path.lowercased().hasSuffix("/universal") }.count == 6)
        try fixture.index.select(
            Selection(
                id: albumId, kind: .album, addedAt: "2026-01-01T00:00:00Z",
                audioQuality: AudioQuality(codec: "opus", maxBitrate: 96_000)))
        let changed = try await fixture.sync()
        #expect(changed.downloaded.filter { $0.hasSuffix(".ogg") }.count == 6)
        #expect(fixture.server.allRequests.filter { $0.path.lowercased().hasSuffix("/universal") }.count == 12)
        // A cap the mp3 originals fit (320 kbit/s mp3 within 320k) keeps them as they are.
        let mp3Album = try #require(
            library.albums.first { album in
                library.tracks(ofAlbum: album.id).first?.mediaSources.first?.container == "mp3"
            })
        try fixture.index.select(
            Selection(
                id: mp3Album.id, kind: .album, addedAt: "2026-01-01T00:00:00Z",
                audioQuality: AudioQuality(codec: "mp3", maxBitrate: 320_000)))
        let fits = try await fixture.sync()
        #expect(fits.failed.isEmpty, "\(fits.failed)")
        let kept = try Self.metadata(fixture, "Downloads/\(mp3Album.id)/metadata.json")
        #expect(!kept.versions.isEmpty && kept.versions.allSatisfy { $0.isStatic && $0.container == "mp3" })
    }

    @Test func reindexRestoresAMusicMirrorWithoutDownloading() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let albumId = try #require(ids.twoDiscAlbumId)
        try fixture.select(.album, albumId)
        try fixture.select(.playlist, try #require(ids.playlistId))
        _ = try await fixture.sync()
        let before = fixture.tree()
        // A fresh index, rebuilt from the tree.
        let fresh = try Reindexer.rebuildFresh(root: fixture.root)
        #expect(fresh.skipped.isEmpty, "\(fresh.skipped)")
        let rebuilt = try MirrorIndex(path: fixture.root.indexPath)
        let kinds = Set(try rebuilt.selections().map { "\($0.kind.rawValue):\($0.id)" })
        #expect(kinds.contains("album:\(albumId)"))
        #expect(kinds.contains("playlist:\(try #require(ids.playlistId))"))
        // An album held only for the playlist gets no selection of its own.
        #expect(kinds.count == 2, "\(kinds)")
        let rebuiltFixture = MirrorFixture(reusing: fixture, index: rebuilt)
        let next = try await rebuiltFixture.sync()
        #expect(next.downloaded.isEmpty, "\(next.downloaded)")
        #expect(fixture.tree() == before)
    }

    @Test func aTrackGoneOnTheServerIsOneLineAndTheRestIsSynced() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let albumId = try #require(ids.twoDiscAlbumId)
        let tracks = library.tracks(ofAlbum: albumId)
        let gone = try #require(tracks.last)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        // Its file went missing on the server: Download answers 404 to every attempt.
        fixture.server.inject(.status(404), path: "/Items/\(gone.mediaSources[0].id)/Download", count: 100)
        try fixture.select(.album, albumId)
        let report = try await fixture.sync()
        #expect(report.failed.count == 1, "\(report.failed)")
        #expect(report.failed.first?.path.contains(gone.id) == true)
        let media = fixture.tree().filter { $0.hasPrefix("Downloads/\(albumId)/") && $0.hasSuffix(".flac") }
        #expect(media.count == tracks.count - 1)
        // The album's metadata.json lists the tracks held, and nothing is left at a final path for the one missing.
        let metadata = try Self.metadata(fixture, "Downloads/\(albumId)/metadata.json")
        #expect(!(metadata.tracks ?? []).contains { $0["Id"]?.stringValue == gone.id })
        // Once the server has it again, the next sync fetches it.
        fixture.server.clearFaults()
        let next = try await fixture.sync()
        #expect(next.failed.isEmpty, "\(next.failed)")
        #expect(next.downloaded.contains { $0.contains(gone.id) })
    }

    @Test func anAlbumOfTwoThousandTracksIsListedPageByPage() async throws {
        var library = Self.library()
        let artist = try #require(library.musicArtists.first { $0.name == "Test Artist 1" })
        let added = library.addAlbum(toArtist: artist.id, name: "Box", tracks: 2_000, mediaSize: 16)
        let albumId = try #require(added)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.album, albumId)
        let report = try await fixture.sync(SyncOptions(), listingPageSize: 300)
        #expect(report.failed.isEmpty, "\(report.failed.prefix(3))")
        let metadata = try Self.metadata(fixture, "Downloads/\(albumId)/metadata.json")
        #expect(metadata.tracks?.count == 2_000)
        let numbers = (metadata.tracks ?? []).compactMap { $0["IndexNumber"]?.intValue }
        #expect(numbers == numbers.sorted())
        let pages = fixture.server.allRequests.filter {
            $0.path == "/Items" && $0.queryValue("parentId")?.lowercased() == albumId
        }
        #expect(pages.count >= 7, "2,000 tracks in pages of 300")
    }

    @Test func aTranscodeThatBreaksOffStartsOverAndTheReportSaysSo() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let albumId = try #require(ids.twoDiscAlbumId)
        let track = try #require(library.tracks(ofAlbum: albumId).first)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        // The first answer of one track's transcode is cut after 500 bytes.
        fixture.server.inject(.resetAfter(bytes: 500), path: "/Audio/\(track.id)/universal")
        try fixture.index.select(
            Selection(
                id: albumId, kind: .album, addedAt: "2026-01-01T00:00:00Z",
                audioQuality: AudioQuality(codec: "mp3", maxBitrate: 128_000)))
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(report.restarted.count == 1, "\(report.restarted)")
        #expect(report.restarted.first?.contains(track.id) == true)
        // The whole transcode is in place: as long as the one the server sends in one go.
        let path = try #require(fixture.tree().first { $0.contains("/\(track.id)-") && $0.hasSuffix(".mp3") })
        let held = try #require(fixture.bytes(path))
        let requests = fixture.server.allRequests.filter { $0.path == "/Audio/\(track.id)/universal" }
        #expect(requests.count == 2)
        // mp3 at 128 kbit/s (within the stereo cap) for the track's length.
        let source = track.mediaSources[0]
        let length = Int(Int64(128_000) * source.runTimeTicks / 80_000_000)
        #expect(
            held
                == TestServer.transcodedAudio(
                    sourceId: source.id, codec: "mp3", container: "mp3", bitrate: 128_000, startTicks: 0,
                    count: length))
    }

    @Test func aMusicLibraryAtAQualityDecidesTheSameFromItsCache() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        // mp3 within 320 kbit/s: the mp3 albums fit (kept as they are), the flac ones are transcoded.
        try fixture.index.select(
            Selection(
                id: ids.musicViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z",
                audioQuality: AudioQuality(codec: "mp3", maxBitrate: 320_000)))
        let first = try await fixture.sync()
        #expect(first.failed.isEmpty, "\(first.failed)")
        let flacTracks = library.tracks.filter { $0.mediaSources.first?.container == "flac" }
        let mp3Tracks = library.tracks.filter { $0.mediaSources.first?.container == "mp3" }
        #expect(!flacTracks.isEmpty && !mp3Tracks.isEmpty)
        let universal = { fixture.server.allRequests.filter { $0.path.lowercased().hasSuffix("/universal") }.count }
        #expect(universal() == flacTracks.count)
        // The next listings read the tracks' media sources from the index's cache (the selection saved again makes
        // the index forget its listing memo, so the library is listed): the same decisions, nothing fetched.
        let selection = try #require(try fixture.index.selections().first)
        try fixture.index.select(selection)
        let second = try await fixture.sync()
        #expect(!second.listingUnchanged)
        #expect(second.downloaded.isEmpty, "\(second.downloaded.prefix(3))")
        try fixture.index.select(selection)
        let third = try await fixture.sync()
        #expect(third.downloaded.isEmpty && third.written.isEmpty)
        #expect(universal() == flacTracks.count)
    }

    @Test func aPlaylistThatCannotBeListedLosesNothingEvenWithDelete() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let playlistId = try #require(ids.playlistId)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.playlist, playlistId)
        _ = try await fixture.sync()
        let before = fixture.tree()
        #expect(before.filter { $0.hasSuffix(".flac") || $0.hasSuffix(".mp3") }.count == 4)
        // A proxy in front of the server fails the playlist's entries: its tracks are still on the server, in no
        // folder of the playlist's own; nothing of them may be taken for deselected.
        fixture.server.inject(.status(404), path: "/Playlists/\(playlistId)/Items", count: 100)
        let report = try await fixture.sync(delete: true)
        #expect(report.sourceErrors.contains { $0.contains("playlist") }, "\(report.sourceErrors)")
        #expect(report.deleted.isEmpty, "\(report.deleted)")
        #expect(fixture.tree() == before)
    }

    @Test func anEmptyTranscodeIsNeverPlaced() async throws {
        let library = Self.library()
        let ids = try Self.ids(library)
        let albumId = try #require(ids.twoDiscAlbumId)
        let track = try #require(library.tracks(ofAlbum: albumId).first)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        // The server's encoder fails after the answer began: 200 with no byte.
        fixture.server.inject(
            .body(status: 200, contentType: "audio/mpeg", bytes: []), path: "/Audio/\(track.id)/universal", count: 10)
        try fixture.index.select(
            Selection(
                id: albumId, kind: .album, addedAt: "2026-01-01T00:00:00Z",
                audioQuality: AudioQuality(codec: "mp3", maxBitrate: 128_000)))
        let report = try await fixture.sync()
        #expect(report.failed.count == 1 && report.failed.first?.message.contains("empty") == true, "\(report.failed)")
        #expect(!fixture.tree().contains { $0.contains("/\(track.id)-") })
        #expect(fixture.tree().filter { $0.hasPrefix("Downloads/\(albumId)/") && $0.hasSuffix(".mp3") }.count == 5)
        fixture.server.clearFaults()
        let next = try await fixture.sync()
        #expect(next.downloaded.contains { $0.contains("/\(track.id)-") }, "\(next.failed)")
    }
}
