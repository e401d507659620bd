import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The plain layout end to end: a mirror synced from the test server (the golden library: a movie with two
/// versions, a unicode title, a series with specials and an episode with two versions) and a podcast, exported.
@Suite struct ExportGoldenTests {
    /// Runs `body` with ``mirror()`` and a fresh temporary folder (an export's destination, or the folder that holds
    /// it), both gone after it whatever it does.
    static func withMirror(_ body: (MirrorFixture, TemporaryDirectory) async throws -> Void) async throws {
        let fixture = try await mirror()
        defer { fixture.tearDown() }
        try await TemporaryDirectory.with { folder in try await body(fixture, folder) }
    }

    /// A synced mirror with the golden library selected and a podcast of four episodes.
    static func mirror() async throws -> MirrorFixture {
        let library = TestLibrary.golden()
        let fixture = try await MirrorFixture(library: library)
        try fixture.select(.movie, library.movies[0].id, allVersions: true)
        try fixture.select(.movie, library.movies[1].id)
        try fixture.select(.series, library.series[0].id, allVersions: true)
        let episodes = [
            ("g-1", "Pilot", "01", "/media/p1.mp3"), ("g-2", "Q&A: what's next?", "02", "/media/p2.mp3"),
            ("g-3", "Same day", "03", "/media/p3.mp3"), ("g-4", "Same day", "03", "/media/p4.mp3"),
        ]
        let items = episodes.map { guid, title, day, path in
            "<item><title>\(title.replacingOccurrences(of: "&", with: "&amp;"))</title><guid isPermaLink=\"false\">\(guid)</guid>"
                + "<pubDate>\(day) Jan 2025 10:00:00 +0000</pubDate>"
                + "<enclosure url=\"\(fixture.server.baseURL)\(path)\" length=\"3000\" type=\"audio/mpeg\"/></item>"
        }.joined()
        for (guid, _, _, path) in episodes {
            fixture.server.setFile(
                path, contents: Array(repeating: UInt8(ascii: "a"), count: 3000) + Array(guid.utf8),
                contentType: "audio/mpeg")
        }
        fixture.server.setFile(
            "/feed.xml",
            contents: Array(
                "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>The Show: Daily</title>\(items)</channel></rss>"
                    .utf8),
            contentType: "application/rss+xml")
        _ = try await Subscriptions(index: fixture.index, client: HTTPClient()).add(
            url: fixture.server.baseURL + "/feed.xml", retention: .all)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty, "\(report.failed)")
        return fixture
    }

    static func export(
        _ fixture: MirrorFixture, to destination: String, _ options: ExportOptions = ExportOptions(playlists: true)
    )
        throws -> ExportResult
    {
        try MirrorExport(root: fixture.root, index: fixture.index, destination: destination).run(options: options)
    }

    static let goldenTree = [
        "Movies/Amélie – 東京 ✨ (2001)/Amélie – 東京 ✨ (2001).eng.srt",
        "Movies/Amélie – 東京 ✨ (2001)/Amélie – 東京 ✨ (2001).mp4",
        "Movies/Amélie – 東京 ✨ (2001)/backdrop.jpg",
        "Movies/Amélie – 東京 ✨ (2001)/poster.jpg",
        "Movies/Test Movie 1 (2000)/Test Movie 1 (2000) - 720p.eng.srt",
        "Movies/Test Movie 1 (2000)/Test Movie 1 (2000) - 720p.mkv",
        "Movies/Test Movie 1 (2000)/Test Movie 1 (2000).eng.srt",
        "Movies/Test Movie 1 (2000)/Test Movie 1 (2000).mkv",
        "Movies/Test Movie 1 (2000)/backdrop.jpg",
        "Movies/Test Movie 1 (2000)/poster.jpg",
        "Podcasts/The Show_ Daily/2025-01-01 - Pilot.mp3",
        "Podcasts/The Show_ Daily/2025-01-02 - Q&A_ what's next_.mp3",
        "Podcasts/The Show_ Daily/2025-01-03 - Same day [SUFFIX].mp3",
        "Podcasts/The Show_ Daily/2025-01-03 - Same day.mp3",
        "Podcasts/The Show_ Daily/The Show_ Daily.m3u8",
        "Shows/Test Series 1 (2010)/Season 01/Season 01.m3u8",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E01 - Episode 1 - 4K.eng.srt",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E01 - Episode 1 - 4K.mkv",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E01 - Episode 1-thumb.jpg",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E01 - Episode 1.eng.srt",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E01 - Episode 1.mkv",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E02 - Episode 2-thumb.jpg",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E02 - Episode 2.eng.srt",
        "Shows/Test Series 1 (2010)/Season 01/Test Series 1 - S01E02 - Episode 2.mkv",
        "Shows/Test Series 1 (2010)/Season 01/folder.jpg",
        "Shows/Test Series 1 (2010)/Season 02/Season 02.m3u8",
        "Shows/Test Series 1 (2010)/Season 02/Test Series 1 - S02E01 - Episode 1-thumb.jpg",
        "Shows/Test Series 1 (2010)/Season 02/Test Series 1 - S02E01 - Episode 1.eng.srt",
        "Shows/Test Series 1 (2010)/Season 02/Test Series 1 - S02E01 - Episode 1.mkv",
        "Shows/Test Series 1 (2010)/Season 02/Test Series 1 - S02E02 - Episode 2-thumb.jpg",
        "Shows/Test Series 1 (2010)/Season 02/Test Series 1 - S02E02 - Episode 2.avi",
        "Shows/Test Series 1 (2010)/Season 02/Test Series 1 - S02E02 - Episode 2.eng.srt",
        "Shows/Test Series 1 (2010)/Season 02/folder.jpg",
        "Shows/Test Series 1 (2010)/Specials/Specials.m3u8",
        "Shows/Test Series 1 (2010)/Specials/Test Series 1 - S00E01 - Behind the Scenes-thumb.jpg",
        "Shows/Test Series 1 (2010)/Specials/Test Series 1 - S00E01 - Behind the Scenes.eng.srt",
        "Shows/Test Series 1 (2010)/Specials/Test Series 1 - S00E01 - Behind the Scenes.mkv",
        "Shows/Test Series 1 (2010)/Specials/folder.jpg",
        "Shows/Test Series 1 (2010)/backdrop.jpg",
        "Shows/Test Series 1 (2010)/poster.jpg",
    ]

    @Test func exportsTheGoldenTreeAndASecondExportIsANoOp() async throws {
        try await Self.withMirror { fixture, destination in
            let result = try Self.export(fixture, to: destination.path)
            #expect(result.failed.isEmpty && result.skipped.isEmpty && result.stopped == nil, "\(result)")
            #expect(result.mirrorProblems.isEmpty, "\(result.mirrorProblems)")
            let tree = destination.allFiles().filter { $0 != ExportManifest.fileName }
            // The colliding podcast episode (same day, same title) gets the disambiguator of its episode id.
            let suffix = ExportNaming.disambiguator("g-4")
            let expected = Self.goldenTree.map { $0.replacingOccurrences(of: " [SUFFIX]", with: suffix) }.sorted()
            #expect(tree == expected, "\(tree)")
            #expect(result.exported.count == expected.count)

            // Every exported file holds its source's bytes.
            let manifest = try JSONDecoder().decode(
                ExportManifest.self,
                from: try #require(FileManager.default.contents(atPath: destination.file(ExportManifest.fileName))))
            #expect(Set(manifest.files.keys) == Set(expected))
            for (path, entry) in manifest.files {
                guard let source = entry.source else { continue }
                #expect(
                    FileManager.default.contents(atPath: destination.file(path))
                        == FileManager.default.contents(atPath: fixture.root.path + "/" + source), "\(path)")
            }
            // Playlists: relative names in episode order.
            let season = try String(
                contentsOfFile: destination.file("Shows/Test Series 1 (2010)/Season 01/Season 01.m3u8"), encoding: .utf8
            )
            #expect(
                season == """
                    #EXTM3U
                    #EXTINF:1320,Episode 1
                    Test Series 1 - S01E01 - Episode 1.mkv
                    #EXTINF:1320,Episode 2
                    Test Series 1 - S01E02 - Episode 2.mkv

                    """)
            let podcast = try String(
                contentsOfFile: destination.file("Podcasts/The Show_ Daily/The Show_ Daily.m3u8"), encoding: .utf8)
            #expect(
                podcast.split(separator: "\n").filter { !$0.hasPrefix("#") } == [
                    "2025-01-01 - Pilot.mp3", "2025-01-02 - Q&A_ what's next_.mp3", "2025-01-03 - Same day.mp3",
                    "2025-01-03 - Same day\(suffix).mp3",
                ])

            // The second export copies nothing and changes nothing.
            let before = destination.allFiles().map { ($0, ExportFileSystem.identity(destination.file($0))?.identity) }
            let second = try Self.export(fixture, to: destination.path)
            #expect(second.changedNothing)
            #expect(second.planned.isEmpty)
            #expect(second.unchanged == expected.count)
            let after = destination.allFiles().map { ($0, ExportFileSystem.identity(destination.file($0))?.identity) }
            #expect(after.map(\.0) == before.map(\.0))
            #expect(zip(after, before).allSatisfy { $0.1 == $1.1 })
        }
    }

    @Test func aUsersFilesAreNeverOverwrittenAndDeleteIsGuarded() async throws {
        try await Self.withMirror { fixture, destination in
            let folder = destination.file("Movies/Test Movie 1 (2000)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let mine = Data("my own poster".utf8)
            #expect(FileManager.default.createFile(atPath: folder + "/poster.jpg", contents: mine))
            #expect(FileManager.default.createFile(atPath: folder + "/notes.txt", contents: Data("notes".utf8)))

            let first = try Self.export(fixture, to: destination.path)
            #expect(first.skipped.map(\.path) == ["Movies/Test Movie 1 (2000)/poster.jpg"])
            #expect(first.skipped.first?.reason.contains("did not write") == true)
            #expect(FileManager.default.contents(atPath: folder + "/poster.jpg") == mine)
            #expect(first.exported.count == Self.goldenTree.count - 1)

            // The movie leaves the mirror: its exported files are leftovers, kept without --delete.
            let movie = fixture.server.library.movies[0].id
            _ = try Mirror.using(root: fixture.root, index: fixture.index).removal.remove(id: movie)
            let kept = try Self.export(fixture, to: destination.path)
            #expect(kept.leftover.count == 5, "\(kept.leftover)")  // two versions, their subtitles, the backdrop
            #expect(kept.deleted.isEmpty)
            // More than --max-delete would go: nothing is deleted.
            let guarded = try Self.export(
                fixture, to: destination.path, ExportOptions(playlists: true, delete: true, maxDelete: 4))
            #expect(guarded.deletionAborted?.contains("--max-delete 4") == true)
            #expect(guarded.deleted.isEmpty)
            #expect(FileManager.default.fileExists(atPath: folder + "/Test Movie 1 (2000).mkv"))
            // Within the guard: the export's own files go; the user's poster and notes and their folder stay.
            let deleted = try Self.export(
                fixture, to: destination.path, ExportOptions(playlists: true, delete: true, maxDelete: 5))
            #expect(deleted.deleted.count == 5)
            #expect(deleted.deletionAborted == nil)
            let left = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.sorted()
            #expect(left == ["notes.txt", "poster.jpg"])
            #expect(FileManager.default.contents(atPath: folder + "/poster.jpg") == mine)
            // Nothing else was touched, and the next export is a no-op.
            let again = try Self.export(fixture, to: destination.path, ExportOptions(playlists: true, delete: true))
            #expect(again.changedNothing && again.leftover.isEmpty)
            #expect(again.skipped.isEmpty)
        }
    }

    @Test func aPlaylistListsOnlyTheFilesThatAreThere() async throws {
        try await Self.withMirror { fixture, destination in
            let season = "Shows/Test Series 1 (2010)/Season 01"
            let episode2 = season + "/Test Series 1 - S01E02 - Episode 2.mkv"
            try FileManager.default.createDirectory(atPath: destination.file(season), withIntermediateDirectories: true)
            let mine = Data("the user's own video".utf8)
            #expect(FileManager.default.createFile(atPath: destination.file(episode2), contents: mine))

            let first = try Self.export(fixture, to: destination.path)
            #expect(first.skipped.map(\.path) == [episode2])
            // The playlist does not send a player to the user's file, nor to a file that is not the episode.
            let playlist = { try String(contentsOfFile: destination.file(season + "/Season 01.m3u8"), encoding: .utf8) }
            #expect(
                try playlist() == """
                    #EXTM3U
                    #EXTINF:1320,Episode 1
                    Test Series 1 - S01E01 - Episode 1.mkv

                    """)
            #expect(FileManager.default.contents(atPath: destination.file(episode2)) == mine)

            // The user moves the file away: the next export places the episode and lists it.
            try FileManager.default.removeItem(atPath: destination.file(episode2))
            let second = try Self.export(fixture, to: destination.path)
            #expect(second.exported.sorted() == [season + "/Season 01.m3u8", episode2].sorted(), "\(second.exported)")
            #expect(try playlist().split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 2)
            #expect(try Self.export(fixture, to: destination.path).changedNothing)
        }
    }

    @Test func aDestinationPulledOutMidExportStopsWithOneLineAndIsNotMadeAgain() async throws {
        try await Self.withMirror { fixture, parent in
            let destination = parent.file("stick")
            let mirrorBefore = TreeReading.files(under: fixture.root.path + "/Downloads")
            // The stick goes after a few files: its folder and everything on it, at once (moved away in one rename, as
            // an unmount takes the whole tree; the other worker may be writing at that moment).
            let pulled = LockedFlag()
            let result = try MirrorExport(root: fixture.root, index: fixture.index, destination: destination).run(
                options: ExportOptions(playlists: true),
                progress: { progress in
                    if progress.filesDone == 5 && pulled.setOnce() {
                        _ = rename(destination, parent.file("pulled"))
                    }
                })
            #expect(pulled.isSet)
            let stopped = try #require(result.stopped)
            #expect(stopped.contains("the destination \(destination) is gone"), "\(stopped)")
            #expect(result.failed.isEmpty, "one line for the run, not one per file: \(result.failed)")
            // Nothing was made again where the stick was, and the mirror is as it was.
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(TreeReading.files(under: fixture.root.path + "/Downloads") == mirrorBefore)

            // Plugged in again (empty here): the next export does the whole job.
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: false)
            let again = try MirrorExport(root: fixture.root, index: fixture.index, destination: destination).run(
                options: ExportOptions(playlists: true))
            #expect(again.stopped == nil && again.failed.isEmpty, "\(again)")
            #expect(again.exported.count == Self.goldenTree.count)
        }
    }

    @Test(.enabled(if: SmallTmpfs.canMount, "needs root to mount a small tmpfs"))
    func aStickUnmountedMidExportLeavesNothingOnTheMountPoint() async throws {
        let fixture = try await Self.mirror()
        defer { fixture.tearDown() }
        let stick = try #require(SmallTmpfs(bytes: 16 * 1024 * 1024))
        defer { stick.unmount() }
        // The stick goes after a few files; its mount point stays behind as an empty folder of the disk below.
        let pulled = LockedFlag()
        let result = try MirrorExport(root: fixture.root, index: fixture.index, destination: stick.path).run(
            options: ExportOptions(playlists: true),
            progress: { progress in
                guard progress.filesDone == 5 && pulled.setOnce() else { return }
                // Lazy: the export still holds its journal open there.
                _ = try? Spawned("/bin/umount", ["-l", stick.path]).finish()
            })
        #expect(pulled.isSet)
        #expect(result.stopped?.contains("the destination \(stick.path) is gone") == true, "\(result)")
        // Nothing was made on the disk the mount point belongs to.
        #expect((try? FileManager.default.contentsOfDirectory(atPath: stick.path)) == [])
    }

    @Test func aSourceReplacedInTheMirrorIsExportedAgainAndOnlyIt() async throws {
        try await Self.withMirror { fixture, destination in
            _ = try Self.export(fixture, to: destination.path, ExportOptions(copyOnly: true))
            // Another sync replaced one podcast episode (a new file under the same name).
            let entry = try #require(try fixture.index.entries().first { $0.file.key.rawValue.hasSuffix(":g-1") })
            let path = fixture.root.path + "/" + entry.file.path
            let bytes = [UInt8](repeating: UInt8(ascii: "z"), count: Int(entry.file.size))
            try Data(bytes).write(to: URL(fileURLWithPath: path + ".new"))
            #expect(rename(path + ".new", path) == 0)
            let second = try Self.export(fixture, to: destination.path, ExportOptions(copyOnly: true))
            #expect(second.exported == ["Podcasts/The Show_ Daily/2025-01-01 - Pilot.mp3"])
            #expect(second.methods == ["copy": 1])
            #expect(
                FileManager.default.contents(
                    atPath: destination.file("Podcasts/The Show_ Daily/2025-01-01 - Pilot.mp3"))
                    == Data(bytes))
        }
    }

    @Test func aDestinationOverlappingTheMirrorIsRefused() async throws {
        let fixture = try await MirrorFixture(library: TestLibrary(movies: 1, series: 0))
        defer { fixture.tearDown() }
        for destination in [
            fixture.root.path, fixture.root.path + "/Downloads/usb",
            (fixture.root.path as NSString).deletingLastPathComponent,
        ] {
            #expect(throws: SyncError.self) {
                _ = try MirrorExport(root: fixture.root, index: fixture.index, destination: destination).run(
                    options: ExportOptions())
            }
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/Downloads/usb"))
    }
}

/// A flag set once from any thread.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    /// Sets the flag; true only for the call that set it.
    func setOnce() -> Bool {
        lock.withLock {
            defer { value = true }
            return !value
        }
    }
    var isSet: Bool { lock.withLock { value } }
}
