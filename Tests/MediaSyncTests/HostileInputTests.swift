import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A server and feeds crafted to hurt, and symlinks planted inside the root. Bar: nothing
/// written or deleted outside the root (an ``OutsideWatcher`` over the test's whole temporary tree, plus the
/// folders a hostile path would reach), and each rejected or sanitised item reported once: a rejected item is
/// one line of `report.rejected` (or of `report.failed` when the server refuses to deliver it safely), a
/// sanitised one is stored once under a safe name (one line of `report.downloaded`) and its metadata keeps the
/// original. (`JellyfinMirrorTests` has the first hostile-id and symlink tests; these extend them.)
///
/// `HOSTILE_INPUT_TSV=PATH` makes each test append one row per item tried (`Scripts/hostile-input.sh`).
@Suite struct HostileInputTests {
    // MARK: Jellyfin

    @Test func hostileIdsNamesAndVersionsFromTheServerAreRejectedOnceAndNothingLeavesTheRoot() async throws {
        let place = try HostilePlace()
        let m = place.marker
        var library = TestLibrary(
            movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 3_000, seed: 9)
        let moviesView = library.moviesViewId
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        func movie(id: String, name: String = "Hostile", sourceId: String? = nil, container: String = "mkv") -> TestItem
        {
            // The version keeps a plain name: the test server would put it raw in Content-Disposition.
            let source = TestMediaSource(
                id: sourceId ?? id, name: "Hostile", path: "/media/Movies/\(m)/x.\(container)", container: container,
                size: 2_000,
                etag: "etag-\(m)", runTimeTicks: 1, lastModified: date)
            return TestItem(
                id: id, name: name, type: "Movie", parentId: moviesView, path: source.path, mediaSources: [source],
                imageTags: ["Primary": "tag-\(m)"], dateCreated: date, etag: "etag-\(m)", isFolder: false)
        }
        // Items whose id cannot be a file or folder name: each must be refused with one line.
        let hostileIds: [(String, String)] = [
            ("id with ../", "../../outside/\(m)-traversal"),
            ("id with many ../", String(repeating: "../", count: 12) + "tmp/\(m)-deep"),
            ("absolute id", place.outside + "/\(m)-absolute"),
            ("id with NUL", "\(m)-nul\u{0}.mkv"),
            ("id with a newline", "\(m)-new\nline"),
            ("4 KB id", m + String(repeating: "a", count: 4_096)),
            ("NFC id", "\(m)-caf\u{E9}"),
            ("NFD id", "\(m)-cafe\u{301}"),
            ("id CON", "CON"),
            ("id NUL", "NUL"),
            ("id aux.mp3", "aux.mp3"),
            ("id com1", "com1"),
        ]
        for (_, id) in hostileIds { library.items.append(movie(id: id)) }
        // A movie whose only version has a hostile id; another whose primary version has one (its second is fine).
        let lonelyId = "0000000000000000000000000000beef"
        let lonelyVersion = "../../outside/\(m)-version"
        library.items.append(movie(id: lonelyId, sourceId: lonelyVersion))
        let twoVersions = library.movies[0]
        let badPrimary = "\(m)/../../primary"
        library.updateMediaSource(twoVersions.mediaSources[0].id) { $0.id = badPrimary }
        // Sanitised: a hostile name never becomes a path; a hostile container becomes the extension `bin`.
        let namedId = "0000000000000000000000000000cafe"
        library.items.append(movie(id: namedId, name: "../../outside/\(m)-name\u{0}\nCON"))
        let containerId = "0000000000000000000000000000f00d"
        library.items.append(movie(id: containerId, container: "../../\(m)"))
        // A series with two hostile episodes beside a fine one.
        let series = library.series[0]
        let season = library.seasons[0]
        let goodEpisode = library.episodes[0]
        var hostileEpisodes: [(String, String)] = []
        for (number, (label, id)) in [
            ("episode id with ../", "../\(m)-episode"), ("episode id with a newline", "\(m)-ep\nx"),
        ]
        .enumerated() {
            hostileEpisodes.append((label, id))
            let source = TestMediaSource(
                id: id, name: "E", path: "/media/Shows/e\(number).mkv", size: 1_000, etag: "e\(number)",
                runTimeTicks: 1,
                lastModified: date)
            library.items.append(
                TestItem(
                    id: id, name: "Hostile episode", type: "Episode", parentId: season.id, seriesId: series.id,
                    seriesName: series.name, seasonId: season.id, seasonName: season.name, indexNumber: 10 + number,
                    parentIndexNumber: 1, path: source.path, mediaSources: [source], dateCreated: date,
                    etag: "e\(number)",
                    isFolder: false))
        }
        let world = try await HostileWorld(place, library: library)
        defer { world.tearDown() }
        try world.index.select(Selection(id: moviesView, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
        try world.index.select(Selection(id: series.id, kind: .series, addedAt: "2026-01-01T00:00:00Z"))

        let watcher = world.watch()
        #expect(watcher.usesInotify, "inotify is not available: only the snapshot watches")
        world.record(["watcher", "inotify", watcher.usesInotify ? "on" : "off (snapshots only)", "0"])
        let report = try await world.sync()
        let outside = watcher.changes()
        #expect(outside.isEmpty, "\(outside)")
        #expect(report.failed.isEmpty && report.sourceErrors.isEmpty, "\(report.failed) \(report.sourceErrors)")

        // One line per refused item, naming it.
        let refused: [(String, String)] =
            hostileIds + hostileEpisodes + [("the only version's id", lonelyVersion), ("a version's id", badPrimary)]
        #expect(report.rejected.count == refused.count, "\(report.rejected.map { $0.prefix(120) })")
        for (label, id) in refused {
            let naming = report.rejected.filter { HostileWorld.bytes($0, contain: id.debugDescription) }
            #expect(naming.count == 1, "\(label): \(naming.map { $0.prefix(120) })")
            world.record(["jellyfin", label, naming.count == 1 ? "rejected" : "NOT REPORTED ONCE", "\(outside.count)"])
        }
        // The sanitised and the fine ones are mirrored once, under their ids.
        let tree = world.tree()
        for (label, id, suffix, outcome) in [
            ("hostile name", namedId, ".mkv", "sanitised (the name is never a path)"),
            ("hostile container", containerId, ".bin", "sanitised (extension bin)"),
            ("a movie's other version", twoVersions.id, ".mkv", "mirrored (its fine version)"),
        ] {
            let media = report.downloaded.filter { $0.hasPrefix("Downloads/\(id)/\(id)-") && $0.hasSuffix(suffix) }
            #expect(media.count == 1, "\(label): \(report.downloaded)")
            world.record(["jellyfin", label, media.count == 1 ? outcome : "NOT STORED ONCE", "\(outside.count)"])
        }
        #expect(tree.contains { $0.hasSuffix("/\(goodEpisode.id)-\(goodEpisode.id).mkv") })
        let metadata = try #require(world.json("Downloads/\(namedId)/metadata.json"))
        #expect((metadata["item"] as? [String: Any])?["Name"] as? String == "../../outside/\(m)-name\u{0}\nCON")
        #expect(tree.allSatisfy { SafeName.isContained($0) && !$0.contains(m) }, "\(tree)")

        // Every sync says it again, once per item; nothing changes.
        let again = try await world.sync()
        #expect(again.rejected.count == refused.count && again.changedNothing)
        #expect(watcher.changes().isEmpty)
    }

    // MARK: Podcasts

    @Test func hostileFeedsAreSanitisedOrRefusedOnceAndNothingLeavesTheRoot() async throws {
        let world = try await HostileWorld(try HostilePlace())
        defer { world.tearDown() }
        let m = world.marker
        let server = world.server
        let base = server.baseURL
        struct Item {
            var label: String
            var guid: String
            var path: String
            /// `sanitised` (stored under a safe name), `kept` (its guid is already a safe name), or `refused`.
            var expected: String
        }
        let items: [Item] = [
            Item(
                label: "guid with ../", guid: "../../../outside/\(m)-ep-traversal", path: "/pod/1.mp3",
                expected: "sanitised"),
            Item(
                label: "absolute guid", guid: world.outside + "/\(m)-ep-absolute", path: "/pod/2.mp3",
                expected: "sanitised"),
            Item(label: "guid with a newline", guid: "\(m)-ep\nnewline", path: "/pod/3.mp3", expected: "sanitised"),
            Item(
                label: "4 KB guid", guid: m + String(repeating: "g", count: 4_096), path: "/pod/4.mp3",
                expected: "sanitised"),
            Item(label: "NFC guid", guid: "\(m)-\u{E9}pisode", path: "/pod/5.mp3", expected: "sanitised"),
            Item(label: "NFD guid", guid: "\(m)-e\u{301}pisode", path: "/pod/6.mp3", expected: "sanitised"),
            Item(label: "guid CON", guid: "CON", path: "/pod/7.mp3", expected: "sanitised"),
            Item(label: "guid NUL", guid: "NUL", path: "/pod/8.mp3", expected: "sanitised"),
            Item(label: "guid aux.mp3", guid: "aux.mp3", path: "/pod/9.mp3", expected: "sanitised"),
            Item(label: "guid com1", guid: "com1", path: "/pod/10.mp3", expected: "sanitised"),
            Item(label: "enclosure named aux.mp3", guid: "\(m)-enclosure-aux", path: "/pod/aux.mp3", expected: "kept"),
            Item(
                label: "enclosure name with encoded ../", guid: "\(m)-enclosure-dots",
                path: "/pod/..%2F..%2F\(m)-escape.mp3",
                expected: "kept"),
            Item(label: "enclosure file://", guid: "\(m)-file-url", path: "file:///etc/hostname", expected: "refused"),
            Item(
                label: "enclosure redirected to file://", guid: "\(m)-to-file", path: "/pod/to-file.mp3",
                expected: "refused"),
            Item(
                label: "enclosure redirected to ftp://", guid: "\(m)-to-ftp", path: "/pod/to-ftp.mp3",
                expected: "refused"),
        ]
        server.inject(.redirect(location: "file:///etc/hostname", status: 302), path: "/pod/to-file.mp3", count: 1_000)
        server.inject(
            .redirect(location: "ftp://127.0.0.1:\(server.port)/x.mp3", status: 302), path: "/pod/to-ftp.mp3",
            count: 1_000)
        for (position, item) in items.enumerated() where item.path.hasPrefix("/") {
            let decoded = item.path.removingPercentEncoding ?? item.path
            server.setFile(decoded, contents: HostileWorld.audio(position), contentType: "audio/mpeg")
        }
        let feed = HostileWorld.feed(
            title: "Hostile", podcastGUID: "../../outside/\(m)-podcast",
            items: items.map { ($0.guid, $0.path.hasPrefix("/") ? base + $0.path : $0.path) })
        server.setFile("/pod/hostile.xml", contents: feed, contentType: "application/rss+xml")
        // A feed whose item holds a NUL byte (XML forbids it): whatever the parser makes of it must be reported.
        var withNUL = HostileWorld.feed(
            title: "NUL", podcastGUID: nil,
            items: [("\(m)-fine", base + "/pod/fine.mp3"), ("\(m)-nul-X", base + "/pod/nul.mp3")])
        if let x = withNUL.firstIndex(of: UInt8(ascii: "X")) { withNUL[x] = 0 }
        server.setFile("/pod/nul.xml", contents: withNUL, contentType: "application/rss+xml")
        server.setFile("/pod/fine.mp3", contents: HostileWorld.audio(100), contentType: "audio/mpeg")
        server.setFile("/pod/nul.mp3", contents: HostileWorld.audio(101), contentType: "audio/mpeg")

        let subscriptions = Subscriptions(index: world.index, client: world.http)
        let hostile = try await subscriptions.add(url: base + "/pod/hostile.xml", retention: .all)
        // The hostile podcast:guid is not a folder name: the id is the Podcasting 2.0 one from the URL.
        #expect(hostile.id == PodcastLayout.podcastId(feedURL: base + "/pod/hostile.xml", declaredGUID: nil))
        world.record(["podcast", "hostile podcast:guid", hostile.id.contains(m) ? "NOT SANITISED" : "sanitised", "0"])
        let nul = try await subscriptions.add(url: base + "/pod/nul.xml", retention: .all)

        let watcher = world.watch()
        let report = try await world.sync()
        let outside = watcher.changes()
        #expect(outside.isEmpty, "\(outside)")
        #expect(report.sourceErrors.isEmpty, "\(report.sourceErrors)")

        let folder = "Downloads/\(hostile.id)/"
        let podcastMetadata = try #require(world.json(folder + "metadata.json"))
        let episodes = (podcastMetadata["episodes"] as? [[String: Any]]) ?? []
        // Keyed by the guid's scalars: Swift's String equality would merge the NFC and NFD twins.
        func key(_ guid: String) -> String {
            guid.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ".")
        }
        var files: [String: String] = [:]
        for episode in episodes {
            if let guid = episode["guid"] as? String, let name = episode["fileName"] as? String {
                files[key(guid)] = name
            }
        }
        for (position, item) in items.enumerated() {
            let outcome: String
            switch item.expected {
            case "refused":
                let lines = (report.rejected + report.failed.map { "\($0.path): \($0.message)" }).filter {
                    $0.contains(item.guid)
                }
                #expect(lines.count == 1, "\(item.label): \(report.rejected) \(report.failed)")
                #expect(files[key(item.guid)] == nil)
                outcome = lines.count == 1 ? "refused" : "NOT REPORTED ONCE"
            default:
                let name = files[key(item.guid)]
                let stored = report.downloaded.filter { $0.hasPrefix(folder) && name.map($0.hasSuffix) == true }
                #expect(stored.count == 1, "\(item.label): \(String(describing: name)) \(report.downloaded)")
                #expect(world.bytes(folder + (name ?? "-")) == HostileWorld.audio(position), "\(item.label)")
                if let name {
                    #expect(SafeName.isContained(name) && !name.contains(m + "/"))
                    #expect(item.expected == "kept" ? name.hasPrefix(item.guid) : name != item.guid + ".mp3")
                }
                outcome = stored.count == 1 ? (item.expected == "kept" ? "mirrored" : "sanitised") : "NOT STORED ONCE"
            }
            world.record(["podcast", item.label, outcome, "\(outside.count)"])
        }
        // Twins never share a file.
        let nfc = files[key("\(m)-\u{E9}pisode")]
        let nfd = files[key("\(m)-e\u{301}pisode")]
        #expect(nfc != nil && nfd != nil && nfc != nfd)

        // The NUL feed: its fine episode is mirrored; the other is either mirrored under a safe name or reported.
        let nulFolder = "Downloads/\(nul.id)/"
        #expect(report.downloaded.contains(nulFolder + "\(m)-fine.mp3"), "\(report.downloaded)")
        let nulStored = report.downloaded.filter { $0.hasPrefix(nulFolder) && $0 != nulFolder + "\(m)-fine.mp3" }
        let nulReported =
            report.rejected.filter { $0.contains("nul") } + report.failed.map(\.path).filter { $0.hasPrefix(nulFolder) }
        #expect(nulStored.count + nulReported.count == 1, "\(nulStored) \(nulReported)")
        world.record(["podcast", "guid with NUL", nulStored.count == 1 ? "sanitised" : "refused", "\(outside.count)"])

        let again = try await world.sync()
        #expect(again.downloaded.isEmpty && watcher.changes().isEmpty)
    }

    // MARK: Symlinks planted inside the root

    enum Plant: String, CaseIterable, Sendable {
        case itemFolder = "Downloads/<id> → outside"
        case imagesFolder = "Downloads/<id>/Images → outside"
        case podcastFolder = "Downloads/<podcast> → outside"
        case stagingFolder = ".mediasync/staging → outside"
        case stagingPart = "a partial file in staging → outside"
        case finalFile = "a final file → outside"
        case deleteThrough = "sync --delete through Downloads/<id> → outside"
    }

    @Test(arguments: Plant.allCases)
    func aSymlinkPlantedInsideTheRootLeadsNothingOutside(_ plant: Plant) async throws {
        var library = TestLibrary(movies: 2, series: 0, mediaSize: 3_000, seed: 11)
        let (kept, added) = (library.movies[0], library.movies[1])
        library.updateMediaSource(added.mediaSources[0].id) { $0.size = 1_200_000 }
        let world = try await HostileWorld(try HostilePlace(), library: library)
        defer { world.tearDown() }
        try world.index.select(Selection(id: kept.id, kind: .movie, addedAt: "2026-01-01T00:00:00Z"))
        world.server.setFile(
            "/pod/feed.xml",
            contents: HostileWorld.feed(
                title: "P", podcastGUID: nil, items: [("e1", world.server.baseURL + "/pod/e1.mp3")]),
            contentType: "application/rss+xml")
        world.server.setFile("/pod/e1.mp3", contents: HostileWorld.audio(1), contentType: "audio/mpeg")
        let podcast = try await Subscriptions(index: world.index, client: world.http).add(
            url: world.server.baseURL + "/pod/feed.xml", retention: .all)
        let baseline = try await world.sync()
        try #require(baseline.failed.isEmpty && baseline.sourceErrors.isEmpty, "\(baseline)")

        // New work after the plant: the second movie (large: its partial file is named in staging) and an episode.
        try world.index.select(Selection(id: added.id, kind: .movie, addedAt: "2026-01-02T00:00:00Z"))
        world.server.setFile(
            "/pod/feed.xml",
            contents: HostileWorld.feed(
                title: "P", podcastGUID: nil,
                items: [("e1", world.server.baseURL + "/pod/e1.mp3"), ("e2", world.server.baseURL + "/pod/e2.mp3")]),
            contentType: "application/rss+xml", etag: "v2")
        world.server.setFile("/pod/e2.mp3", contents: HostileWorld.audio(2), contentType: "audio/mpeg")

        let fm = FileManager.default
        let target = world.outside + "/" + plant.rawValue.filter { $0.isLetter }
        try fm.createDirectory(atPath: target, withIntermediateDirectories: true)
        let sentinel = Array("sentinel: must survive".utf8)
        func plantSentinels(_ names: [String]) throws {
            for name in names {
                try fm.createDirectory(
                    atPath: (target + "/" + name as NSString).deletingLastPathComponent,
                    withIntermediateDirectories: true)
                // Written with O_CLOEXEC: a file descriptor a child process of a test running beside this one
                // inherited (Foundation's createFile opens without it) is closed when that child exits, and the
                // watcher would see that close as a write outside the root.
                let descriptor = open(target + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                #expect(descriptor >= 0)
                let written = sentinel.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                #expect(written == sentinel.count)
                #expect(close(descriptor) == 0)
            }
        }
        let keptFolder = world.root.path + "/Downloads/\(kept.id)"
        let addedMedia = "\(added.id)-\(added.mediaSources[0].id).mkv"
        var link = ""
        switch plant {
        case .itemFolder:
            try plantSentinels([addedMedia, "metadata.json", "Images/Primary.jpeg"])
            link = world.root.path + "/Downloads/\(added.id)"
        case .imagesFolder:
            try plantSentinels(["Primary.jpeg", "Backdrop.jpeg"])
            try fm.removeItem(atPath: keptFolder + "/Images")
            link = keptFolder + "/Images"
        case .podcastFolder:
            try plantSentinels(["e1.mp3", "e2.mp3", "metadata.json"])
            try fm.removeItem(atPath: world.root.path + "/Downloads/\(podcast.id)")
            link = world.root.path + "/Downloads/\(podcast.id)"
        case .stagingFolder:
            try plantSentinels(["keep-me"])
            try? fm.removeItem(atPath: world.root.stagingDirectory)
            link = world.root.stagingDirectory
        case .stagingPart:
            // The partial file a resume would append to, named as the engine names it, planted as a symlink.
            try plantSentinels(["victim"])
            let destination = world.root.path + "/Downloads/\(added.id)/" + addedMedia
            let part = StagingNames.partPath(staging: world.root.stagingDirectory, destination: destination)
            try fm.createDirectory(atPath: world.root.stagingDirectory, withIntermediateDirectories: true)
            let url = try world.client.downloadURL(mediaSourceId: added.mediaSources[0].id)
            #expect(
                fm.createFile(
                    atPath: part + ".meta",
                    contents: try JSONEncoder().encode(["url": url, "validator": "Tue, 14 Nov 2023 22:13:20 GMT"])))
            try fm.createSymbolicLink(atPath: part, withDestinationPath: target + "/victim")
        case .finalFile:
            try plantSentinels(["media.mkv"])
            let media = keptFolder + "/\(kept.id)-\(kept.mediaSources[0].id).mkv"
            try fm.removeItem(atPath: media)
            try fm.createSymbolicLink(atPath: media, withDestinationPath: target + "/media.mkv")
        case .deleteThrough:
            // The mirrored movie's folder, copied outside (same names and sizes), and the folder swapped for a link.
            for name in try fm.subpathsOfDirectory(atPath: keptFolder) {
                var isDirectory: ObjCBool = false
                _ = fm.fileExists(atPath: keptFolder + "/" + name, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    try fm.createDirectory(atPath: target + "/" + name, withIntermediateDirectories: true)
                } else {
                    try fm.copyItem(atPath: keptFolder + "/" + name, toPath: target + "/" + name)
                }
            }
            try fm.removeItem(atPath: keptFolder)
            link = keptFolder
            #expect(try world.index.unselect(id: kept.id))
        }
        if !link.isEmpty { try fm.createSymbolicLink(atPath: link, withDestinationPath: target) }

        let watcher = world.watch()
        var outcome: String
        var lines: [String] = []
        do {
            let report = try await world.sync(delete: true)
            lines = report.failed.map(\.path) + report.rejected + report.sourceErrors
            outcome =
                lines.isEmpty
                ? "completed: the link replaced or removed inside the root" : "refused \(lines.count) file(s)"
            #expect(Set(lines).count == lines.count, "reported more than once: \(lines)")
        } catch let error as SyncError {
            outcome = "stopped: \(error.description)"
            lines = [error.description]
        }
        let outside = watcher.changes()
        #expect(outside.isEmpty, "\(plant.rawValue): \(outside)")
        switch plant {
        case .finalFile, .stagingPart:
            // The link is replaced (or discarded) inside the root; the run completes.
            #expect(lines.isEmpty, "\(lines)")
        default:
            #expect(!lines.isEmpty, "\(plant.rawValue): nothing was reported")
        }
        world.record(["symlink", plant.rawValue, outcome, "\(outside.count)"])

        // Without the link, the next sync completes.
        if !link.isEmpty { try fm.removeItem(atPath: link) }
        let next = try await world.sync(delete: true)
        #expect(next.failed.isEmpty && next.sourceErrors.isEmpty, "\(plant.rawValue): \(next)")
        #expect(try Mirror.using(root: world.root, index: world.index).storage.verify(fix: false).isEmpty)
    }

    @Test(arguments: [Plant.itemFolder, .imagesFolder, .stagingFolder])
    func gcFollowsNoPlantedSymlinkOutOfTheRoot(_ plant: Plant) async throws {
        let library = TestLibrary(movies: 1, series: 0, mediaSize: 3_000, seed: 12)
        let movie = library.movies[0]
        let world = try await HostileWorld(try HostilePlace(), library: library)
        defer { world.tearDown() }
        try world.index.select(Selection(id: movie.id, kind: .movie, addedAt: "2026-01-01T00:00:00Z"))
        #expect(try await world.sync().failed.isEmpty)
        let fm = FileManager.default
        let target = world.outside + "/gc-" + plant.rawValue.filter { $0.isLetter }
        try fm.createDirectory(atPath: target, withIntermediateDirectories: true)
        // Files gc would call orphans if it went through the link.
        for name in ["orphan.mkv", "Primary.jpeg", "stale.part"] {
            #expect(fm.createFile(atPath: target + "/" + name, contents: Data("sentinel".utf8)))
        }
        let link: String
        switch plant {
        case .itemFolder: link = world.root.path + "/Downloads/0000000000000000000000000000dead"
        case .imagesFolder:
            link = world.root.path + "/Downloads/\(movie.id)/Images"
            try fm.removeItem(atPath: link)
        default:
            link = world.root.stagingDirectory
            try? fm.removeItem(atPath: link)
        }
        try fm.createSymbolicLink(atPath: link, withDestinationPath: target)

        let watcher = world.watch()
        var outcome: String
        do {
            let lock = try RootLock(root: world.root)
            let removed = try Mirror.using(root: world.root, index: world.index).garbageCollector.collect()
            withExtendedLifetime(lock) {}
            outcome = "removed the link itself (\(removed.joined(separator: ", ")))"
        } catch {
            outcome = "stopped: \(error)"
        }
        let outside = watcher.changes()
        #expect(outside.isEmpty, "\(plant.rawValue): \(outside)")
        world.record(["gc", plant.rawValue, outcome, "\(outside.count)"])
    }
}

/// The test's temporary tree: the mirror's root and, beside it, "outside" folders with sentinels; and the marker
/// every hostile name carries.
struct HostilePlace: Sendable {
    let folder: TemporaryDirectory
    let root: MirrorRoot
    let outside: String
    let marker: String

