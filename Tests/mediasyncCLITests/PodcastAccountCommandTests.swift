import Foundation
import MediaSyncTestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `mediasync podcast account` through the binary: the password goes to the account file (0600) only, a refused
/// one is one line and stores nothing, and a sync whose account part fails still ends with exit 3.
@Suite struct PodcastAccountCommandTests {
    static let password = "Pw-for-the-gpodder-account-9X"

    @Test func linkShowSyncAndRemoveWithoutEverPrintingThePassword() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        sandbox.server.gpodder.addUser("me", password: Self.password)
        var outputs: [CommandRunner.Output] = []
        let accountFile = sandbox.folder + "/config/podcast-account.json"

        let refused = try await sandbox.run(
            ["podcast", "account", sandbox.server.baseURL, "--username", "me", "--password-stdin", "--device", "nas"],
            input: "not-it\n")
        outputs.append(refused)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("refused the user name or password"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: accountFile))

        let link = try await sandbox.run(
            [
                "podcast", "account", sandbox.server.baseURL, "--username", "me", "--password-stdin", "--device",
                "nas", "--sync-with", "phone",
            ], input: Self.password + "\n")
        outputs.append(link)
        #expect(link.status == 0, "\(link.stderr)")
        #expect(link.stdout.contains("as device nas, sharing with phone"), "\(link.stdout)")
        let attributes = try FileManager.default.attributesOfItem(atPath: accountFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let show = try await sandbox.run(["podcast", "account"])
        outputs.append(show)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("Device: nas") && show.stdout.contains("Shares with: phone"), "\(show.stdout)")

        let sync = try await sandbox.run(["sync"])
        outputs.append(sync)
        #expect(sync.status == 0, "\(sync.stderr)")
        let shown = try await sandbox.run(["podcast", "account"])
        outputs.append(shown)
        #expect(!shown.stdout.contains("Last exchange: never"), "\(shown.stdout)")

        sandbox.server.inject(.status(503), path: "/api/2/auth/me/login.json")
        let down = try await sandbox.run(["sync"])
        outputs.append(down)
        #expect(down.status == 3, "\(down.stderr)")
        #expect(down.stderr.contains("failed: podcast account"), "\(down.stderr)")

        let remove = try await sandbox.run(["podcast", "account", "--remove"])
        outputs.append(remove)
        #expect(remove.status == 0 && remove.stdout.contains("Forgot the podcast account"), "\(remove.stdout)")
        #expect(!FileManager.default.fileExists(atPath: accountFile))

        for output in outputs {
            #expect(!output.stdout.contains(Self.password) && !output.stderr.contains(Self.password))
        }
    }

    @Test func aSyncKilledWhileTheServerHoldsItsUploadSendsEachActionOnce() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let server = sandbox.server
        server.gpodder.addUser("me", password: Self.password)
        // The binary stamps its actions with this machine's clock; the server's clock is a day ahead of it (the
        // server answers only actions older than its own now, as mygpo does).
        server.gpodder.advance(seconds: Int64(Date().timeIntervalSince1970) + 86_400 - server.gpodder.now)
        let items = (1...3).map { number in
            server.setFile(
                "/media/ep-\(number).mp3", contents: Array(repeating: UInt8(number), count: 3_000),
                contentType: "audio/mpeg")
            return """
                <item><title>Episode \(number)</title><guid>ep-\(number)</guid>
                <pubDate>Wed, 0\(number) Jan 2025 10:00:00 +0000</pubDate><itunes:duration>600</itunes:duration>
                <enclosure url="\(server.baseURL)/media/ep-\(number).mp3" length="3000" type="audio/mpeg"/></item>
                """
        }
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
            <title>Killed</title><link>https://example.org</link>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """
        server.setFile("/feeds/killed.xml", contents: Array(feed.utf8), contentType: "application/rss+xml")
        let add = try await sandbox.run(["podcast", "add", server.baseURL + "/feeds/killed.xml", "--all"])
        #expect(add.status == 0, "\(add.stderr)")
        let link = try await sandbox.run(
            ["podcast", "account", server.baseURL, "--username", "me", "--password-stdin", "--device", "nas"],
            input: Self.password + "\n")
        #expect(link.status == 0, "\(link.stderr)")

        // The sync announces its three downloads in one upload; the server stores it, then holds the answer.
        let upload = "/api/2/episodes/me.json"
        server.gpodder.holdPOST(upload)
        let first = try CommandRunner.start(
            ["sync", "--quiet"], environment: sandbox.environment)
        for _ in 0..<6000 where !server.gpodder.isHolding(upload) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(server.gpodder.isHolding(upload))
        #expect(server.gpodder.storedActions(of: "me").count == 3)
        first.send(SIGKILL)
        let killed = await CommandRunner.wait(first)
        #expect(killed.status != 0)
        server.gpodder.releaseHold()

        let next = try await sandbox.run(["sync"])
        #expect(next.status == 0, "\(next.stderr)")
        // Read back, not sent again: each download is on the server once, and no other upload was made.
        let stored = server.gpodder.storedActions(of: "me")
        #expect(stored.count == 3, "\(stored)")
        #expect(Set(stored.map(\.episode)).count == 3 && stored.allSatisfy { $0.action == "download" })
        #expect(server.gpodder.postCount(upload) == 1)
        // The mirror is whole: the files the killed run placed are recorded and intact.
        let verify = try await sandbox.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let again = try await sandbox.run(["sync"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(server.gpodder.storedActions(of: "me").count == 3)
        #expect(server.gpodder.postCount(upload) == 1)
    }

    /// The Nextcloud story through the binary: a feed the phone subscribed to arrives here at the next sync, a feed
    /// added here reaches the account, and the phone's finished episode is played here.
    @Test func aNextcloudAccountSharesSubscriptionsAndPlaysBothWays() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let server = sandbox.server
        server.gpodder.addUser("me", password: Self.password)
        server.gpodder.advance(seconds: Int64(Date().timeIntervalSince1970) + 86_400 - server.gpodder.now)
        func publish(_ name: String) -> String {
            server.setFile(
                "/media/\(name)-1.mp3", contents: Array(repeating: 7, count: 3_000), contentType: "audio/mpeg")
            let feed = """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
                <title>Show \(name)</title><link>https://example.org</link>
                <item><title>\(name) 1</title><guid>\(name)-1</guid><pubDate>Wed, 01 Jan 2025 10:00:00 +0000</pubDate>
                <itunes:duration>600</itunes:duration>
                <enclosure url="\(server.baseURL)/media/\(name)-1.mp3" length="3000" type="audio/mpeg"/></item>
                </channel></rss>
                """
            server.setFile("/feeds/\(name).xml", contents: Array(feed.utf8), contentType: "application/rss+xml")
            return server.baseURL + "/feeds/\(name).xml"
        }
        let phoneFeed = publish("phone")
        let localFeed = publish("local")
        // The phone (as AntennaPod's Nextcloud sync does): HTTP Basic, JSON bodies.
        func phone(_ path: String, _ body: Any) async throws {
            guard let url = URL(string: server.baseURL + "/index.php/apps/gpoddersync/" + path) else { return }
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let basic = Data("me:\(Self.password)".utf8).base64EncodedString()
            request.setValue("Basic \(basic)", forHTTPHeaderField: "Authorization")
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(path)")
        }
        try await phone("subscription_change/create", ["add": [phoneFeed], "remove": [String]()])

        let add = try await sandbox.run(["podcast", "add", localFeed, "--all"])
        #expect(add.status == 0, "\(add.stderr)")
        let link = try await sandbox.run(
            ["podcast", "account", server.baseURL + "/", "--nextcloud", "--username", "me", "--password-stdin"],
            input: Self.password + "\n")
        #expect(link.status == 0, "\(link.stderr)")
        let first = try await sandbox.run(["sync"])
        #expect(first.status == 0, "\(first.stderr)")
        let list = try await sandbox.run(["podcast", "list"])
        #expect(list.stdout.contains("Show phone") && list.stdout.contains("Show local"), "\(list.stdout)")
        #expect(server.gpodder.subscriptions(of: "me", device: "") == [phoneFeed, localFeed])

        // Finished on the phone (AntennaPod sends position == total): played here after the next sync.
        let stamp = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60)).replacingOccurrences(
            of: "Z", with: "")
        try await phone(
            "episode_action/create",
            [
                [
                    "podcast": phoneFeed, "episode": server.baseURL + "/media/phone-1.mp3", "guid": "phone-1",
                    "action": "play", "timestamp": stamp, "started": 0, "position": 600, "total": 600,
                ]
            ])
        let second = try await sandbox.run(["sync"])
        #expect(second.status == 0, "\(second.stderr)")
        let played = try await sandbox.run(["played"])
        let mark = played.stdout.split(separator: "\n").first { $0.hasPrefix("phone-1 ") }
        #expect(mark?.contains(" played ") == true && mark?.contains("from the account") == true, "\(played.stdout)")
    }
}
