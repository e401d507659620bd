import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// The podcast account end to end: a "phone" talks to the test server's gPodder API directly, the mirror syncs.
@Suite struct PodcastAccountSyncTests {
    /// A clock the tests move by hand (the server's own clock moves one second per request).
    final class Clock: Sendable {
        let time = Locked(Date(timeIntervalSince1970: TimeInterval(GPodderServer.startTime - 86_400)))
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    struct Fixture {
        let server: TestServer
        let folder: TemporaryDirectory
        let config: ConfigDirectory
        let root: MirrorRoot
        let index: MirrorIndex
        let clock = Clock()
        let kind: PodcastAccount.Kind

        init(kind: PodcastAccount.Kind = .mygpo) throws {
            self.kind = kind
            server = try TestServer()
            folder = try TemporaryDirectory()
            config = ConfigDirectory(path: folder.file("config"))
            root = MirrorRoot(path: folder.file("root"))
            try root.prepare()
            index = try MirrorIndex(path: root.indexPath)
            server.gpodder.addUser("me", password: "secret")
        }

        var http: HTTPClient { HTTPClient(retryPolicy: RetryPolicy(maxAttempts: 1)) }

        func feedURL(_ name: String) -> String { server.baseURL + "/feeds/\(name).xml" }

        /// Publishes a feed of `count` episodes of 600 s each, `<name>-1` … `<name>-<count>`, at
        /// `/feeds/<name>.xml` (or `path`).
        /// - Parameters:
        ///   - duration: the feed's `itunes:duration` of each episode (none when nil).
        ///   - contents: each episode's file (by default 2,000 bytes that are not audio).
        ///   - redirected: the enclosure URLs are `/track/…`, which answer 302 to the file's `/media/…` URL (as a
        ///     tracking service's do).
        func publish(
            _ name: String, at path: String? = nil, count: Int = 5, duration: Int? = 600,
            contents: ((Int) -> [UInt8])? = nil, redirected: Bool = false
        ) {
            let items = (1...count).map { number in
                let path = "/media/\(name)-\(number).mp3"
                let bytes = contents?(number) ?? Array(repeating: UInt8(truncatingIfNeeded: number), count: 2000)
                server.setFile(path, contents: bytes, contentType: "audio/mpeg")
                var enclosure = server.baseURL + path
                if redirected {
                    let tracked = "/track/\(name)-\(number).mp3"
                    server.inject(.redirect(location: enclosure, status: 302), path: tracked, count: 100)
                    enclosure = server.baseURL + tracked
                }
                return """
                    <item><title>\(name) \(number)</title><guid isPermaLink="false">\(name)-\(number)</guid>
                    <pubDate>\(Fixture.rfc822(number))</pubDate>\(duration.map { "<itunes:duration>\($0)</itunes:duration>" } ?? "")
                    <enclosure url="\(enclosure)" length="\(bytes.count)" type="audio/mpeg"/></item>
                    """
            }
            let feed = """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
                <title>\(name)</title><link>https://example.org</link>
                \(items.joined(separator: "\n"))
                </channel></rss>
                """
            server.setFile(
                path ?? "/feeds/\(name).xml", contents: Array(feed.utf8), contentType: "application/rss+xml",
                etag: "\"\(name)\"")
        }

        /// Episode `number`'s publication date: an hour after the one before.
        static func rfc822(_ number: Int) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
            return formatter.string(from: Date(timeIntervalSince1970: 1_735_725_600 + Double(number) * 3600))
        }

        /// An MP3 file of `frames` constant-bit-rate frames (MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, 1,152 samples a
        /// frame), silent: 2,300 frames are 60.08 s.
        static func mp3(frames: Int) -> [UInt8] {
            var frame = [UInt8](repeating: 0, count: 417)
            frame[0...3] = [0xFF, 0xFB, 0x90, 0x00]
            return Array((0..<frames).map { _ in frame }.joined())
        }

        func enclosure(_ name: String, _ number: Int) -> String { server.baseURL + "/media/\(name)-\(number).mp3" }