    init() throws {
        folder = try TemporaryDirectory()
        marker = "hostile" + String(UUID().uuidString.prefix(8)).lowercased()
        root = MirrorRoot(path: folder.path + "/root")
        outside = folder.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside + "/untouched", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(atPath: outside + "/untouched/sentinel", contents: Data("do not touch".utf8))
        )
        try root.prepare()
    }
}

/// A ``HostilePlace`` with a test server serving a library, a signed-in client and the root's index.
final class HostileWorld: Sendable {
    let place: HostilePlace
    let index: MirrorIndex
    let http: HTTPClient
    let server: TestServer
    let client: JellyfinClient

    var root: MirrorRoot { place.root }
    var outside: String { place.outside }
    var marker: String { place.marker }

    init(_ place: HostilePlace, library: TestLibrary = TestLibrary(movies: 0, series: 0)) async throws {
        self.place = place
        index = try MirrorIndex(path: place.root.indexPath)
        http = HTTPClient(retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, jitter: 0))
        server = try TestServer(library: library)
        let anonymous = try JellyfinClient(
            serverURL: server.baseURL, identity: ClientIdentity(device: "tests", deviceId: "hostile"), http: http)
        client = anonymous.signedIn(
            try await anonymous.authenticate(username: library.userName, password: library.password))
    }

    func watch() -> OutsideWatcher {
        OutsideWatcher(tree: place.folder.path, root: root.path, marker: marker)
    }

    func sync(delete: Bool = false) async throws -> SyncReport {
        try await MirrorSync(
            root: root, index: index, server: client, client: http,
            transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01))
        ).run(options: SyncOptions(delete: delete))
    }

    func tearDown() {
        server.shutdown()
        place.folder.remove()
    }

    func tree() -> [String] {
        TreeReading.files(under: root.path + "/Downloads", prefix: "Downloads/")
    }

    func bytes(_ relative: String) -> [UInt8]? {
        TreeReading.bytes(root.path + "/" + relative)
    }

    func json(_ relative: String) -> [String: Any]? {
        TreeReading.json(root.path + "/" + relative)
    }

    static func audio(_ number: Int) -> [UInt8] {
        (0..<(3_000 + number)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ number) }
    }

    static func feed(title: String, podcastGUID: String?, items: [(guid: String, url: String)]) -> [UInt8] {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
        }
        let entries = items.enumerated().map { position, item in
            """
            <item><title>Item \(position)</title><guid isPermaLink="false">\(escape(item.guid))</guid>
            <pubDate>\(String(format: "%02d", position % 28 + 1)) Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(escape(item.url))" length="3000" type="audio/mpeg"/></item>
            """
        }.joined(separator: "\n")
        let guid = podcastGUID.map { "<podcast:guid>\(escape($0))</podcast:guid>" } ?? ""
        return Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
            <title>\(title)</title>\(guid)
            \(entries)
            </channel></rss>
            """.utf8)
    }

    /// Whether `text` holds `fragment`'s exact UTF-8 bytes (String.contains would equate NFC and NFD).
    static func bytes(_ text: String, contain fragment: String) -> Bool {
        let haystack = Array(text.utf8)
        var needle = Array(fragment.utf8)
        // A debugDescription is quoted; look for what is inside the quotes.
        if needle.first == UInt8(ascii: "\""), needle.last == UInt8(ascii: "\""), needle.count >= 2 {
            needle = Array(needle.dropFirst().dropLast())
        }
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }

    static let output = ProcessInfo.processInfo.environment["HOSTILE_INPUT_TSV"]

    func record(_ fields: [String]) {
        guard let output = HostileWorld.output, !output.isEmpty else { return }
        let line = Array(
            (fields.map { $0.replacingOccurrences(of: "\t", with: " ") }.joined(separator: "\t") + "\n").utf8)
        let fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
