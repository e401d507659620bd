import Foundation
import MediaSync
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Chapters, trickplay and segments as a user gets them: `select` with its trickplay options, `sync`, `verify`, and a
/// sync killed mid-way through a thousand tiles.
@Suite struct TrickplayCommandTests {
    struct Sandbox {
        let server: TestServer
        let folder: String
        var root: String { folder + "/mirror" }

        init(library: TestLibrary) throws {
            server = try TestServer(library: library)
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "mediasync-trickplay-\(UUID().uuidString)"
                )
                .path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        var environment: [String: String] {
            ["MEDIASYNC_ROOT": root, "MEDIASYNC_CONFIG_DIR": folder + "/config", "MEDIASYNC_API_KEY": ""]
        }

        func run(_ arguments: [String], input: String? = nil) async throws -> CommandRunner.Output {
            try await CommandRunner.run(arguments, environment: environment, input: input)
        }

        func login() async throws {
            let login = try await run(
                ["login", server.baseURL, "--username", "demo", "--password-stdin"], input: "demo\n")
            #expect(login.status == 0, "\(login.stderr)")
        }

        func files() -> [String] {
            TreeReading.files(under: root + "/Downloads", prefix: "Downloads/")
        }

        func tearDown() {
            server.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    @Test func selectKeepsTheTrickplayWidthAskedForOrNoneAndSyncFetchesIt() async throws {
        var library = TestLibrary(movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 1, mediaSize: 4_000)
        library.addRichMedia(chapters: 2, trickplayWidths: [160, 320, 640], thumbnailCount: 150)
        let sandbox = try Sandbox(library: library)
        defer { sandbox.tearDown() }
        try await sandbox.login()
        let movie = library.movies[0]
        let series = library.series[0]
        let episode = library.episodes[0]
        // Both options at once, or a width that is no width, select nothing.
        let both = try await sandbox.run(["select", "movie", movie.id, "--no-trickplay", "--trickplay-width", "320"])
        #expect(both.status == 64, "\(both.stderr)")
        let zero = try await sandbox.run(["select", "movie", movie.id, "--trickplay-width", "0"])
        #expect(zero.status == 64, "\(zero.stderr)")
        #expect(try await sandbox.run(["select", "movie", movie.id, "--trickplay-width", "320"]).status == 0)
        #expect(try await sandbox.run(["select", "series", series.id, "--no-trickplay"]).status == 0)
        let listed = try await sandbox.run(["selections"])
        #expect(
            listed.stdout.contains("trickplay 320 px") && listed.stdout.contains("no trickplay"), "\(listed.stdout)")
        let json = try await sandbox.run(["selections", "--json"])
        #expect(json.stdout.contains("\"trickplay\"") && json.stdout.contains("\"320\""), "\(json.stdout)")
        let sync = try await sandbox.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let files = sandbox.files()
        // 150 thumbnails in 10 × 10 tiles: two tiles at 320 for the movie, none for the series.
        #expect(
            files.filter { $0.contains(".trickplay/") }
                == ["0", "1"].map { "Downloads/\(movie.id)/\(movie.id)-\(movie.id).trickplay/320/\($0).jpg" })
        #expect(files.contains("Downloads/\(movie.id)/Images/Chapter-1.jpeg"))
        #expect(files.contains("Downloads/\(series.id)/Season-01/Images/Episode-\(episode.id)-Chapter-0.jpeg"))
        #expect(files.contains("Downloads/\(movie.id)/\(movie.id)-\(movie.id).segments.json"))
        let verify = try await sandbox.run(["verify", "--deep"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        // A no-op asks for no tile.
        sandbox.server.resetStatistics()
        let again = try await sandbox.run(["sync"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!sandbox.server.allRequests.contains { $0.path.contains("/Trickplay/") })
    }

    /// A sync killed once 300 of a movie's 1,000 tiles are placed: the rerun fetches the rest (not the placed ones
    /// again) and the tiles are the server's bytes exactly, nothing left in staging, `verify --deep` clean.
    @Test func aSyncKilledMidWayThroughAThousandTilesFinishesWithExactBytes() async throws {
        var library = TestLibrary(movies: 1, series: 0, mediaSize: 4_000)
        library.addRichMedia(chapters: 0, trickplayWidths: [160], thumbnailCount: 100_000, segments: false)
        let sandbox = try Sandbox(library: library)
        defer { sandbox.tearDown() }
        try await sandbox.login()
        let movie = library.movies[0]
        let source = movie.mediaSources[0]
        let info = try #require(source.trickplay.first)
        #expect(info.tileCount == 1_000)
        #expect(try await sandbox.run(["select", "movie", movie.id]).status == 0)
        // Three tiles hold their answer (and every retry's) until the client goes away, so the run cannot end before
        // the kill however the machine is loaded, and one of the four transfers at a time always goes on: the kill
        // comes at an event (300 tiles logged as placed), not after a delay.
        for index in 997..<1_000 {
            sandbox.server.inject(
                .stall(afterBytes: 0, seconds: 3_600), path: "/Videos/\(source.id)/Trickplay/160/\(index).jpg",
                count: 1_000)
        }
        let live = try LiveProcess(["sync"], environment: sandbox.environment)
        var placed = 0
        for _ in 0..<60_000 where live.isRunning {
            placed = live.text.components(separatedBy: ".trickplay/160/").count - 1
            if placed >= 300 { break }
            usleep(5_000)
        }
        live.kill()
        #expect(placed >= 300, "\(live.text.suffix(2_000))")
        sandbox.server.clearFaults()
        for _ in 0..<6_000 where sandbox.server.requestsInFlight > 0 { usleep(5_000) }
        let tilesBefore = sandbox.files().filter { $0.contains(".trickplay/") }.count
        #expect(tilesBefore >= 300 && tilesBefore < 1_000, "\(tilesBefore)")
        sandbox.server.resetStatistics()
        let rerun = try await sandbox.run(["sync"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let tiles = sandbox.files().filter { $0.contains(".trickplay/") }
        #expect(tiles.count == 1_000)
        for index in 0..<1_000 {
            let path = sandbox.root + "/Downloads/\(movie.id)/\(movie.id)-\(movie.id).trickplay/160/\(index).jpg"
            let bytes = FileManager.default.contents(atPath: path).map { [UInt8]($0) }
            #expect(
                bytes == TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: index), "tile \(index)")
        }
        // Tiles placed before the kill are not asked again (those in flight at the kill are).
        let asked = sandbox.server.allRequests.filter { $0.path.contains("/Trickplay/") }.count
        #expect(asked <= 1_000 - tilesBefore + 8, "asked \(asked) tiles again, \(tilesBefore) were held")
        let staging = (try? FileManager.default.contentsOfDirectory(atPath: sandbox.root + "/.mediasync/staging")) ?? []
        #expect(staging.isEmpty, "left in staging: \(staging)")
        let verify = try await sandbox.run(["verify", "--deep"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }
}
