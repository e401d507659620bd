import Foundation
import Logging
import MediaSync
import MediaSyncServe
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A mirror holding one podcast (made on disk and indexed by `reindex`): its `music` view, the podcast as a
/// `MusicAlbum`, its episodes as `Audio`; the WebSocket and the UDP autodiscovery.
@Suite struct PodcastServeTests {
    static let podcastId = "ead4c236-0000-5000-8000-000000000001"
    static let episodes = [("ep-1", "First", "2026-01-01T00:00:00Z"), ("ep-2", "Second", "2026-02-01T00:00:00Z")]

    static func bytes(_ episode: String) -> [UInt8] {
        (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ episode.utf8.count) }
    }

    /// An empty configuration folder with a password, and a root holding the podcast.
    /// A constant-bit-rate MP3 of `count` frames (MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, 417 bytes a frame): 384
    /// frames are 10 s by the bit rate over the size.
    static func mp3(frames count: Int) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: 417)
        frame[0...3] = [0xFF, 0xFB, 0x90, 0x00]
        return Array((0..<count).map { _ in frame }.joined())
    }

    /// A WAV file mpv plays: `seconds` of silence.
    static func silence(seconds: Int) -> [UInt8] { TestMedia.silence(seconds: seconds) }

    /// - Parameter wav: the first episode is 30 s of real audio (a WAV file) instead of made-up bytes.
    static func makeMirror(wav: Bool = false) throws -> (root: MirrorRoot, config: ConfigDirectory, folder: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-pod-\(UUID().uuidString)")
            .path
        let root = MirrorRoot(path: folder + "/root")
        try root.prepare()
        let directory = root.path + "/Downloads/\(podcastId)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var entries: [[String: Any]] = []
        for (id, title, published) in episodes {
            let real = wav && id == "ep-1"
            let data = Data(real ? silence(seconds: 30) : id == "ep-2" ? mp3(frames: 384) : bytes(id))
            let file = "\(id).\(real ? "wav" : "mp3")"
            try data.write(to: URL(fileURLWithPath: directory + "/" + file))
            entries.append([
                "episodeID": id, "title": title, "fileName": file, "fileSize": data.count,
                "downloadDate": published, "guid": id, "published": published,
            ])
        }
        let metadata: [String: Any] = [
            "podcastID": podcastId, "podcastTitle": "The Test Cast", "feedURL": "https://example.org/feed.xml",
            "episodes": entries, "totalSize": 10_000, "lastUpdated": "2026-02-01T00:00:00Z",
        ]
        try JSONSerialization.data(withJSONObject: metadata).write(
            to: URL(fileURLWithPath: directory + "/metadata.json"))
        _ = try Mirror.rebuildIndex(root)
        let config = ConfigDirectory(path: folder + "/config")
        try MediaServe.setPassword(ServeFixture.password, user: "listener", config: config)
        return (root, config, folder)
    }

    static func serving(
        discoveryPort: Int? = nil, wav: Bool = false, _ body: (ServeHTTP, MirrorRoot) async throws -> Void
    ) async throws {
        let (root, config, folder) = try makeMirror(wav: wav)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let serve = try MediaServe(
            options: ServeOptions(
                root: root, config: config, host: "127.0.0.1", port: 0, discover: discoveryPort != nil,
                discoveryPort: discoveryPort ?? 7359))
        var logger = Logger(label: "serve-tests")
        logger.logLevel = .critical
        let (addresses, continuation) = AsyncStream.makeStream(of: String.self)
        let task = Task { [logger] in try await serve.run(logger: logger) { continuation.yield($0) } }
        var iterator = addresses.makeAsyncIterator()
        let address = await iterator.next() ?? ""
        do {
            try await body(ServeHTTP(base: "http://\(address)", serverId: serve.serverId), root)
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
        task.cancel()
        _ = await task.result
    }

    @Test func aPodcastIsAMusicAlbumOfAudioItems() async throws {
        try await Self.serving { http, root in
            let auth = try await http.signIn("Listener", ServeFixture.password)
            #expect(auth.status == 200)
            let token = auth.object["AccessToken"] as? String ?? ""
            // Served under ids of 32 hex digits (clients read every id as a GUID; a feed's episode id is not one).
            let podcast = Catalog.podcastId(serverId: http.serverId, podcastId: Self.podcastId)
            let first = Catalog.podcastEpisodeId(serverId: http.serverId, podcastId: Self.podcastId, episodeId: "ep-1")
            let second = Catalog.podcastEpisodeId(
                serverId: http.serverId, podcastId: Self.podcastId, episodeId: "ep-2")
            #expect([podcast, first, second].allSatisfy { $0.count == 32 && UInt128($0, radix: 16) != nil })
            let views = try await http.send("GET", "/UserViews", token: token)
            #expect(views.items.map { $0["CollectionType"] as? String } == ["music"])
            let music = views.items.first?["Id"] as? String ?? ""
            let albums = try await http.send("GET", "/Items?ParentId=\(music)", token: token)
            #expect(albums.items.map { $0["Type"] as? String } == ["MusicAlbum"])
            #expect(albums.items.first?["Id"] as? String == podcast)
            #expect(albums.items.first?["MediaType"] as? String == "Unknown")
            #expect(albums.items.first?["Name"] as? String == "The Test Cast")
            let tracks = try await http.send(
                "GET", "/Items?ParentId=\(podcast)&SortBy=PremiereDate&SortOrder=Descending", token: token)
            #expect(tracks.items.map { $0["Id"] as? String } == [second, first])
            #expect(tracks.items.first?["Type"] as? String == "Audio")
            #expect(tracks.items.first?["Album"] as? String == "The Test Cast")
            #expect(tracks.items.first?["AlbumId"] as? String == podcast)
            // The run time read from the file's own headers (a feed's episode carries none in the layout).
            #expect((tracks.items.first?["RunTimeTicks"] as? NSNumber)?.int64Value == 100_000_000)
            #expect(tracks.items.last?["RunTimeTicks"] == nil)
            let recursive = try await http.send(
                "GET", "/Items?Recursive=true&IncludeItemTypes=Audio&SearchTerm=first", token: token)
            #expect(recursive.items.map { $0["Id"] as? String } == [first])

            let info = try await http.send("GET", "/Items/\(first)/PlaybackInfo", token: token)
            let source = (info.object["MediaSources"] as? [[String: Any]])?.first ?? [:]
            #expect(source["Container"] as? String == "mp3")
            #expect(source["VideoType"] == nil)
            let audio = try await http.send("GET", "/Audio/\(first)/universal?api_key=\(token)")
            #expect(audio.status == 200)
            #expect(audio.headers["content-type"] == "audio/mpeg")
            #expect(audio.body == Self.bytes("ep-1"))
            let tail = try await http.send(
                "GET", "/Audio/\(first)/stream.mp3", token: token, headers: ["Range": "bytes=-10"])
            #expect(tail.status == 206)
            #expect(tail.body == Array(Self.bytes("ep-1").suffix(10)))

            // A podcast episode's mark stays here (`local`), as `mediasync played` keeps it, under the episode's
            // own id.
            let played = try await http.send("POST", "/UserPlayedItems/\(first)", token: token)
            #expect(played.object["Played"] as? Bool == true)
            let index = try MirrorIndex(path: root.indexPath)
            #expect(try index.playEvents(state: .local).map(\.itemId) == ["ep-1"])
            let unplayed = try await http.send(
                "GET", "/Items?ParentId=\(podcast)&Filters=IsUnplayed", token: token)
            #expect(unplayed.items.map { $0["Id"] as? String } == [second])
        }
    }

    /// mpv plays a stream URL from `serve` (as jellyfin-mpv-shim hands it one), starting two thirds in: it can only
    /// start there by asking for a range of the file.
    @Test(.enabled(if: MpvPlayer.locate() != nil, "mpv is not installed (Debian: apt install mpv)"))
    func mpvPlaysAServedStreamFromASeekPosition() async throws {
        try await Self.serving(wav: true) { http, _ in
            let token = try await http.signIn("listener", ServeFixture.password).object["AccessToken"] as? String ?? ""
            let episode = Catalog.podcastEpisodeId(
                serverId: http.serverId, podcastId: Self.podcastId, episodeId: "ep-1")
            let url = "\(http.base)/Audio/\(episode)/stream?static=true&api_key=\(token)"
            let executable = MpvPlayer.locate()?.executable ?? "mpv"
            let mpv = try await Spawned.run(
                executable,
                [
                    "--no-config", "--vo=null", "--ao=null", "--start=20", "--end=22",
                    "--term-playing-msg=started at ${=time-pos}", url,
                ], errorIntoOutput: true)
            let (status, output) = (mpv.status, mpv.stdout)
            #expect(status == 0, "mpv said: \(output)")
            let started = output.split(separator: "\n").first { $0.hasPrefix("started at ") }
                .flatMap { Double($0.dropFirst("started at ".count)) }
            #expect((started ?? 0) >= 19, "mpv said: \(output)")
            #expect(output.contains("00:00:30"), "mpv read the length from the served file: \(output)")
        }
    }

    @Test func theSocketKeepsAClientConnected() async throws {
        try await Self.serving { http, _ in
            let token = try await http.signIn("listener", ServeFixture.password).object["AccessToken"] as? String ?? ""
            let port = Int(http.base.split(separator: ":").last ?? "0") ?? 0
            let (first, second) = try await offThePool { () throws -> (String, String) in
                let socket = try RawWebSocket(port: port, path: "/socket?api_key=\(token)")
                defer { socket.close() }
                let first = try socket.readText()
                try socket.sendText(#"{"MessageType":"KeepAlive"}"#)
                return (first, try socket.readText())
            }
            let types = [first, second].map { text in
                ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any])?["MessageType"]
                    as? String
            }
            #expect(types == ["ForceKeepAlive", "KeepAlive"])
            let refused = try await offThePool {
                try RawWebSocket.handshakeStatus(port: port, path: "/socket?api_key=wrong")
            }
            #expect(refused != 101)
        }
    }

    @Test func discoveryAnswersWhoIsJellyfinServer() async throws {
        let port = 17_000 + Int(getpid() % 20_000)
        try await Self.serving(discoveryPort: port) { http, _ in
            let answer = try await offThePool { try Self.ask(port: port, "who is JellyfinServer?") }
            let object = (try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any] ?? [:]
            #expect(object["Id"] as? String == http.serverId)
            #expect(object["Address"] as? String == http.base)
            #expect(object.keys.contains("EndpointAddress"))
        }
    }

    /// Sends one datagram to 127.0.0.1:`port` and waits (up to 300 s, a bound for a loaded machine, not a timing
    /// check) for the answer.
    static func ask(port: Int, _ question: String) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 300, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        let bytes = Array(question.utf8)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { throw ServeError("no discovery answer") }
        return Array(buffer[0..<count])
    }
}
