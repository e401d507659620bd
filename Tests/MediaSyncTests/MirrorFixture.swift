import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport

/// A test server, a signed-in client and an empty mirror root.
struct MirrorFixture {
    let server: TestServer
    let client: JellyfinClient
    let root: MirrorRoot
    let index: MirrorIndex

    init(library: TestLibrary, profile: JellyfinProfile = .newest) async throws {
        server = try TestServer(library: library)
        server.profile = profile
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediasync-mirror-\(UUID().uuidString)")
        root = MirrorRoot(path: folder.path)
        try root.prepare()
        index = try MirrorIndex(path: root.indexPath)
        let anonymous = try JellyfinClient(
            serverURL: server.baseURL, identity: ClientIdentity(device: "tests", deviceId: "test-device"))
        let result = try await anonymous.authenticate(username: library.userName, password: library.password)
        client = anonymous.signedIn(result)
    }

    /// The same server, client and root, with another index (one rebuilt by `reindex`).
    init(reusing other: MirrorFixture, index: MirrorIndex) {
        server = other.server
        client = other.client
        root = other.root
        self.index = index
    }

    func sync(delete: Bool = false) async throws -> SyncReport {
        try await sync(SyncOptions(delete: delete))
    }

    /// - Parameters:
    ///   - server: the client to sync through (another address: a server that is down).
    ///   - now: the sync's clock (grace periods of played cleanup).
    func sync(
        _ options: SyncOptions, listingPageSize: Int = SelectionExpander.libraryPageSize,
        server: JellyfinClient? = nil, now: Date? = nil
    ) async throws -> SyncReport {
        let sync = MirrorSync(
            root: root, index: index, server: server ?? client,
            transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01)),
            now: { now ?? Date() }, listingPageSize: listingPageSize)
        return try await sync.run(options: options)
    }

    func select(
        _ kind: Selection.Kind, _ id: String, allVersions: Bool = false, season: Int? = nil, nextUnplayed: Int? = nil,
        priority: Int? = nil, deletePlayedAfter: TimeInterval? = nil, addedAt: String = "2026-01-01T00:00:00Z"
    ) throws {
        try index.select(
            Selection(
                id: id, kind: kind, allVersions: allVersions, season: season, nextUnplayed: nextUnplayed,
                addedAt: addedAt, priority: priority, deletePlayedAfter: deletePlayedAfter))
    }

    /// Every regular file under the root, relative, sorted; mediasync's own `.mediasync/` left out.
    func tree() -> [String] {
        TreeReading.files(under: root.path) { $0.hasPrefix(".mediasync") }
    }

    func bytes(_ relative: String) -> [UInt8]? {
        TreeReading.bytes(root.path + "/" + relative)
    }

    func json(_ relative: String) -> [String: Any]? {
        TreeReading.json(root.path + "/" + relative)
    }

    /// Plants `item` in Swiftfin's legacy layout: `Downloads/<id>/Metadata/Item.json` as the server
    /// describes it, beside its first version's bytes as `mediaName`.
    func plantLegacy(_ item: TestItem, as mediaName: String, library: TestLibrary) async throws {
        let folder = root.path + "/Downloads/\(item.id)"
        try FileManager.default.createDirectory(atPath: folder + "/Metadata", withIntermediateDirectories: true)
        let raw = try await client.item(id: item.id)
        try JSONEncoder().encode(raw).write(to: URL(fileURLWithPath: folder + "/Metadata/Item.json"))
        try Data(library.mediaBytes(forMediaSourceId: item.mediaSources[0].id) ?? []).write(
            to: URL(fileURLWithPath: folder + "/" + mediaName))
    }

    func tearDown() {
        server.shutdown()
        try? FileManager.default.removeItem(atPath: root.path)
    }
}

