import Foundation
import MediaSync
import MediaSyncHTTP
import MediaSyncServe
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// jellyfin-apiclient-python (PyPI) against a served mirror: the same flow as a third-party client. It needs
/// python3 (else skipped by the trait) and a venv with the package (made once in `.build/serve-client-venv`; where
/// pip cannot install it, the test says so and checks nothing).
@Suite struct ThirdPartyClientTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = packageRoot.appendingPathComponent("Tests/MediaSyncServeTests/Python/serve_client.py").path
    static let venv = packageRoot.appendingPathComponent(".build/serve-client-venv").path

    static var python3: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    struct Output {
        var status: Int32
        var out: String
        var err: String
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> Output {
        let finished = try await Spawned.run(executable, arguments)
        return Output(status: finished.status, out: finished.stdout, err: finished.stderr)
    }

    /// The venv's python with jellyfin-apiclient-python, nil (and why) when it cannot be made.
    static func clientPython() async throws -> (python: String?, why: String) {
        let python = venv + "/bin/python"
        let probe = ["-c", "import jellyfin_apiclient_python"]
        if FileManager.default.isExecutableFile(atPath: python), try await run(python, probe).status == 0 {
            return (python, "")
        }
        guard let system = python3 else { return (nil, "no python3") }
        let made = try await run(system, ["-m", "venv", venv])
        guard made.status == 0 else { return (nil, "python3 -m venv failed: \(made.err)") }
        let installed = try await run(python, ["-m", "pip", "install", "-q", "jellyfin-apiclient-python"])
        guard installed.status == 0 else {
            return (nil, "pip cannot install jellyfin-apiclient-python: \(installed.err)")
        }
        return (python, "")
    }

    @Test(.enabled(if: ThirdPartyClientTests.python3 != nil, "skipped: no python3"))
    func jellyfinApiclientPythonBrowsesPlaysAndReports() async throws {
        let (python, why) = try await Self.clientPython()
        guard let python else {
            print("ThirdPartyClientTests skipped: \(why)")
            return
        }
        try await ServeFixture.with(ServeEndToEndTests.library()) { fixture in
            // `serve` runs as its own process: in this one, the whole suite shares two cooperative threads, and
            // the client library gives up on a server that takes over 5 s to answer.
            let (process, address) = try await ServeCommandTests.serve(fixture)
            defer {
                process.send(SIGTERM)
                _ = process.finish()
            }
            let serverId = try String(contentsOfFile: fixture.root.stateDirectory + "/serve-id", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let output = try await Self.run(python, [Self.script, address, "demo", ServeFixture.password])
            #expect(output.status == 0, "\(output.err)")
            let line = output.out.split(separator: "\n").last.map(String.init) ?? ""
            let seen = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            #expect(seen["serverId"] as? String == serverId)
            #expect(seen["rangedBytes"] as? Int == 100)
            let pending = Set(try fixture.index.playEvents(state: .pending).map(\.itemId))
            #expect(pending.contains(seen["episode"] as? String ?? "-"))
            #expect(pending.contains(seen["movie"] as? String ?? "-"))
        }
    }

    /// The same client walks the music: albums, an album's tracks in disc order, album artists and theirs, the
    /// playlist's entries, a range of a track through the universal audio route, its lyrics, a track played.
    @Test(.enabled(if: ThirdPartyClientTests.python3 != nil, "skipped: no python3"))
    func jellyfinApiclientPythonWalksTheMusic() async throws {
        let (python, why) = try await Self.clientPython()
        guard let python else {
            print("ThirdPartyClientTests skipped: \(why)")
            return
        }
        try await ServeFixture.with(MusicServeTests.library()) { fixture in
            let ids = try await MusicServeTests.synced(fixture)
            let (process, address) = try await ServeCommandTests.serve(fixture)
            defer {
                process.send(SIGTERM)
                _ = process.finish()
            }
            let output = try await Self.run(python, [Self.script, address, "demo", ServeFixture.password, "music"])
            #expect(output.status == 0, "\(output.err)")
            let line = output.out.split(separator: "\n").last.map(String.init) ?? ""
            let seen = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            let albumId = try #require(ids.twoDiscAlbumId)
            #expect(seen["album"] as? String == albumId)
            #expect(seen["tracks"] as? [String] == fixture.library.tracks(ofAlbum: albumId).map(\.id))
            let artist = fixture.library.musicArtists.first { $0.name == "Test Artist 1" }
            #expect((seen["artists"] as? [String])?.contains(artist?.id ?? "-") == true)
            let playlistId = try #require(ids.playlistId)
            let playlist = try #require(fixture.library.item(withId: playlistId))
            #expect(seen["entries"] as? [String] == playlist.linkedChildren.map(\.itemId))
            #expect(seen["rangedBytes"] as? Int == 100)
            #expect(seen["lyricLines"] as? Int == 4)
            let pending = Set(try fixture.index.playEvents(state: .pending).map(\.itemId))
            #expect(pending.contains(seen["played"] as? String ?? "-"))
        }
    }

    /// jellyfin-api-client (PyPI, generated from Jellyfin's OpenAPI description) in the same venv, nil (and why) when
    /// pip cannot install it.
    static func modelPython() async throws -> (python: String?, why: String) {
        let (python, why) = try await clientPython()
        guard let python else { return (nil, why) }
        let probe = ["-c", "import jellyfin_api_client.models.base_item_dto"]
        if try await run(python, probe).status == 0 { return (python, "") }
        let installed = try await run(python, ["-m", "pip", "install", "-q", "jellyfin-api-client"])
        guard installed.status == 0 else { return (nil, "pip cannot install jellyfin-api-client: \(installed.err)") }
        return (python, "")
    }

    /// The OpenAPI models read a served mirror's chapters (`ChapterInfo`), trickplay (`TrickplayInfo`), the playlist
    /// and its tiles and the segments, the home server stopped.
    @Test(.enabled(if: ThirdPartyClientTests.python3 != nil, "skipped: no python3"))
    func jellyfinApiClientModelsReadChaptersTrickplayAndSegments() async throws {
        let (python, why) = try await Self.modelPython()
        guard let python else {
            print("ThirdPartyClientTests skipped: \(why)")
            return
        }
        let script = Self.packageRoot.appendingPathComponent("Tests/MediaSyncServeTests/Python/serve_models.py").path
        try await ServeFixture.with(RichMediaServeTests.library()) { fixture in
            let (process, address) = try await ServeCommandTests.serve(fixture)
            defer {
                process.send(SIGTERM)
                _ = process.finish()
            }
            fixture.upstream.shutdown()
            let movie = fixture.library.movies[0]
            let output = try await Self.run(python, [script, address, "demo", ServeFixture.password, movie.id])
            #expect(output.status == 0, "\(output.err)")
            let line = output.out.split(separator: "\n").last.map(String.init) ?? ""
            let seen = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            #expect(seen["chapters"] as? Int == 3)
            #expect(seen["trickplayWidth"] as? Int == 160)
            #expect(seen["tiles"] as? Int == 3)
            #expect(seen["segmentTypes"] as? [String] == ["Intro"])
        }
    }
}

extension ThirdPartyClientTests {
    /// The OpenAPI models read a served mirror's books view: `AudioBook`, `Folder` and `Book` items, an audiobook's
    /// media sources, a book without any, and every file from `/Download` byte for byte, the home server stopped.
    @Test(.enabled(if: ThirdPartyClientTests.python3 != nil, "skipped: no python3"))
    func jellyfinApiClientModelsReadAudiobooksAndBooks() async throws {
        let (python, why) = try await Self.modelPython()
        guard let python else {
            print("ThirdPartyClientTests skipped: \(why)")
            return
        }
        let script = Self.packageRoot.appendingPathComponent("Tests/MediaSyncServeTests/Python/serve_books.py").path
        let (library, ids) = BookServeTests.library()
        try await ServeFixture.with(library) { fixture in
            try fixture.index.select(Selection(id: ids.booksViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
            let (process, address) = try await ServeCommandTests.serve(fixture)
            defer {
                process.send(SIGTERM)
                _ = process.finish()
            }
            fixture.upstream.shutdown()
            let output = try await Self.run(python, [script, address, "demo", ServeFixture.password])
            #expect(output.status == 0, "\(output.err)")
            let line = output.out.split(separator: "\n").last.map(String.init) ?? ""
            let seen = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            #expect(seen["audiobooks"] as? [String] == [ids.singleAudiobookId])
            #expect(seen["folders"] as? [String] == [ids.multiPartFolderId])
            #expect(seen["parts"] as? [String] == ids.partIds)
            #expect(Set(seen["books"] as? [String] ?? []) == Set(ids.bookIds))
            #expect(seen["containers"] as? [String] == ["m4b"])
            let types = seen["types"] as? [String: String] ?? [:]
            #expect(types[ids.bookIds[0]] == "application/epub+zip")
            #expect(types[ids.bookIds[2]] == "application/pdf")
            let digests = seen["sha256"] as? [String: String] ?? [:]
            for id in [ids.singleAudiobookId] + ids.partIds + ids.bookIds {
                #expect(digests[id] == SHA256.hex(library.mediaBytes(forMediaSourceId: id) ?? []), "\(id)")
            }
        }
    }
}
