import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A mirror of a mirror: the test server as the home server, mirror A synced from it, `mediasync serve` (the binary)
/// on A, and mirror B, a second `mediasync` (the binary, a root and a configuration folder of its own) signed in to
/// A's `serve` and syncing from it as from Jellyfin. B must end up holding what A holds, byte for byte.
@Suite struct MirrorChainTests {
    /// A movie with two versions, each with an external and an embedded subtitle; a series of two seasons of two
    /// episodes, with images at every level.
    /// - Parameter movies: more than one: the others are left for a test to select later (the chain selects the first).
    static func library(seed: UInt64 = 91, movies: Int = 1) -> TestLibrary {
        var library = TestLibrary(
            movies: movies, series: 1, seasonsPerSeries: 2, episodesPerSeason: 2, mediaSize: 48_000, seed: seed)
        for source in library.movies.first?.mediaSources ?? [] {
            library.updateMediaSource(source.id) { $0.embeddedSubtitle = true }
        }
        return library
    }

    /// The fields of a `metadata.json` that may differ between B and A, as paths of keys (`*` any member or
    /// element). Everything else must be equal.
    ///
    /// In an item, an episode or a track:
    /// - `ServerId`: B's items come from `serve`, which has a server id of its own.
    /// - `ParentId` of a movie or a series: the home library is not in the mirror; `serve` lists them under views of
    ///   its own (a season's and an episode's parents are the home server's series and season).
    /// - `Path` of an item and of its sources and streams: where the home server keeps its files; `serve` never says.
    /// - How a version is delivered: `SupportsTranscoding` (`serve` cannot transcode), `TranscodingSubProtocol`,
    ///   and an external subtitle's `DeliveryUrl` (on `serve`).
    /// - `UserData.ItemId`: `serve` answers as Jellyfin 10.10, whose `UserItemDataDto` always carries it; a home
    ///   server before 10.10 (the test server answers as 10.8's recordings) sends none.
    /// - `downloadDate` and `taskId` of each version: when and in which run B fetched the file.
    static let allowedDifferences: [[String]] =
        ["item", "episodes.*", "tracks.*"].flatMap { place -> [[String]] in
            let at = place.split(separator: ".").map(String.init)
            return [
                ["ServerId"], ["Path"], ["MediaSources", "*", "Path"], ["MediaSources", "*", "SupportsTranscoding"],
                ["MediaSources", "*", "TranscodingSubProtocol"], ["MediaSources", "*", "MediaStreams", "*", "Path"],
                ["MediaSources", "*", "MediaStreams", "*", "DeliveryUrl"], ["MediaStreams", "*", "Path"],
                ["MediaStreams", "*", "DeliveryUrl"], ["UserData", "ItemId"],
            ].map { at + $0 }
        } + [["item", "ParentId"], ["versions", "*", "downloadDate"], ["versions", "*", "taskId"]]

    /// Mirror A (synced through the library), its `serve`, and mirror B's folders.
    final class Chain: @unchecked Sendable {
        let home: ServeFixture
        var serve: Spawned?
        /// Where B reaches A's `serve`: `serve` itself, or the counting relay in front of it.
        var address = ""
        /// `serve`'s own address.
        var serveAddress = ""
        var proxy: CountingProxy?
        let b = ServeCommandTests.Scratch()

        init(library: TestLibrary) async throws {
            home = try await ServeFixture(library: library)
            let movie = library.movies[0]
            try home.index.select(
                Selection(id: movie.id, kind: .movie, allVersions: true, addedAt: "2026-01-01T00:00:00Z"))
            for series in library.series {
                try home.index.select(Selection(id: series.id, kind: .series, addedAt: "2026-01-01T00:00:00Z"))
            }
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: home.config)
        }