        func episodeId(_ name: String, _ number: Int) -> String { PodcastLayout.episodeId(guid: "\(name)-\(number)") }

        var account: PodcastAccount {
            PodcastAccount(
                server: server.baseURL + (kind == .nextcloud ? "/" : ""), kind: kind, username: "me",
                password: "secret", device: "nas", syncWith: kind == .mygpo ? ["phone"] : [])
        }

        @discardableResult
        func link() async throws -> [String] {
            try await PodcastAccountLink(config: config, http: http).link(account)
        }

        func subscribe(_ name: String) async throws -> Subscription {
            try await Subscriptions(index: index, client: http).add(
                url: feedURL(name), retention: .defaultForNewSubscriptions)
        }

        func sync(delete: Bool = false) async throws -> SyncReport {
            let clock = self.clock
            return try await MirrorSync(
                root: root, index: index, server: nil, client: http,
                transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 1)),
                now: { clock.now }, feedCredentials: FeedCredentialStore(config: config)
            ).run(options: SyncOptions(delete: delete))
        }

        var mirror: Mirror { Mirror.using(root: root, index: index, durable: false) }

        /// The paths of the media files the index records.
        func heldFiles() throws -> Set<String> {
            Set(try index.entries().filter { $0.file.kind == .media }.map(\.file.path))
        }

        /// The latest local play event of an episode.
        func latest(_ episodeId: String) throws -> PlayEvent? {
            try index.playEvents().last { $0.itemId == episodeId && $0.state == .local }
        }

        func actions(device: String? = nil, _ action: String? = nil) -> [GPodderServer.Action] {
            server.gpodder.storedActions(of: "me").filter {
                (device == nil || $0.device == device) && (action == nil || $0.action.lowercased() == action)
            }
        }

        func tearDown() {
            server.shutdown()
            folder.remove()
        }
    }

    /// The phone: test code talking to the server's API directly.
    struct Phone {
        let fixture: Fixture

        private func send(_ method: String, _ path: String, _ body: String) async throws {
            var headers: HTTPHeaders = [:]
            headers.add(name: "Authorization", value: "Basic " + Data("me:secret".utf8).base64EncodedString())
            headers.add(name: "Content-Type", value: "application/json")
            _ = try await fixture.http.send(
                HTTPRequest(
                    method: method, url: fixture.server.baseURL + path, headers: headers, body: Array(body.utf8)))
        }

        func register() async throws {
            try await send("POST", "/api/2/devices/me/phone.json", #"{"caption":"Phone","type":"mobile"}"#)
        }

        func subscriptions(add: [String] = [], remove: [String] = []) async throws {
            let body = try String(
                decoding: JSONSerialization.data(withJSONObject: ["add": add, "remove": remove]), as: UTF8.self)
            if fixture.kind == .nextcloud {
                try await send("POST", "/index.php/apps/gpoddersync/subscription_change/create", body)
            } else {
                try await send("POST", "/api/2/subscriptions/me/phone.json", body)
            }
        }

        func play(_ name: String, _ number: Int, position: Int, total: Int = 600, at: Date, guid: Bool = true)
            async throws
        {
            try await actions([
                [
                    "podcast": fixture.feedURL(name), "episode": fixture.enclosure(name, number), "action": "play",
                    "timestamp": EpisodeAction.timestamp(at), "started": 0, "position": position, "total": total,
                    "device": "phone",
                ].merging(guid ? ["guid": "\(name)-\(number)"] : [:]) { first, _ in first }
            ])
        }

        func actions(_ list: [[String: Any]]) async throws {
            let body = try String(decoding: JSONSerialization.data(withJSONObject: list), as: UTF8.self)
            if fixture.kind == .nextcloud {
                try await send("POST", "/index.php/apps/gpoddersync/episode_action/create", body)
            } else {
                try await send("POST", "/api/2/episodes/me.json", body)
            }
        }
    }

    // MARK: Linking

    @Test func linkingSignsInRegistersTheDeviceAndJoinsThePhonesGroup() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        try await Phone(fixture: fixture).register()
        let group = try await fixture.link()
        #expect(group == ["phone"])
        #expect(fixture.server.gpodder.devices(of: "me") == ["nas", "phone"])
        #expect(fixture.server.gpodder.syncGroups(of: "me") == [["nas", "phone"]])
        let login = fixture.server.requests(to: "/api/2/auth/me/login.json")
        #expect(login.count == 1 && login.first?.header("authorization")?.hasPrefix("Basic ") == true)
        // After the login, the session cookie goes with every request.
        #expect(
            fixture.server.requests(to: "/api/2/devices/me/nas.json").first?.header("cookie")?.hasPrefix("sessionid=")
                == true)
        #expect(
            fixture.server.requests(to: "/api/2/devices/me/nas.json").first?.header("content-type")
                == "application/json")
        let stored = try FileManager.default.attributesOfItem(atPath: fixture.config.path + "/podcast-account.json")
        #expect((stored[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aWrongPasswordIsOneLineStoresNothingAndPodcastsStillSync() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        var account = fixture.account
        account.password = "wrong"
        await #expect {
            try await PodcastAccountLink(config: fixture.config, http: fixture.http).link(account)
        } throws: { error in
            "\(error)".contains("refused the user name or password") && !"\(error)".contains("wrong")
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.config.path + "/podcast-account.json"))
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty && report.downloaded.count == 3, "\(report)")
    }

    // MARK: The story

    @Test func thePhonesSubscriptionsPlaysAndRemovalsComeHereAndOursGoThere() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        let phone = Phone(fixture: fixture)
        fixture.publish("alpha")
        fixture.publish("beta")
        try await phone.register()
        try await phone.subscriptions(add: [fixture.feedURL("beta")])
        let alpha = try await fixture.subscribe("alpha")
        try await fixture.link()

        // First link: the union, nothing removed.
        let first = try await fixture.sync()
        #expect(first.sourceErrors.isEmpty, "\(first)")
        let ids = try fixture.index.subscriptions().map(\.feedURL)
        #expect(Set(ids) == [fixture.feedURL("alpha"), fixture.feedURL("beta")])
        #expect(fixture.server.gpodder.subscriptions(of: "me", device: "phone") == Set(ids))
        #expect(first.downloaded.count == 6)
        // This sync's downloads are announced to the account.
        #expect(Set(fixture.actions(device: "nas", "download").map(\.episode)).count == 6)

        // The phone finishes alpha 5 and stops in alpha 4; it removes beta.
        fixture.clock.advance(60)
        try await phone.play("alpha", 5, position: 600, at: fixture.clock.now)
        try await phone.play("alpha", 4, position: 120, at: fixture.clock.now, guid: false)
        try await phone.subscriptions(remove: [fixture.feedURL("beta")])
        fixture.clock.advance(60)
        let second = try await fixture.sync()
        #expect(second.sourceErrors.isEmpty, "\(second)")
        #expect(try fixture.latest(fixture.episodeId("alpha", 5))?.kind == .played)
        let stopped = try fixture.latest(fixture.episodeId("alpha", 4))
        #expect(stopped?.kind == .position && stopped?.positionTicks == 120 * 10_000_000)
        #expect(try fixture.index.subscriptions().map(\.id) == [alpha.id])
        // Beta's files stay until `sync --delete`.
        #expect(second.extraneous.contains { $0.hasPrefix("Downloads/") && !$0.contains(alpha.id) })
        // Nothing the phone did comes back as ours.
        #expect(fixture.actions(device: "nas", "play").isEmpty)

        // A third sync applies nothing twice and sends nothing.
        let before = fixture.server.gpodder.storedActions(of: "me").count
        let events = try fixture.index.playEvents().count
        let third = try await fixture.sync()
        #expect(third.sourceErrors.isEmpty, "\(third)")
        #expect(try fixture.index.playEvents().count == events)
        #expect(fixture.server.gpodder.storedActions(of: "me").count == before)
    }

    @Test func marksMadeHereGoBackAsPlayActions() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let book = fixture.mirror.playState
        let four = try book.target(fixture.episodeId("alpha", 4), root: fixture.root)
        let five = try book.target(fixture.episodeId("alpha", 5), root: fixture.root)
        fixture.clock.advance(60)
        try book.mark(four, .position, positionTicks: 90 * 10_000_000, at: fixture.clock.now)
        try book.mark(five, .played, at: fixture.clock.now)
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        let plays = fixture.actions(device: "nas", "play")
        #expect(plays.count == 2)
        let played = plays.first { $0.guid == "alpha-5" }
        #expect(played?.position == 600 && played?.total == 600)
        #expect(played?.episode == fixture.enclosure("alpha", 5) && played?.podcast == fixture.feedURL("alpha"))
        #expect(played?.timestamp == EpisodeAction.timestamp(fixture.clock.now))
        let position = plays.first { $0.guid == "alpha-4" }
        #expect(position?.position == 90 && position?.total == 600)
        _ = try await fixture.sync()
        #expect(fixture.actions(device: "nas", "play").count == 2)
    }

    @Test func deletionsHereAreSentAsDelete() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        let alpha = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        _ = try fixture.index.unsubscribe(id: alpha.id)
        let report = try await fixture.sync(delete: true)
        #expect(report.deleted.count >= 3, "\(report)")
        #expect(fixture.actions(device: "nas", "delete").count == 3)
        #expect(fixture.server.gpodder.subscriptions(of: "me", device: "nas").isEmpty)
    }

    @Test func anEpisodeFinishedOnThePhoneLeavesThroughPlayedCleanup() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await Subscriptions(index: fixture.index, client: fixture.http).add(
            url: fixture.feedURL("alpha"), retention: .defaultForNewSubscriptions, deletePlayedAfter: 0)
        try await fixture.link()
        let first = try await fixture.sync()
        #expect(first.downloaded.count == 3, "\(first)")
        fixture.clock.advance(60)
        try await Phone(fixture: fixture).play("alpha", 5, position: 595, at: fixture.clock.now)
        fixture.clock.advance(60)
        // Without --delete: played cleanup is its own gate.
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        #expect(report.deleted.contains { $0.hasSuffix("/alpha-5.mp3") }, "\(report)")
        // The deletion here is announced too.
        #expect(fixture.actions(device: "nas", "delete").map(\.guid) == ["alpha-5"])
    }

    // MARK: Conflicts

    @Test func theNewerSideWinsAndATieKeepsTheMarkHere() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        let phone = Phone(fixture: fixture)
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let book = fixture.mirror.playState
        let four = try book.target(fixture.episodeId("alpha", 4), root: fixture.root)
        let five = try book.target(fixture.episodeId("alpha", 5), root: fixture.root)
        let t = fixture.clock.now.addingTimeInterval(60)
        // Alpha 4: marked here at t, stopped on the phone later: the phone wins, the mark here is not sent.
        try book.mark(four, .played, at: t)
        try await phone.play("alpha", 4, position: 200, at: t.addingTimeInterval(30))
        // Alpha 5: the same second on both sides: the mark here stays, and is sent.
        try book.mark(five, .position, positionTicks: 100 * 10_000_000, at: t)
        try await phone.play("alpha", 5, position: 300, at: t)
        fixture.clock.advance(120)
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        let stopped = try fixture.latest(fixture.episodeId("alpha", 4))
        #expect(stopped?.kind == .position && stopped?.positionTicks == 200 * 10_000_000)
        #expect(try fixture.latest(fixture.episodeId("alpha", 5))?.positionTicks == 100 * 10_000_000)
        let plays = fixture.actions(device: "nas", "play")
        #expect(plays.map(\.guid) == ["alpha-5"])
        #expect(report.playState.contains { $0.contains("is newer than the mark here") })
        #expect(report.playState.contains { $0.contains("kept the mark here") })
    }

    @Test func anActionForAnEpisodeNeverSeenIsIgnoredAndCounted() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        try await Phone(fixture: fixture).actions([
            [
                "podcast": "https://elsewhere.example/feed", "episode": "https://elsewhere.example/x.mp3",
                "action": "play", "timestamp": EpisodeAction.timestamp(fixture.clock.now), "position": 10,
                "total": 100, "device": "phone",
            ]
        ])
        fixture.clock.advance(10)
        let report = try await fixture.sync()
        #expect(report.playState.contains { $0.contains("ignored 1 for episodes this mirror never saw") }, "\(report)")
        let again = try await fixture.sync()
        #expect(!again.playState.contains { $0.contains("ignored") })
    }

    // MARK: Exactly once

    @Test func aLostAnswerToTheUploadSendsNothingTwice() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let book = fixture.mirror.playState
        fixture.clock.advance(60)
        try book.mark(
            try book.target(fixture.episodeId("alpha", 5), root: fixture.root), .played, at: fixture.clock.now)
        fixture.server.gpodder.loseAnswer(toPOST: "/api/2/episodes/me.json")
        let cut = try await fixture.sync()
        #expect(cut.sourceErrors.count == 1, "\(cut)")
        #expect(fixture.actions(device: "nas", "play").count == 1)
        let posts = fixture.server.gpodder.postCount("/api/2/episodes/me.json")
        let next = try await fixture.sync()
        #expect(next.sourceErrors.isEmpty, "\(next)")
        #expect(fixture.actions(device: "nas", "play").count == 1)
        #expect(fixture.server.gpodder.postCount("/api/2/episodes/me.json") == posts)
    }

    @Test func anUploadThatNeverArrivedIsSentOnceNextTime() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let book = fixture.mirror.playState
        fixture.clock.advance(60)
        try book.mark(
            try book.target(fixture.episodeId("alpha", 4), root: fixture.root), .played, at: fixture.clock.now)
        fixture.server.gpodder.refusePOST("/api/2/episodes/me.json")
        let refused = try await fixture.sync()
        #expect(refused.sourceErrors.count == 1, "\(refused)")
        #expect(fixture.actions(device: "nas", "play").isEmpty)
        let next = try await fixture.sync()
        #expect(next.sourceErrors.isEmpty, "\(next)")
        #expect(fixture.actions(device: "nas", "play").count == 1)
        _ = try await fixture.sync()
        #expect(fixture.actions(device: "nas", "play").count == 1)
    }

    @Test func aServerDownThenUpLosesNothing() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let book = fixture.mirror.playState
        fixture.clock.advance(60)
        try book.mark(
            try book.target(fixture.episodeId("alpha", 3), root: fixture.root), .played, at: fixture.clock.now)
        fixture.server.inject(.status(503), path: "/api/2/auth/me/login.json")
        let down = try await fixture.sync()
        #expect(down.sourceErrors.count == 1 && down.hasEssentialFailures, "\(down)")
        #expect(down.failed.isEmpty)
        #expect(fixture.actions(device: "nas", "play").isEmpty)
        // A server answering HTML.
        fixture.server.inject(
            .body(status: 200, contentType: "text/html", bytes: Array("<html>maintenance</html>".utf8)),
            path: "/api/2/episodes/me.json")
        let html = try await fixture.sync()
        #expect(html.sourceErrors.first?.contains("did not answer as a gPodder server") == true, "\(html)")
        let up = try await fixture.sync()
        #expect(up.sourceErrors.isEmpty, "\(up)")
        #expect(fixture.actions(device: "nas", "play").count == 1)
    }

    @Test func thousandsOfPulledActionsAreAppliedOnce() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let start = fixture.clock.now
        let list: [[String: Any]] = (0..<3000).map { n in
            [
                "podcast": fixture.feedURL("alpha"), "episode": fixture.enclosure("alpha", 3 + n % 3),
                "guid": "alpha-\(3 + n % 3)", "action": "play",
                "timestamp": EpisodeAction.timestamp(start.addingTimeInterval(Double(n))), "position": n % 500,
                "total": 600, "device": "phone",
            ]
        }
        try await Phone(fixture: fixture).actions(list)
        fixture.clock.advance(4000)
        let book = fixture.mirror.playState
        for number in 3...5 {
            try book.mark(try book.target(fixture.episodeId("alpha", number), root: fixture.root), .played, at: start)
        }
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        // The last of each episode's actions stands.
        let last = try fixture.latest(fixture.episodeId("alpha", 5))
        #expect(last?.positionTicks == Int64(2999 % 500) * 10_000_000)
        let events = try fixture.index.playEvents().count
        _ = try await fixture.sync()
        #expect(try fixture.index.playEvents().count == events)
    }

    @Test func manyActionsHereAreSentInBatches() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("big", count: 450)
        _ = try await Subscriptions(index: fixture.index, client: fixture.http).add(
            url: fixture.feedURL("big"), retention: .all)
        try await fixture.link()
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty && report.downloaded.count == 450, "\(report)")
        #expect(fixture.actions(device: "nas", "download").count == 450)
        // 450 downloads: three POSTs of at most 200.
        #expect(fixture.server.gpodder.postCount("/api/2/episodes/me.json") == 3)
    }

    // MARK: update_urls

    @Test func aRewrittenURLIsAdoptedOnceWhenItAnswersAsAFeed() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        fixture.publish("beta")
        let alpha = try await fixture.subscribe("alpha")
        let beta = try await fixture.subscribe("beta")
        // alpha moves to a URL that serves the same feed; beta to one that answers 404.
        fixture.publish("alpha", at: "/moved/alpha.xml")
        fixture.server.gpodder.rewrite(fixture.feedURL("alpha"), to: fixture.server.baseURL + "/moved/alpha.xml")
        fixture.server.gpodder.rewrite(fixture.feedURL("beta"), to: fixture.server.baseURL + "/gone/beta.xml")
        try await fixture.link()
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        let moved = try #require(try fixture.index.subscription(matching: alpha.id))
        #expect(moved.feedURL == fixture.server.baseURL + "/moved/alpha.xml")
        #expect(try fixture.index.aliases(podcastId: alpha.id) == [fixture.feedURL("alpha")])
        #expect(try fixture.index.subscription(matching: beta.id)?.feedURL == fixture.feedURL("beta"))
        #expect(report.playState.contains { $0.contains("does not answer as a feed") })
    }

    // MARK: Lengths, redirects, rewrites

    @Test func aPlayTakesItsTotalFromTheHeldFileWhenTheFeedGivesNoDuration() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        // No itunes:duration; episode 3 is a real MP3 of 60 s, episodes 1 and 2 are bytes that are not audio.
        fixture.publish("plain", count: 3, duration: nil) { $0 == 3 ? Fixture.mp3(frames: 2300) : [] }
        _ = try await fixture.subscribe("plain")
        try await fixture.link()
        let first = try await fixture.sync()
        #expect(first.sourceErrors.isEmpty && first.downloaded.count == 3, "\(first)")
        let book = fixture.mirror.playState
        fixture.clock.advance(60)
        for number in [2, 3] {
            try book.mark(
                try book.target(fixture.episodeId("plain", number), root: fixture.root), .played,
                at: fixture.clock.now)
        }
        try book.mark(
            try book.target(fixture.episodeId("plain", 1), root: fixture.root), .position,
            positionTicks: 30 * 10_000_000, at: fixture.clock.now)
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        let plays = fixture.actions(device: "nas", "play")
        // The MP3's own length: a played mark is position == total == 60.
        let three = plays.first { $0.guid == "plain-3" }
        #expect(three?.position == 60 && three?.total == 60, "\(plays)")
        // Length unknown: a position goes without total; a played mark is not sent, and the report says so.
        let one = plays.first { $0.guid == "plain-1" }
        #expect(one?.position == 30 && one?.total == nil, "\(plays)")
        #expect(!plays.contains { $0.guid == "plain-2" })
        #expect(
            report.playState.contains {
                $0.contains(fixture.episodeId("plain", 2)) && $0.contains("not sent")
            }, "\(report)")
    }

    @Test func anActionNamingTheURLAnEnclosureRedirectedToFindsItsEpisode() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha", redirected: true)
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        let first = try await fixture.sync()
        #expect(first.sourceErrors.isEmpty && first.downloaded.count == 3, "\(first)")
        #expect(!fixture.server.requests(to: "/track/alpha-5.mp3").isEmpty)
        fixture.clock.advance(60)
        // The phone names the episode by the URL the redirect led to, without a guid.
        try await Phone(fixture: fixture).play("alpha", 5, position: 600, at: fixture.clock.now, guid: false)
        fixture.clock.advance(60)
        let report = try await fixture.sync()
        #expect(report.sourceErrors.isEmpty, "\(report)")
        #expect(!report.playState.contains { $0.contains("ignored") }, "\(report)")
        #expect(try fixture.latest(fixture.episodeId("alpha", 5))?.kind == .played)
    }

    @Test func anEpisodeURLTheServerRewritesNamesTheSameEpisodeAndIsAdoptedOnce() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        let alpha = try await fixture.subscribe("alpha")
        let original = fixture.enclosure("alpha", 5)
        let sanitised = fixture.server.baseURL + "/media/alpha-5.mp3?sanitised"
        // The server normalises the enclosure URL.
        fixture.server.gpodder.rewrite(original, to: sanitised)
        try await fixture.link()
        let first = try await fixture.sync()
        #expect(first.sourceErrors.isEmpty && first.downloaded.count == 3, "\(first)")
        // The download was announced with the feed's URL and stored under the server's.
        #expect(fixture.actions(device: "nas", "download").contains { $0.episode == sanitised })
        fixture.clock.advance(60)
        try await Phone(fixture: fixture).actions([
            [
                "podcast": fixture.feedURL("alpha"), "episode": sanitised, "action": "play",
                "timestamp": EpisodeAction.timestamp(fixture.clock.now), "started": 0, "position": 120, "total": 600,
                "device": "phone",
            ]
        ])
        fixture.clock.advance(60)
        let second = try await fixture.sync()
        #expect(second.sourceErrors.isEmpty, "\(second)")
        #expect(!second.playState.contains { $0.contains("ignored") }, "\(second)")
        let stopped = try fixture.latest(fixture.episodeId("alpha", 5))
        #expect(stopped?.kind == .position && stopped?.positionTicks == 120 * 10_000_000)
        // The episode keeps its id and its file: nothing fetched again, nothing deleted.
        #expect(second.downloaded.isEmpty && second.deleted.isEmpty, "\(second)")
        #expect(try fixture.heldFiles().contains { $0.hasSuffix("/alpha-5.mp3") })
        #expect(try fixture.index.subscription(matching: alpha.id)?.feedURL == fixture.feedURL("alpha"))
        // A mark here later goes with the feed's URL, never the rewritten one (which would come back mangled).
        let book = fixture.mirror.playState
        fixture.clock.advance(60)
        try book.mark(
            try book.target(fixture.episodeId("alpha", 5), root: fixture.root), .played, at: fixture.clock.now)
        let third = try await fixture.sync()
        #expect(third.sourceErrors.isEmpty, "\(third)")
        let body = String(
            decoding: fixture.server.requests(to: "/api/2/episodes/me.json").last { $0.method == "POST" }?.body ?? [],
            as: UTF8.self)
        #expect(body.contains("alpha-5.mp3") && !body.contains("sanitised"), "\(body)")
        #expect(try fixture.latest(fixture.episodeId("alpha", 5))?.kind == .played)
    }

    @Test func downloadsAndDeletionsOnOtherDevicesChangeNothingHere() async throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        let first = try await fixture.sync()
        #expect(first.downloaded.count == 3, "\(first)")
        let events = try fixture.index.playEvents().count
        let held = try fixture.heldFiles()
        fixture.clock.advance(60)
        // The phone deletes two episodes held here and downloads one this mirror does not keep.
        let at = EpisodeAction.timestamp(fixture.clock.now)
        try await Phone(fixture: fixture).actions(
            [(5, "delete"), (4, "delete"), (1, "download")].map { number, action in
                [
                    "podcast": fixture.feedURL("alpha"), "episode": fixture.enclosure("alpha", number),
                    "guid": "alpha-\(number)", "action": action, "timestamp": at, "device": "phone",
                ]
            })
        fixture.clock.advance(60)
        let report = try await fixture.sync(delete: true)
        #expect(report.sourceErrors.isEmpty && report.failed.isEmpty, "\(report)")
        #expect(report.downloaded.isEmpty && report.deleted.isEmpty, "\(report)")
        #expect(try fixture.heldFiles() == held)
        #expect(try fixture.index.playEvents().count == events)
        #expect(!report.playState.contains { $0.contains("applied") || $0.contains("ignored") }, "\(report)")
    }

    // MARK: Nextcloud

    @Test func nextcloudExchangesSubscriptionsAndActions() async throws {
        let fixture = try Fixture(kind: .nextcloud)
        defer { fixture.tearDown() }
        let phone = Phone(fixture: fixture)
        fixture.publish("alpha")
        fixture.publish("beta")
        try await phone.subscriptions(add: [fixture.feedURL("beta")])
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        let first = try await fixture.sync()
        #expect(first.sourceErrors.isEmpty, "\(first)")
        #expect(
            Set(try fixture.index.subscriptions().map(\.feedURL)) == [
                fixture.feedURL("alpha"), fixture.feedURL("beta"),
            ])
        #expect(fixture.server.gpodder.subscriptions(of: "me", device: "").count == 2)
        fixture.clock.advance(60)
        try await phone.play("beta", 5, position: 600, at: fixture.clock.now)
        let book = fixture.mirror.playState
        try book.mark(
            try book.target(fixture.episodeId("alpha", 4), root: fixture.root), .played, at: fixture.clock.now)
        fixture.clock.advance(60)
        let second = try await fixture.sync()
        #expect(second.sourceErrors.isEmpty, "\(second)")
        #expect(try fixture.latest(fixture.episodeId("beta", 5))?.kind == .played)
        let played = fixture.actions(device: nil, "play").filter { $0.guid == "alpha-4" }
        #expect(played.count == 1 && played.first?.position == 600)
        let events = try fixture.index.playEvents().count
        _ = try await fixture.sync()
        #expect(try fixture.index.playEvents().count == events)
    }

    @Test func nextcloudALostAnswerIsReadBackThoughTheServerWritesTheActionInCapitals() async throws {
        let fixture = try Fixture(kind: .nextcloud)
        defer { fixture.tearDown() }
        fixture.publish("alpha")
        _ = try await fixture.subscribe("alpha")
        try await fixture.link()
        _ = try await fixture.sync()
        let book = fixture.mirror.playState
        fixture.clock.advance(60)
        try book.mark(
            try book.target(fixture.episodeId("alpha", 5), root: fixture.root), .played, at: fixture.clock.now)
        let upload = "/index.php/apps/gpoddersync/episode_action/create"
        fixture.server.gpodder.loseAnswer(toPOST: upload)
        let cut = try await fixture.sync()
        #expect(cut.sourceErrors.count == 1, "\(cut)")
        #expect(fixture.actions(device: nil, "play").count == 1)
        let posts = fixture.server.gpodder.postCount(upload)
        let next = try await fixture.sync()
        #expect(next.sourceErrors.isEmpty, "\(next)")
        // Found among the server's actions (as `PLAY`, without a device): not sent again.
        #expect(fixture.server.gpodder.postCount(upload) == posts)
        #expect(fixture.actions(device: nil, "play").count == 1)
    }
}
