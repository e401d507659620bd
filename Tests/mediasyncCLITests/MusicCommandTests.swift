import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

/// The music story as a user runs it, each command its own process, against the test server at every version it
/// models: browse, select an album, an artist, a playlist, a collection and an album at a quality, sync, export.
@Suite struct MusicCommandTests {
    struct Sandbox {
        let server: TestServer
        let folder: String
        var environment: [String: String] {
            ["MEDIASYNC_ROOT": folder + "/mirror", "MEDIASYNC_CONFIG_DIR": folder + "/config", "MEDIASYNC_API_KEY": ""]
        }

        init(profile: JellyfinProfile) throws {
            try self.init(
                library: TestLibrary(
                    movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 1, mediaSize: 3_000, seed: 11,
                    music: TestLibrary.MusicSpec(tracksPerDisc: 6, mediaSize: 2_000)),
                profile: profile)
        }

        init(library: TestLibrary, profile: JellyfinProfile) throws {
            server = try TestServer(library: library)
            server.profile = profile
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-music-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        func run(_ arguments: [String], input: String? = nil) async throws -> CommandRunner.Output {
            try await CommandRunner.run(arguments, environment: environment, input: input)
        }

        func tearDown() {
            server.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
        }

        func files(under relative: String) -> [String] {
            let base = folder + "/" + relative
            let found = FileManager.default.enumerator(atPath: base)?.allObjects.compactMap { $0 as? String } ?? []
            return found.filter {
                (try? FileManager.default.attributesOfItem(atPath: base + "/" + $0)[.type]) as? FileAttributeType
                    == .typeRegular
            }.sorted()
        }
    }

    @Test(arguments: JellyfinProfile.allCases)
    func theMusicStoryEndToEnd(_ profile: JellyfinProfile) async throws {
        let sandbox = try Sandbox(profile: profile)
        defer { sandbox.tearDown() }
        let library = sandbox.server.library
        let ids = try #require(library.musicIds)
        let login = try await sandbox.run(
            ["login", sandbox.server.baseURL, "--username", "demo", "--password-stdin"], input: "demo\n")
        #expect(login.status == 0, "\(login.stderr)")

        // Browse finds the album by name, with its artist.
        let browse = try await sandbox.run(["browse", "--type", "album", "--search", "test album 1", "--json"])
        #expect(browse.status == 0, "\(browse.stderr)")
        let firstAlbum = try #require(ids.twoDiscAlbumId)
        #expect(browse.stdout.contains(firstAlbum))
        let artists = try await sandbox.run(["browse", "--type", "artist"])
        #expect(artists.status == 0 && artists.stdout.contains("Test Artist 2"), "\(artists.stderr)")

        let artist2 = try #require(library.musicArtists.first { $0.name == "Test Artist 2" }?.id)
        let guestAlbum = try #require(ids.guestAlbumId)
        let playlist = try #require(ids.playlistId)
        let boxSet = try #require(ids.boxSetId)
        for arguments in [
            ["select", "album", firstAlbum], ["select", "artist", artist2], ["select", "playlist", playlist],
            ["select", "collection", boxSet],
            // First in line, so its tracks are transcoded although the playlist names two of them too.
            ["select", "album", guestAlbum, "--max-bitrate", "128k", "--audio-codec", "opus", "--priority", "1"],
        ] {
            let selected = try await sandbox.run(arguments)
            #expect(selected.status == 0, "\(arguments): \(selected.stderr)")
        }
        // A kind that is not the item's, and video caps on tracks, are refused with one line.
        let wrongKind = try await sandbox.run(["select", "album", playlist])
        #expect(wrongKind.status != 0 && wrongKind.stderr.contains("Playlist"), "\(wrongKind.stderr)")
        let videoCaps = try await sandbox.run(["select", "album", firstAlbum, "--quality", "720p"])
        #expect(videoCaps.status != 0)

        let sync = try await sandbox.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let mirror = sandbox.files(under: "mirror/Downloads")
        let guestTracks = library.tracks(ofAlbum: guestAlbum)
        #expect(mirror.filter { $0.hasPrefix("\(guestAlbum)/") && $0.hasSuffix(".ogg") }.count == guestTracks.count)
        let artist2Albums = library.albums.filter { $0.parentId == artist2 }.map(\.id)
        for album in [firstAlbum] + artist2Albums {
            #expect(mirror.contains("\(album)/metadata.json"), "\(album)")
        }
        #expect(mirror.contains("\(playlist)/metadata.json"))
        #expect(mirror.contains("\(boxSet)/metadata.json"))
        #expect(mirror.contains { $0.hasSuffix(".lrc") } == (profile != .v10_8))

        // A second sync has nothing to do.
        let again = try await sandbox.run(["sync", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        #expect((report?["downloaded"] as? [Any])?.isEmpty ?? false, "\(again.stdout.prefix(400))")

        // The export: artist, album (year), disc-track numbers, lyrics beside, the playlist in its order.
        let export = try await sandbox.run(["export", sandbox.folder + "/usb", "--only", "music", "--playlists"])
        #expect(export.status == 0, "\(export.stderr)")
        let exported = sandbox.files(under: "usb")
        #expect(exported.contains { $0.hasPrefix("Music/Test Artist 1/") && $0.contains("/1-01 - ") }, "\(exported)")
        #expect(exported.contains { $0.hasPrefix("Music/Test Artist 1/") && $0.contains("/2-03 - ") })
        #expect(!exported.contains { $0.hasPrefix("Movies/") || $0.hasPrefix("Shows/") })
        // The collection holds an album: its list goes with the music too (its movie and series are not exported).
        #expect(exported.contains("Playlists/Test Collection.m3u8"), "\(exported)")
        let playlistFile = "Playlists/Test Playlist.m3u8"
        let text = String(
            decoding: FileManager.default.contents(atPath: sandbox.folder + "/usb/" + playlistFile) ?? Data(),
            as: UTF8.self)
        let entries = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(entries.count == 5, "\(text)")
        #expect(entries.first == entries.last, "the playlist's first track stands again at its end")
        for entry in entries {
            let target = ((sandbox.folder + "/usb/Playlists/" + entry) as NSString).standardizingPath
            #expect(FileManager.default.fileExists(atPath: target), "\(entry)")
        }
    }
}