        /// A's sync from the home server.
        @discardableResult
        func syncA(delete: Bool = false) async throws -> SyncReport {
            let sync = MirrorSync(
                root: home.root, index: home.index, server: home.client,
                transferOptions: TransferOptions(
                    durable: false, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01)))
            return try await sync.run(options: SyncOptions(delete: delete))
        }

        /// Starts `mediasync serve` on A's root (any free port of 127.0.0.1).
        /// - Parameter proxied: B reaches it through a ``CountingProxy``, which sees what B asks and gets.
        func startServe(proxied: Bool = false) async throws {
            var scratch = ServeCommandTests.Scratch()
            scratch.folder = home.folder
            let (process, lines, address) = try await ServeCommandTests.serve(scratch)
            #expect(address.hasPrefix("http://127.0.0.1:"), "\(lines)")
            serve = process
            serveAddress = address
            self.address = address
            if proxied, let port = address.split(separator: ":").last.flatMap({ UInt16($0) }) {
                let proxy = try CountingProxy(to: port)
                self.proxy = proxy
                self.address = proxy.address
            }
        }

        func stopServe() async {
            proxy?.close()
            proxy = nil
            guard let serve else { return }
            serve.send(SIGTERM)
            _ = await serve.finished()
            self.serve = nil
        }

        /// Runs the `mediasync` binary as B.
        func runB(_ arguments: [String], input: String? = nil) async throws -> (
            status: Int32, out: String, err: String
        ) {
            var environment = b.environment
            environment["MEDIASYNC_API_KEY"] = ""
            let finished = try await Spawned(
                ServeCommandTests.binary, arguments, environment: environment, input: input.map { Array($0.utf8) }
            ).finished()
            return (finished.status, finished.stdout, finished.stderr)
        }

        /// B signs in to A's `serve` and selects what A holds: the movie with every version, the series.
        func setUpB() async throws {
            let login = try await runB(
                ["login", address, "--username", home.library.userName, "--password-stdin"],
                input: ServeFixture.password + "\n")
            #expect(login.status == 0, "\(login.err)")
            let movie = home.library.movies[0]
            let select = try await runB(["select", "movie", movie.id, "--all-versions"])
            #expect(select.status == 0, "\(select.err)")
            for series in home.library.series {
                let selected = try await runB(["select", "series", series.id])
                #expect(selected.status == 0, "\(selected.err)")
            }
        }

        /// B's `sync --json`, and its report.
        func syncB(_ extra: [String] = []) async throws -> (status: Int32, report: [String: Any], err: String) {
            let run = try await runB(["sync", "--json"] + extra)
            let report = (try? JSONSerialization.jsonObject(with: Data(run.out.utf8))) as? [String: Any] ?? [:]
            return (run.status, report, run.err)
        }

        func tearDown() async {
            await stopServe()
            home.tearDown()
            try? FileManager.default.removeItem(atPath: b.folder)
        }
    }

    static func with(_ library: TestLibrary = library(), _ body: (Chain) async throws -> Void) async throws {
        let chain = try await Chain(library: library)
        do {
            try await body(chain)
        } catch {
            await chain.tearDown()
            throw error
        }
        await chain.tearDown()
    }

    /// Every file under `root`'s `Downloads`, by its path there.
    static func tree(_ root: String) -> [String: [UInt8]] {
        let downloads = root + "/Downloads"
        var files: [String: [UInt8]] = [:]
        for case let path as String in FileManager.default.enumerator(atPath: downloads)?.allObjects ?? [] {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: downloads + "/" + path, isDirectory: &isFolder),
                !isFolder.boolValue, let data = FileManager.default.contents(atPath: downloads + "/" + path)
            else { continue }
            files[path] = [UInt8](data)
        }
        return files
    }

    /// Where two JSON values differ, as key paths (`item.MediaSources.1.Size`), leaving out the allowed ones.
    static func differences(_ a: Any?, _ b: Any?, path: [String] = [], allowed: [[String]]) -> [String] {
        if allowed.contains(where: { pattern in
            pattern.count == path.count && zip(pattern, path).allSatisfy { $0 == "*" || $0 == $1 }
        }) {
            return []
        }
        let here = path.joined(separator: ".")
        switch (a, b) {
        case (let a as [String: Any], let b as [String: Any]):
            return Set(a.keys).union(b.keys).sorted().flatMap {
                differences(a[$0], b[$0], path: path + [$0], allowed: allowed)
            }
        case (let a as [Any], let b as [Any]):
            guard a.count == b.count else { return ["\(here): \(a.count) elements, \(b.count) in B"] }
            return a.indices.flatMap { differences(a[$0], b[$0], path: path + [String($0)], allowed: allowed) }
        case (nil, nil):
            return []
        case (let a?, nil):
            return ["\(here): \(a) in A, missing in B"]
        case (nil, let b?):
            return ["\(here): missing in A, \(b) in B"]
        case (let a as NSObject, let b as NSObject):
            return a.isEqual(b) ? [] : ["\(here): \(a) in A, \(b) in B"]
        default:
            return ["\(here): \(String(describing: a)) in A, \(String(describing: b)) in B"]
        }
    }

    /// A's `metadata.json` with only the versions A holds in each item's `MediaSources`: `serve` lists what the
    /// mirror holds, so a version A did not fetch does not exist for B.
    static func heldSourcesOnly(_ document: Any?) -> Any? {
        guard var document = document as? [String: Any] else { return document }
        let held = Set(
            (document["versions"] as? [[String: Any]] ?? []).compactMap { $0["versionId"] as? String })
        func narrowed(_ item: Any?) -> Any? {
            guard var item = item as? [String: Any], let sources = item["MediaSources"] as? [[String: Any]] else {
                return item
            }
            item["MediaSources"] = sources.filter { held.contains($0["Id"] as? String ?? "") }
            return item
        }
        if let item = document["item"] { document["item"] = narrowed(item) }
        if let episodes = document["episodes"] as? [Any] { document["episodes"] = episodes.map(narrowed) }
        return document
    }

    /// B's tree against A's: the same paths, the same bytes of every media, image and subtitle file, and the same
    /// metadata but for ``allowedDifferences``.
    static func compare(
        a: String, b: String, allowed: [[String]] = allowedDifferences,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let first = tree(a)
        let second = tree(b)
        #expect(Set(second.keys) == Set(first.keys), sourceLocation: sourceLocation)
        for (path, bytes) in first.sorted(by: { $0.key < $1.key }) {
            guard let other = second[path] else { continue }
            if path.hasSuffix("metadata.json") {
                let parsedA = heldSourcesOnly(try? JSONSerialization.jsonObject(with: Data(bytes)))
                let parsedB = try? JSONSerialization.jsonObject(with: Data(other))
                let found = differences(parsedA, parsedB, allowed: allowed)
                #expect(found.isEmpty, "\(path): \(found.joined(separator: "; "))", sourceLocation: sourceLocation)
            } else {
                #expect(other == bytes, "\(path) differs", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func aSecondMirrorSyncedFromServeHoldsWhatTheFirstHolds() async throws {
        try await Self.with { chain in
            let first = try await chain.syncA()
            #expect(first.failed.isEmpty, "\(first.failed)")
            try await chain.startServe(proxied: true)
            try await chain.setUpB()
            let clock = ContinuousClock()
            let start = clock.now
            let synced = try await chain.syncB()
            let fromServe = clock.now - start
            #expect(synced.status == 0, "\(synced.err)")
            #expect((synced.report["failed"] as? [Any])?.isEmpty ?? true, "\(synced.report["failed"] ?? "")")
            Self.compare(a: chain.home.root.path, b: chain.b.root)
            let library = chain.home.library
            let movie = library.movies[0]
            // Both versions, each with its external subtitle; the embedded one stays inside the file.
            let held = Self.tree(chain.b.root).keys
            for source in movie.mediaSources {
                #expect(held.contains("\(movie.id)/\(movie.id)-\(source.id).mkv"))
                #expect(
                    held.contains { $0.hasPrefix("\(movie.id)/\(movie.id)-\(source.id).2.") && $0.hasSuffix(".srt") })
            }

            let firstBytes = chain.proxy?.bytesAnswered ?? 0

            // Nothing changed: a second sync of B asks listings only, and no file comes again.
            chain.proxy?.reset()
            let again = clock.now
            let noOp = try await chain.syncB()
            let noOpTime = clock.now - again
            let asked = chain.proxy?.requests ?? ""
            let noOpBytes = chain.proxy?.bytesAnswered ?? 0
            #expect(!asked.isEmpty)
            for route in ["/Download", "/Images/", "/Subtitles/"] {
                #expect(!asked.contains(route), "a no-op asked for \(route)")
            }
            let mediaBytes = movie.mediaSources.reduce(0) { $0 + $1.size }
            #expect(noOpBytes < Int64(mediaBytes), "\(noOpBytes) bytes for a no-op")
            #expect(noOp.status == 0, "\(noOp.err)")
            #expect((noOp.report["bytesDownloaded"] as? Int) == 0)
            #expect((noOp.report["downloaded"] as? [Any])?.isEmpty ?? false)
            #expect((noOp.report["written"] as? [Any])?.isEmpty ?? false)
            // The listing memo replays against serve as against Jellyfin: the same answers, so nothing is planned.
            #expect(noOp.report["listingUnchanged"] as? Bool == true)

            // The same items straight from the home server, for the time it takes (no timing is asserted).
            let direct = ServeCommandTests.Scratch()
            defer { try? FileManager.default.removeItem(atPath: direct.folder) }
            var environment = direct.environment
            environment["MEDIASYNC_API_KEY"] = ""
            func run(_ arguments: [String], input: String? = nil) async throws -> Spawned.Finished {
                try await Spawned(
                    ServeCommandTests.binary, arguments, environment: environment,
                    input: input.map { Array($0.utf8) }
                ).finished()
            }
            _ = try await run(
                ["login", chain.home.upstream.baseURL, "--username", library.userName, "--password-stdin"],
                input: library.password + "\n")
            _ = try await run(["select", "movie", movie.id, "--all-versions"])
            _ = try await run(["select", "series", library.series[0].id])
            let directStart = clock.now
            let straight = try await run(["sync", "--json"])
            let directTime = clock.now - directStart
            #expect(straight.status == 0, "\(straight.stderr)")
            print(
                "mirror chain: B's first sync from serve \(fromServe) (\(firstBytes) bytes answered), no-op "
                    + "\(noOpTime) (\(noOpBytes) bytes); the same first sync from the home server \(directTime)")
        }
    }

    /// The metadata file of the movie in `root`, parsed.
    static func metadata(_ root: String, _ path: String) -> [String: Any] {
        let data = FileManager.default.contents(atPath: root + "/Downloads/" + path) ?? Data()
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// A play mark made on B goes to A's `serve`, then home with A's sync, once; a mark made at home comes down to B
    /// through A's sync, then B's.
    @Test func playStateFlowsBothWaysExactlyOnce() async throws {
        try await Self.with { chain in
            try await chain.syncA()
            try await chain.startServe()
            try await chain.setUpB()
            #expect(try await chain.syncB().status == 0)
            let library = chain.home.library
            let episode = library.episodes.first { $0.indexNumber == 2 && $0.parentIndexNumber == 1 }
            let episodeId = episode?.id ?? ""
            let before = chain.home.upstream.userData(of: episodeId)
            #expect(before?.played == false)

            // Up: B → A's serve → home.
            let marked = try await chain.runB(["played", episodeId, "--at", "2026-11-20T21:30:00Z"])
            #expect(marked.status == 0, "\(marked.err)")
            let sent = try await chain.syncB()
            #expect(sent.status == 0, "\(sent.err)")
            #expect(sent.report["playStateSent"] as? Int == 1)
            let up = try await chain.syncA()
            #expect(up.playStateSent == 1)
            let after = chain.home.upstream.userData(of: episodeId)
            #expect(after?.played == true)
            #expect(after?.playCount == (before?.playCount ?? 0) + 1)
            // Once: neither mirror sends it again.
            #expect(try await chain.syncB().report["playStateSent"] as? Int ?? 0 == 0)
            #expect(try await chain.syncA().playStateSent == 0)
            #expect(chain.home.upstream.userData(of: episodeId)?.playCount == after?.playCount)

            // Down: another device marks the movie played at home.
            let movie = library.movies[0]
            chain.home.upstream.setUserData(
                of: movie.id,
                TestUserData(
                    played: true, playCount: 3, playbackPositionTicks: 0,
                    lastPlayedDate: Date(timeIntervalSince1970: 1_790_000_000)))
            try await chain.syncA()
            #expect(try await chain.syncB().status == 0)
            let userData = Self.metadata(chain.b.root, "\(movie.id)/metadata.json")["item"] as? [String: Any]
            #expect((userData?["UserData"] as? [String: Any])?["Played"] as? Bool == true)
            #expect((userData?["UserData"] as? [String: Any])?["PlayCount"] as? Int == 3)
            Self.compare(a: chain.home.root.path, b: chain.b.root)
        }
    }

    /// A new episode at home reaches B after A's sync, then B's; an item deleted at home leaves B only once A's
    /// `serve` no longer has it (A's `sync --delete` first), never before.
    @Test func changesFlowDownAndDeletionsWaitForTheFirstMirror() async throws {
        try await Self.with { chain in
            try await chain.syncA()
            try await chain.startServe()
            try await chain.setUpB()
            #expect(try await chain.syncB().status == 0)
            let library = chain.home.library
            let movie = library.movies[0]

            // A new episode at home.
            guard var added = library.episodes.last else { return }
            let newId = "0123456789abcdef0123456789abcdef"
            added.id = newId
            added.name = "Episode 3"
            added.indexNumber = 3
            added.etag = "fedcba9876543210fedcba9876543210"
            added.played = false
            added.imageTags = ["Primary": "00112233445566778899aabbccddeeff"]
            added.mediaSources = added.mediaSources.map { source in
                var source = source
                source.id = newId
                source.name = "Test Series 1 - S02E03 - Episode 3"
                source.path = source.path.replacingOccurrences(of: "E02", with: "E03")
                source.etag = "ffeeddccbbaa99887766554433221100"
                return source
            }
            chain.home.upstream.updateLibrary { $0.items.append(added) }
            // Not on B before A has it.
            #expect(try await chain.syncB().status == 0)
            #expect(!Self.tree(chain.b.root).keys.contains { $0.contains(newId) })
            try await chain.syncA()
            #expect(try await chain.syncB().status == 0)
            #expect(Self.tree(chain.b.root).keys.contains { $0.hasSuffix("\(newId)-\(newId).mkv") })
            Self.compare(a: chain.home.root.path, b: chain.b.root)

            // The movie deleted at home: B keeps it while A's serve still has it.
            chain.home.upstream.updateLibrary { $0.removeItem(withId: movie.id) }
            let early = try await chain.syncB(["--delete"])
            #expect(early.status == 0, "\(early.err)")
            #expect(Self.tree(chain.b.root).keys.contains { $0.hasPrefix("\(movie.id)/") })
            let dropped = try await chain.syncA(delete: true)
            #expect(!dropped.deleted.isEmpty)
            #expect(!Self.tree(chain.home.root.path).keys.contains { $0.hasPrefix("\(movie.id)/") })
            let confirmed = try await chain.syncB(["--delete"])
            #expect(confirmed.status == 0, "\(confirmed.err)")
            #expect(!Self.tree(chain.b.root).keys.contains { $0.hasPrefix("\(movie.id)/") })
            Self.compare(a: chain.home.root.path, b: chain.b.root)
        }
    }

    /// B selects `serve`'s libraries (as a user who wants all of it would, found with `browse`) instead of items:
    /// it gets A's tree, and an item A gains later reaches B without B selecting it.
    ///
    /// A library's listing asks fields that A's selections by id do not (a series' `CanDownload`, the episodes' own
    /// `MediaStreams`); `serve` answers them as Jellyfin does, so B's metadata has them and A's has not.
    @Test func theLibrariesOfServeSelectedWholeAreTheFirstMirrors() async throws {
        let allowed = Self.allowedDifferences + [["item", "CanDownload"], ["episodes", "*", "MediaStreams"]]
        try await Self.with(Self.library(movies: 2)) { chain in
            try await chain.syncA()
            try await chain.startServe()
            let login = try await chain.runB(
                ["login", chain.address, "--username", chain.home.library.userName, "--password-stdin"],
                input: ServeFixture.password + "\n")
            #expect(login.status == 0, "\(login.err)")
            let browse = try await chain.runB(["browse", "--json"])
            let views = (try? JSONSerialization.jsonObject(with: Data(browse.out.utf8))) as? [[String: Any]] ?? []
            let wanted = views.filter { ["movies", "tvshows"].contains($0["collectionType"] as? String ?? "") }
            #expect(wanted.count == 2, "\(browse.out)")
            for view in wanted {
                let id = view["id"] as? String ?? ""
                let selected = try await chain.runB(["select", "library", id, "--all-versions"])
                #expect(selected.status == 0, "\(selected.err)")
            }
            let synced = try await chain.syncB()
            #expect(synced.status == 0, "\(synced.err)")
            Self.compare(a: chain.home.root.path, b: chain.b.root, allowed: allowed)

            // A second movie selected on A reaches B through the library.
            guard let other = chain.home.library.movies.dropFirst().first else {
                Issue.record("the library has one movie")
                return
            }
            #expect(!Self.tree(chain.b.root).keys.contains { $0.hasPrefix("\(other.id)/") })
            try chain.home.index.select(Selection(id: other.id, kind: .movie, addedAt: "2026-01-02T00:00:00Z"))
            try await chain.syncA()
            #expect(try await chain.syncB().status == 0)
            #expect(Self.tree(chain.b.root).keys.contains { $0.hasPrefix("\(other.id)/") })
            Self.compare(a: chain.home.root.path, b: chain.b.root, allowed: allowed)
        }
    }

    /// With A's `serve` stopped, B's sync says so in one line, exits non-zero and deletes nothing.
    @Test func aStoppedServeIsOneLineAndDeletesNothing() async throws {
        try await Self.with { chain in
            try await chain.syncA()
            try await chain.startServe()
            try await chain.setUpB()
            #expect(try await chain.syncB().status == 0)
            let held = Self.tree(chain.b.root)
            await chain.stopServe()
            let run = try await chain.runB(["sync", "--delete"])
            // The code of a sync that could not do all it should (`ExitCodes.partialFailure`).
            #expect(run.status == 3, "\(run.status)")
            let lines = run.err.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(lines.count == 1, "\(run.err)")
            #expect(run.err.contains("127.0.0.1"), "\(run.err)")
            #expect(Self.tree(chain.b.root) == held)
        }
    }

    /// B killed (SIGKILL) in the middle of a file resumes it from where it stopped, with `Range` and `If-Range`
    /// against `serve`'s validators, and ends with A's bytes.
    @Test func aKilledDownloadFromServeResumes() async throws {
        let library = TestLibrary(movies: 1, series: 0, mediaSize: 3_000_000, seed: 93)
        try await Self.with(library) { chain in
            try await chain.syncA()
            try await chain.startServe(proxied: true)
            try await chain.setUpB()
            let staging = chain.b.root + "/.mediasync/staging"
            var environment = chain.b.environment
            environment["MEDIASYNC_API_KEY"] = ""
            // Each answer stops at 1.5 MB until the test says: past 1 MiB a partial file is staged by name with a
            // resume record.
            chain.proxy?.stall(after: 1_500_000)
            let slow = try Spawned(ServeCommandTests.binary, ["sync"], environment: environment)
            // Waits (bounded) for a partial file staged by name with its resume record, then kills B mid-file.
            var partial: Int64 = 0
            for _ in 0..<60_000 where slow.isRunning {
                let parts = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
                // A partial file with its resume record beside it (`<name>.part.meta`).
                partial =
                    parts.filter { $0.hasSuffix(".part") && parts.contains($0 + ".meta") }.compactMap {
                        (try? FileManager.default.attributesOfItem(atPath: staging + "/" + $0))?[.size] as? Int64
                    }.max() ?? 0
                if partial > 0 { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            slow.send(SIGKILL)
            _ = await slow.finished()
            #expect(partial > 0)
            chain.proxy?.releaseStalls()
            chain.proxy?.reset()
            let resumed = try await chain.syncB()
            #expect(resumed.status == 0, "\(resumed.err)")
            #expect((resumed.report["restarted"] as? [Any])?.isEmpty ?? true, "\(resumed.report["restarted"] ?? "")")
            let total = Int64(library.movies[0].mediaSources.reduce(0) { $0 + $1.size })
            // The rerun asked for the rest of the file, conditionally on serve's validator, and the first part did
            // not come again.
            let asked = chain.proxy?.requests ?? ""
            let ranges = asked.components(separatedBy: "\r\n").filter { $0.lowercased().hasPrefix("range: bytes=") }
            #expect(ranges.contains { !$0.lowercased().hasPrefix("range: bytes=0-") }, "\(ranges)")
            #expect(asked.lowercased().contains("\r\nif-range: "), "no If-Range sent")
            let answered = chain.proxy?.bytesAnswered ?? 0
            #expect(
                answered < total,
                "\(answered) bytes answered for \(total) bytes of media; \(ranges); partial \(partial); \(resumed.err)")
            Self.compare(a: chain.home.root.path, b: chain.b.root)
        }
    }
}

extension MirrorChainTests {
    /// A transcode A holds (`--quality`) is a plain static file for B: the same bytes under the same name, recorded
    /// as B fetched it (static), its source describing the held file.
    @Test func aTranscodeTheFirstMirrorHoldsIsAStaticFileForTheSecond() async throws {
        var library = TestLibrary(movies: 1, series: 0, mediaSize: 8_000, seed: 95)
        for source in library.movies.first?.mediaSources ?? [] {
            library.updateMediaSource(source.id) { $0.runTimeTicks = 300_000_000 }
        }
        try await Self.with(library) { chain in
            let movie = library.movies[0]
            try chain.home.index.select(
                Selection(
                    id: movie.id, kind: .movie, addedAt: "2026-01-01T00:00:00Z",
                    quality: Quality.presets["720p"] ?? Quality(maxBitrate: 4_000_000, maxHeight: 720)))
            let first = try await chain.syncA()
            #expect(first.failed.isEmpty, "\(first.failed)")
            let transcode = "\(movie.id)/\(movie.id)-\(movie.id).ts"
            #expect(Self.tree(chain.home.root.path).keys.contains(transcode))
            try await chain.startServe()
            let login = try await chain.runB(
                ["login", chain.address, "--username", library.userName, "--password-stdin"],
                input: ServeFixture.password + "\n")
            #expect(login.status == 0, "\(login.err)")
            #expect(try await chain.runB(["select", "movie", movie.id]).status == 0)
            let synced = try await chain.syncB()
            #expect(synced.status == 0, "\(synced.err)")
            let a = Self.tree(chain.home.root.path)
            let b = Self.tree(chain.b.root)
            #expect(Set(b.keys) == Set(a.keys))
            #expect(b[transcode] == a[transcode] && b[transcode] != nil)
            let metadata = "\(movie.id)/metadata.json"
            let allowed =
                Self.allowedDifferences + [
                    ["versions", "*", "isStatic"], ["item", "MediaSources", "*", "Container"],
                    ["item", "MediaSources", "*", "Size"], ["item", "MediaSources", "*", "ETag"],
                    ["item", "MediaSources", "*", "Bitrate"],
                ]
            let found = Self.differences(
                Self.heldSourcesOnly(try? JSONSerialization.jsonObject(with: Data(a[metadata] ?? []))),
                try? JSONSerialization.jsonObject(with: Data(b[metadata] ?? [])), allowed: allowed)
            #expect(found.isEmpty, "\(found)")
            let versions = Self.metadata(chain.b.root, metadata)["versions"] as? [[String: Any]]
            #expect(versions?.first?["isStatic"] as? Bool == true)
            #expect(versions?.first?["container"] as? String == "ts")
        }
    }
}

extension MirrorChainTests {
    /// Music down the chain: an album of two discs with lyrics and a playlist listing a track twice, synced by B from
    /// A's `serve` as A synced them from home.
    @Test func anAlbumAndAPlaylistFromServeAreTheFirstMirrors() async throws {
        let library = TestLibrary(
            movies: 1, series: 0, mediaSize: 4_000, seed: 97,
            music: TestLibrary.MusicSpec(tracksPerDisc: 6, mediaSize: 3_000))
        try await Self.with(library) { chain in
            let ids = try #require(library.musicIds)
            let album = try #require(ids.twoDiscAlbumId)
            let playlist = try #require(ids.playlistId)
            for (kind, id) in [(Selection.Kind.album, album), (.playlist, playlist)] {
                try chain.home.index.select(Selection(id: id, kind: kind, addedAt: "2026-01-01T00:00:00Z"))
            }
            let first = try await chain.syncA()
            #expect(first.failed.isEmpty, "\(first.failed)")
            try await chain.startServe()
            try await chain.setUpB()
            #expect(try await chain.runB(["select", "album", album]).status == 0)
            #expect(try await chain.runB(["select", "playlist", playlist]).status == 0)
            let synced = try await chain.syncB()
            #expect(synced.status == 0, "\(synced.err)")
            #expect((synced.report["failed"] as? [Any])?.isEmpty ?? true, "\(synced.report["failed"] ?? "")")
            #expect(Self.tree(chain.b.root).keys.contains { $0.hasSuffix(".lrc") })
            // An album's or a playlist's counts are of what the mirror holds: `serve` always counts the held tracks
            // (`ChildCount`), an album held in part (the second album, through the playlist) is as long as its held
            // tracks, and its unplayed count is theirs.
            Self.compare(
                a: chain.home.root.path, b: chain.b.root,
                allowed: Self.allowedDifferences + [
                    ["item", "ChildCount"], ["item", "RunTimeTicks"], ["item", "UserData", "UnplayedItemCount"],
                ])
        }
    }
}

extension MirrorChainTests {
    /// B's first sync and no-op from `serve`, and the same first sync straight from the home server, over a larger
    /// library (20 movies, 40 episodes, 1 MB each). Prints the times; asserts none. Run with
    /// `MEDIASYNC_CHAIN_BENCH=1 swift test --filter MirrorChainTests/measuresTheChain`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MEDIASYNC_CHAIN_BENCH"] != nil))
    func measuresTheChain() async throws {
        let library = TestLibrary(
            movies: 20, series: 2, seasonsPerSeries: 2, episodesPerSeason: 10, mediaSize: 1_000_000, seed: 99)
        try await Self.with(library) { chain in
            for movie in library.movies.dropFirst() {
                try chain.home.index.select(
                    Selection(id: movie.id, kind: .movie, allVersions: true, addedAt: "2026-01-01T00:00:00Z"))
            }
            let first = try await chain.syncA()
            #expect(first.failed.isEmpty, "\(first.failed)")
            try await chain.startServe(proxied: true)
            let clock = ContinuousClock()
            func mirror(_ scratch: ServeCommandTests.Scratch, from address: String, password: String) async throws
                -> (first: Duration, noOp: Duration)
            {
                var environment = scratch.environment
                environment["MEDIASYNC_API_KEY"] = ""
                func run(_ arguments: [String], input: String? = nil) async throws -> Spawned.Finished {
                    try await Spawned(
                        ServeCommandTests.binary, arguments, environment: environment,
                        input: input.map { Array($0.utf8) }
                    ).finished()
                }
                _ = try await run(
                    ["login", address, "--username", library.userName, "--password-stdin"], input: password + "\n")
                for movie in library.movies {
                    _ = try await run(["select", "movie", movie.id, "--all-versions"])
                }
                for series in library.series { _ = try await run(["select", "series", series.id]) }
                let start = clock.now
                let synced = try await run(["sync"])
                let firstTime = clock.now - start
                #expect(synced.status == 0, "\(synced.stderr)")
                let again = clock.now
                _ = try await run(["sync"])
                return (firstTime, clock.now - again)
            }
            let fromServe = try await mirror(chain.b, from: chain.address, password: ServeFixture.password)
            // What B asked of serve, by route.
            var routes: [String: Int] = [:]
            for line in (chain.proxy?.requests ?? "").components(separatedBy: "\r\n")
            where line.hasPrefix("GET ") || line.hasPrefix("POST ") {
                let path = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                let shape =
                    path.split(separator: "?").first.map {
                        $0.split(separator: "/").map { $0.count >= 32 ? "{id}" : String($0) }.joined(separator: "/")
                    } ?? path
                routes[shape, default: 0] += 1
            }
            print("mirror chain, B asked serve: \(routes.sorted { $0.key < $1.key })")
            let direct = ServeCommandTests.Scratch()
            defer { try? FileManager.default.removeItem(atPath: direct.folder) }
            let straight = try await mirror(direct, from: chain.home.upstream.baseURL, password: library.password)
            Self.compare(a: chain.home.root.path, b: chain.b.root)
            print(
                "mirror chain, 61 versions of 1 MB: from serve first \(fromServe.first), no-op \(fromServe.noOp); "
                    + "from the home server first \(straight.first), no-op \(straight.noOp)")
        }
    }
}

/// What a mirror asks of `serve`, route by route, against a mirror holding the chain's library (in process).
@Suite struct ServeForAMirrorTests {
    @Test func everyVersionDownloadsWithJellyfinsHeadersAndIfRange() async throws {
        try await ServeFixture.with(MirrorChainTests.library()) { fixture in
            let library = fixture.library
            let movie = library.movies[0]
            try fixture.index.select(
                Selection(id: movie.id, kind: .movie, allVersions: true, addedAt: "2026-01-01T00:00:00Z"))
            try fixture.index.select(
                Selection(id: library.series[0].id, kind: .series, addedAt: "2026-01-01T00:00:00Z"))
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            guard let alternate = movie.mediaSources.first(where: { $0.id != movie.id }) else {
                Issue.record("the movie has one version")
                return
            }
            try await fixture.serving { http in
                let token = try await http.signIn().object["AccessToken"] as? String
                // An alternate version's id is an item of its own (`LibraryController.GetDownload`).
                let whole = try await http.send("GET", "/Items/\(alternate.id)/Download", token: token)
                #expect(whole.status == 200)
                #expect(whole.body == library.mediaBytes(forMediaSourceId: alternate.id))
                let name = (alternate.path as NSString).lastPathComponent
                #expect(whole.headers["content-disposition"]?.hasPrefix("attachment; filename=\"\(name)\"") == true)
                #expect(whole.headers["content-disposition"]?.contains("filename*=UTF-8''Test%20Movie%201") == true)
                let etag = whole.headers["etag"] ?? ""
                let modified = whole.headers["last-modified"] ?? ""
                #expect(!etag.isEmpty && !modified.isEmpty)
                #expect(
                    try await http.send("GET", "/Items/\(String(repeating: "ab", count: 16))/Download", token: token)
                        .status == 404)

                // And `/Items/{id}` answers it as an item: the movie under the version's id, its own source first and
                // its streams as the item's, the movie's played state; no images of its own.
                let asItem = try await http.send("GET", "/Items/\(alternate.id)", token: token)
                #expect(asItem.status == 200)
                #expect(asItem.object["Id"] as? String == alternate.id)
                #expect(asItem.object["Name"] as? String == movie.name)
                let ownSources = asItem.object["MediaSources"] as? [[String: Any]] ?? []
                #expect(ownSources.map { $0["Id"] as? String } == [alternate.id, movie.id])
                let ownStreams = (asItem.object["MediaStreams"] as? [[String: Any]] ?? []).map { $0["Index"] as? Int }
                #expect(
                    ownStreams
                        == (ownSources.first?["MediaStreams"] as? [[String: Any]] ?? []).map { $0["Index"] as? Int })
                #expect((asItem.object["ImageTags"] as? [String: Any])?.isEmpty == true)
                let owner = try await http.send("GET", "/Items/\(movie.id)", token: token)
                #expect(
                    (asItem.object["UserData"] as? [String: Any])?["Played"] as? Bool
                        == (owner.object["UserData"] as? [String: Any])?["Played"] as? Bool)
                #expect((owner.object["MediaSources"] as? [[String: Any]])?.first?["Id"] as? String == movie.id)

                // `If-Range`: the same validator continues, another one gets the whole file.
                for (ifRange, status) in [
                    (etag, 206), (modified, 206), ("\"other\"", 200), ("W/\(etag)", 200),
                    ("Sat, 01 Jan 2000 00:00:00 GMT", 200), ("not a date", 200),
                ] {
                    let reply = try await http.send(
                        "GET", "/Items/\(alternate.id)/Download", token: token,
                        headers: ["Range": "bytes=100-", "If-Range": ifRange])
                    #expect(reply.status == status, "If-Range \(ifRange)")
                    #expect(reply.body.count == (status == 206 ? alternate.size - 100 : alternate.size))
                }

                // The listing a mirror asks for: every version with the home server's stream fields, held subtitles
                // as external streams with their own titles, the embedded one inside the file.
                let listed = try await http.send(
                    "GET", "/Items?ids=\(movie.id)&fields=MediaSources,MediaStreams,Etag,CanDownload", token: token)
                let item = listed.items.first ?? [:]
                let sources = item["MediaSources"] as? [[String: Any]] ?? []
                #expect(sources.map { $0["Id"] as? String } == movie.mediaSources.map(\.id))
                for source in sources {
                    let streams = source["MediaStreams"] as? [[String: Any]] ?? []
                    let external = streams.first { $0["Index"] as? Int == 2 }
                    #expect(external?["DisplayTitle"] as? String == "English - SRT - External")
                    #expect(external?["IsExternal"] as? Bool == true)
                    let embedded = streams.first { $0["Index"] as? Int == 3 }
                    #expect(embedded?["IsDefault"] as? Bool == true)
                    #expect(embedded?["IsExternal"] as? Bool == false)
                    #expect(embedded?["Title"] as? String == "Français")
                    #expect(source["Path"] == nil && source["SupportsTranscoding"] as? Bool == false)
                }
                #expect(item["CanDownload"] as? Bool == true)
                #expect(item["CanDelete"] == nil)
                #expect(item["MediaStreams"] != nil)
                // An alternate version's playback info: its own source first, then the movie's other.
                let info = try await http.send(
                    "GET", "/Items/\(alternate.id)/PlaybackInfo?userId=\(library.userId)", token: token)
                let offered = (info.object["MediaSources"] as? [[String: Any]] ?? []).map { $0["Id"] as? String }
                #expect(offered == [alternate.id, movie.id])
                // Paging as a mirror pages: `StartIndex`, `Limit`, and the total of the whole listing.
                let paged = try await http.send(
                    "GET", "/Items?ids=\(movie.id),\(library.series[0].id)&startIndex=1&limit=1", token: token)
                #expect(paged.items.count == 1 && paged.object["TotalRecordCount"] as? Int == 2)
                #expect(paged.object["StartIndex"] as? Int == 1)
                let episodes = try await http.send(
                    "GET",
                    "/Shows/\(library.series[0].id)/Episodes?userId=\(library.userId)&isMissing=false"
                        + "&fields=MediaSources,Etag&startIndex=1&limit=2",
                    token: token)
                #expect(episodes.items.count == 2 && episodes.object["TotalRecordCount"] as? Int == 4)
                #expect(episodes.items.allSatisfy { ($0["MediaSources"] as? [Any])?.count == 1 && $0["Etag"] != nil })
                // Fields not asked for are not sent.
                let bare = try await http.send("GET", "/Items?ids=\(movie.id)", token: token).items.first ?? [:]
                #expect(bare["MediaSources"] == nil && bare["MediaStreams"] == nil && bare["CanDownload"] == nil)
            }
        }
    }
}