extension TestLibrary {
    /// The generated library plus the cases the layout must handle: a movie whose container is an ffprobe
    /// list, a season of specials, an episode with two versions, a virtual missing episode, an episode whose
    /// MIME type says nothing (its container decides), and unicode names.
    static func golden() -> TestLibrary {
        var library = TestLibrary(
            movies: 2, series: 1, seasonsPerSeries: 2, episodesPerSeason: 2, mediaSize: 20_000, seed: 42)
        let movie1 = library.movies[1]
        library.updateMediaSource(movie1.mediaSources[0].id) { source in
            source.container = "mov,mp4,m4a,3gp,3g2,mj2"
            source.path = "/media/Movies/Amélie/Amélie.mp4"
        }
        if let index = library.items.firstIndex(where: { $0.id == movie1.id }) {
            library.items[index].name = "Amélie – 東京 ✨"
        }
        let series = library.series[0]
        let season1 = library.seasons[0]
        let season2 = library.seasons[1]
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        // Specials: a season numbered 0 with one episode.
        let specialsId = "5eea5000000000000000000000000000"
        let specialId = "5eea5000000000000000000000000001"
        library.items.append(
            TestItem(
                id: specialsId, name: "Specials", type: "Season", parentId: series.id, seriesId: series.id,
                seriesName: series.name, indexNumber: 0, path: "/media/Shows/S/Specials",
                imageTags: ["Primary": "tagspecials"],
                dateCreated: date, etag: "etagspecials", isFolder: true))
        library.items.append(
            TestItem(
                id: specialId, name: "Behind the Scenes", type: "Episode", parentId: specialsId, seriesId: series.id,
                seriesName: series.name, seasonId: specialsId, seasonName: "Specials", indexNumber: 1,
                parentIndexNumber: 0,
                path: "/media/Shows/S/Specials/bts.mkv",
                mediaSources: [
                    TestMediaSource(
                        id: specialId, name: "Behind the Scenes", path: "/media/Shows/S/Specials/bts.mkv", size: 12_345,
                        etag: "etagbts", runTimeTicks: 1, lastModified: date)
                ],
                imageTags: ["Primary": "tagbts"], dateCreated: date, etag: "etagbtsitem", isFolder: false))
        // A second version of the first episode of season 1.
        let first = library.episodes.first { $0.seasonId == season1.id && $0.indexNumber == 1 }
        if let first, let index = library.items.firstIndex(where: { $0.id == first.id }) {
            library.items[index].mediaSources.append(
                TestMediaSource(
                    id: "7e500000000000000000000000000002", name: "\(first.name) 4K", path: "/media/Shows/S/4k.mkv",
                    size: 30_000, etag: "etag4k", runTimeTicks: 1, lastModified: date))
        }
        // An episode whose file extension gives no MIME type: its container names the extension.
        let second = library.episodes.first { $0.seasonId == season2.id && $0.indexNumber == 2 }
        if let second {
            library.updateMediaSource(second.mediaSources[0].id) { source in
                source.container = "avi"
                source.path = "/media/Shows/S/Season 2/episode-without-extension"
            }
        }
        // A virtual (missing) episode: known to the server, no file.
        var missing = TestItem(
            id: "7e500000000000000000000000000009", name: "Not Yet Aired", type: "Episode", parentId: season2.id,
            seriesId: series.id, seriesName: series.name, seasonId: season2.id, seasonName: season2.name,
            indexNumber: 3,
            parentIndexNumber: 2, path: "", dateCreated: date, etag: "etagmissing", isFolder: false)
        missing.locationType = "Virtual"
        library.items.append(missing)
        return library
    }
}

extension MirrorFixture {
    /// Runs `body` with a fixture serving `library` (the golden one unless told), signed in and with an empty root,
    /// and tears it down afterwards whatever `body` does: the setup every mirror test shares.
    static func with(
        _ library: TestLibrary = .golden(), profile: JellyfinProfile = .newest,
        _ body: (MirrorFixture, TestLibrary) async throws -> Void
    ) async throws {
        let fixture = try await MirrorFixture(library: library, profile: profile)
        do {
            try await body(fixture, library)
        } catch {
            fixture.tearDown()
            throw error
        }
        fixture.tearDown()
    }
}
