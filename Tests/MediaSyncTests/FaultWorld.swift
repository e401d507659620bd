import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The mirror the fault matrix works on: a series whose next unplayed episode is already mirrored (the last one;
/// with 201 episodes the listing shows it on its second page), a podcast with one mirrored episode, and then new work — a movie with images and a
/// subtitle, and a second episode — that a faulty server has to deliver.
///
/// Every HTTP call uses two attempts and a 10 ms backoff, so each fault costs little time. The low-speed window is
/// libcurl's production 30 seconds, except for the stall cells (``stallWindow``): under ThreadSanitizer on a loaded
/// machine a starved client gave up on a short window before the faulty response's first byte, and its retry then
/// met the server in another state than the cell meant.
final class FaultWorld: Sendable {
    let server: TestServer
    let folder: TemporaryDirectory
    let root: MirrorRoot
    let index: MirrorIndex
    let client: JellyfinClient
    let http: HTTPClient
    let transfer: TransferOptions
    let series: TestItem
    /// The episode mirrored before the fault (the next unplayed one; the listing shows it on its second page).
    let episode: TestItem
    let movie: TestItem

    /// 201 episodes make the episode listing two pages (of 200); the other cells list three, which is cheaper.
    static let pagedEpisodes = 201
    /// Past 1 MiB a partial download is kept and resumed, so the media and the new enclosure are larger.
    static let largeSize = 1_200_000
    static let feedPath = "/pod/feed.xml"
    static let oldEnclosure = "/pod/e1.mp3"
    static let newEnclosure = "/pod/e2.mp3"

    /// The low-speed window of the stall cells, whose outcome ("recovered") does not depend on which attempt stalls.
    static let stallWindow = 2
    static let retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.05, jitter: 0)

    init(episodes: Int = 3, lowSpeedWindow: Int = 30) async throws {
        var library = TestLibrary(
            movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: episodes, mediaSize: 2_000, seed: 6)
        for position in library.items.indices where library.items[position].type == "Episode" {
            library.items[position].played = (library.items[position].indexNumber ?? 0) < episodes
        }
        let movie = library.movies[0]
        library.updateMediaSource(movie.mediaSources[0].id) { $0.size = FaultWorld.largeSize }
        self.movie = movie
        series = library.series[0]
        guard let last = library.episodes.first(where: { $0.indexNumber == episodes }) else {
            throw SyncError.notFound("the generated library has no episode \(episodes)")
        }
        episode = last
        server = try TestServer(library: library)
        folder = try TemporaryDirectory()
        root = MirrorRoot(path: folder.path + "/mirror")
        try root.prepare()
        index = try MirrorIndex(path: root.indexPath)
        http = HTTPClient(
            configuration: HTTPClientConfiguration(requestTimeout: 60, lowSpeedTime: lowSpeedWindow),
            retryPolicy: FaultWorld.retryPolicy)
        transfer = TransferOptions(durable: false, retryPolicy: FaultWorld.retryPolicy)
        let anonymous = try JellyfinClient(
            serverURL: server.baseURL, identity: ClientIdentity(device: "tests", deviceId: "fault-matrix"), http: http)
        client = anonymous.signedIn(
            try await anonymous.authenticate(username: library.userName, password: library.password))
    }

    func tearDown() {
        server.shutdown()
        folder.remove()
    }

    // MARK: The story

    /// The series (next unplayed episode) and the podcast's first episode, mirrored cleanly.
    func mirrorBaseline() async throws -> SyncReport {
        server.setFile(FaultWorld.oldEnclosure, contents: FaultWorld.audio(1, size: 4_000), contentType: "audio/mpeg")
        publishFeed(episodes: [1])
        try index.select(Selection(id: series.id, kind: .series, nextUnplayed: 1, addedAt: "2026-01-01T00:00:00Z"))
        _ = try await Subscriptions(index: index, client: http).add(
            url: server.baseURL + FaultWorld.feedPath, retention: .all)
        return try await sync()
    }

    /// A movie is selected and the podcast publishes a second, large episode.
    func addNewWork() throws {
        try index.select(Selection(id: movie.id, kind: .movie, addedAt: "2026-01-02T00:00:00Z"))
        server.setFile(
            FaultWorld.newEnclosure, contents: FaultWorld.audio(2, size: FaultWorld.largeSize),
            contentType: "audio/mpeg")
        publishFeed(episodes: [1, 2])
    }

    func publishFeed(episodes: [Int]) {
        let items = episodes.map { number in
            """
            <item><title>Episode \(number)</title><guid isPermaLink="false">episode-\(number)</guid>
            <pubDate>0\(number) Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(server.baseURL)/pod/e\(number).mp3" length="4000" type="audio/mpeg"/></item>
            """
        }.joined(separator: "\n")
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Fault Radio</title><link>https://example.org</link>
            \(items)
            </channel></rss>
            """
        server.setFile(
            FaultWorld.feedPath, contents: Array(feed.utf8), contentType: "application/rss+xml",
            etag: "feed-\(episodes.count)")
    }

    static func audio(_ number: Int, size: Int, version: UInt8 = 0) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number &* 7 &+ Int(version) &* 13 ^ ($0 >> 9)) }
    }

    func sync(delete: Bool = true) async throws -> SyncReport {
        try await MirrorSync(root: root, index: index, server: client, client: http, transferOptions: transfer)
            .run(options: SyncOptions(delete: delete))
    }

    // MARK: Paths

    var mediaVersion: String { movie.mediaSources[0].id }
    var listingPath: String { "/Shows/\(series.id)/Episodes" }
    var mediaPath: String { "/Items/\(mediaVersion)/Download" }
    var imagePath: String { "/Items/\(movie.id)/Images/Primary" }
    var subtitlePath: String { "/Videos/\(movie.id)/\(mediaVersion)/Subtitles/2/Stream.srt" }

    var mirroredMedia: String { "Downloads/\(movie.id)/\(movie.id)-\(mediaVersion).mkv" }
    var mirroredImage: String { "Downloads/\(movie.id)/Images/Primary.jpeg" }
    var mirroredSubtitle: String { "Downloads/\(movie.id)/\(movie.id)-\(mediaVersion).2.eng.srt" }
    var podcastFolder: String {
        "Downloads/" + PodcastLayout.podcastId(feedURL: server.baseURL + FaultWorld.feedPath, declaredGUID: nil)
    }
    var mirroredEnclosure: String { podcastFolder + "/episode-2.mp3" }

    // MARK: What is on disk

    struct Stamp: Equatable, CustomStringConvertible {
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int

        var description: String { "inode \(inode), \(size) B, mtime \(modified).\(modifiedNanoseconds)" }
    }

    /// Every regular file under `Downloads/`, relative to the root.
    func tree() -> [String] {
        let downloads = root.path + "/Downloads"
        guard let enumerator = FileManager.default.enumerator(atPath: downloads) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var info = stat()
            guard lstat(downloads + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append("Downloads/" + relative)
        }
        return files.sorted()
    }

    func stamps(_ paths: [String]) -> [String: Stamp] {
        var stamps: [String: Stamp] = [:]
        for path in paths {
            var info = stat()
            guard lstat(root.path + "/" + path, &info) == 0 else { continue }
            stamps[path] = Stamp(
                inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: info.st_mtim.tv_sec,
                modifiedNanoseconds: info.st_mtim.tv_nsec)
        }
        return stamps
    }

    func contents(_ paths: [String]) -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        for path in paths {
            contents[path] = FileManager.default.contents(atPath: root.path + "/" + path).map { [UInt8]($0) }
        }
        return contents
    }

    /// What is wrong between the index and the tree: `verify`'s problems, and files on one side only.
    func indexDisagreements() throws -> [String] {
        var problems = try Mirror.using(root: root, index: index).storage.verify(fix: false).map {
            "\($0.problem): \($0.path)"
        }
        let indexed = Set(try index.entries().map(\.file.path))
        let held = Set(tree())
        problems += held.subtracting(indexed).sorted().map { "not in the index: \($0)" }
        problems += indexed.subtracting(held).sorted().map { "indexed but absent: \($0)" }
        return problems
    }

    /// The files a clean mirror of the server as it is now holds: a fresh root synced without faults.
    func reference() async throws -> [String: [UInt8]] {
        let other = MirrorRoot(path: folder.path + "/reference")
        try other.prepare()
        let otherIndex = try MirrorIndex(path: other.indexPath)
        for selection in try index.selections() { try otherIndex.select(selection) }
        _ = try await Subscriptions(index: otherIndex, client: http).add(
            url: server.baseURL + FaultWorld.feedPath, retention: .all)
        let report = try await MirrorSync(
            root: other, index: otherIndex, server: client, client: http, transferOptions: transfer
        ).run()
        guard report.failed.isEmpty, report.sourceErrors.isEmpty else {
            throw SyncError.notFound(
                "the reference mirror did not sync cleanly: \(report.failed) \(report.sourceErrors)")
        }
        let downloads = other.path + "/Downloads"
        var files: [String: [UInt8]] = [:]
        for relative in (FileManager.default.enumerator(atPath: downloads)?.allObjects as? [String]) ?? [] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: downloads + "/" + relative, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            files["Downloads/" + relative] = FileManager.default.contents(atPath: downloads + "/" + relative).map {
                [UInt8]($0)
            }
        }
        return files
    }

    /// Files that are not the server's exact bytes: every file must be in the reference with the same bytes
    /// (metadata.json files carry download dates, so they only have to exist there and be JSON).
    static func lostOrDamaged(_ held: [String: [UInt8]], reference: [String: [UInt8]]) -> [String] {
        var problems: [String] = []
        for (path, bytes) in held.sorted(by: { $0.key < $1.key }) {
            guard let expected = reference[path] else {
                problems.append("\(path) is not a file of the server's")
                continue
            }
            if path.hasSuffix("/metadata.json") {
                if (try? JSONSerialization.jsonObject(with: Data(bytes))) == nil {
                    problems.append("\(path) is not JSON")
                }
            } else if bytes != expected {
                problems.append(
                    "\(path) differs from the server's bytes (\(bytes.count) B, expected \(expected.count) B)")
            }
        }
        return problems
    }
}