extension MirrorChainTests {
    /// A books library held by A and selected whole on B through `serve` (which says no paths): B holds the same
    /// audiobooks, the book in parts as one folder with its parts in order, and the books, byte for byte.
    @Test func aBooksLibraryFromServeIsTheFirstMirrors() async throws {
        var library = TestLibrary(movies: 1, series: 0, mediaSize: 4_000, seed: 93)
        let ids = library.addBooks(TestLibrary.BooksSpec(audioSize: 5_000, bookSize: 3_000))
        try await Self.with(library) { chain in
            try chain.home.index.select(
                Selection(id: ids.booksViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
            let first = try await chain.syncA()
            #expect(first.failed.isEmpty, "\(first.failed)")
            try await chain.startServe()
            try await chain.setUpB()
            let browse = try await chain.runB(["browse", "--json"])
            let views = (try? JSONSerialization.jsonObject(with: Data(browse.out.utf8))) as? [[String: Any]] ?? []
            let books = try #require(views.first { $0["collectionType"] as? String == "books" }?["id"] as? String)
            #expect(try await chain.runB(["select", "library", books]).status == 0)
            let synced = try await chain.syncB()
            #expect(synced.status == 0, "\(synced.err)")
            #expect((synced.report["failed"] as? [Any])?.isEmpty ?? true, "\(synced.report["failed"] ?? "")")
            let tree = Self.tree(chain.b.root)
            let a = Self.tree(chain.home.root.path)
            for part in ids.partIds {
                let path = "\(ids.multiPartFolderId)/\(part)-\(part).m4b"
                #expect(tree[path] != nil && tree[path] == a[path], "\(path)")
            }
            let single = "\(ids.singleAudiobookId)/\(ids.singleAudiobookId)-\(ids.singleAudiobookId).m4b"
            #expect(tree[single] != nil && tree[single] == a[single])
            for (id, ext) in zip(ids.bookIds, ["epub", "cbz", "pdf"]) {
                let path = "\(id)/\(id)-\(id).\(ext)"
                #expect(tree[path] != nil && tree[path] == a[path], "\(path)")
            }
            let parts =
                (try? JSONSerialization.jsonObject(
                    with: Data(tree["\(ids.multiPartFolderId)/metadata.json"] ?? []))) as? [String: Any]
            let order = (parts?["tracks"] as? [[String: Any]])?.compactMap { $0["Id"] as? String }
            #expect(order == ids.partIds)
            #expect(parts?["itemType"] as? String == "AudioBook")
        }
    }
}
