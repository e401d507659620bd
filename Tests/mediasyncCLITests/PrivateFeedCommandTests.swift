import Foundation
import MediaSyncTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `mediasync podcast add URL --username U --password-stdin` and a `user:pass@` URL, end to end through the binary:
/// the password reaches the feed and `feed-credentials.json` (0600) only, never an output line, the index, an
/// OPML export or the mirror.
@Suite struct PrivateFeedCommandTests {
    static let password = "Pw-for-a-private-feed-7Q"

    static func serve(_ server: TestServer, path: String, user: String) {
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        server.setFile("/private/ep.mp3", contents: Array(repeating: 7, count: 5_000), contentType: "audio/mpeg")
        let feed = Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Members only</title><link>https://example.org</link>
            <item><title>Bonus</title><guid isPermaLink="false">bonus-1</guid>
            <pubDate>Mon, 06 Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(server.baseURL)/private/ep.mp3" length="5000" type="audio/mpeg"/></item>
            </channel></rss>
            """.utf8)
        server.setHandler(path) { request in
            guard request.headers["authorization"] == expected else {
                return TestServer.CustomResponse(
                    status: 401, contentType: "text/plain", body: Array("credentials please".utf8),
                    headers: [("WWW-Authenticate", "Basic realm=\"members\"")])
            }
            return TestServer.CustomResponse(contentType: "application/rss+xml", body: feed)
        }
    }

    @Test func addWithPasswordStdinSyncsAndKeepsThePasswordInTheStoreOnly() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        Self.serve(sandbox.server, path: "/private/a.xml", user: "member")
        Self.serve(sandbox.server, path: "/private/b.xml", user: "other")
        var outputs: [CommandRunner.Output] = []

        let refused = try await sandbox.run(["podcast", "add", sandbox.server.baseURL + "/private/a.xml", "--all"])
        outputs.append(refused)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("needs credentials"), "\(refused.stderr)")

        let add = try await sandbox.run(
            [
                "podcast", "add", sandbox.server.baseURL + "/private/a.xml", "--all", "--username", "member",
                "--password-stdin",
            ], input: Self.password + "\n")
        outputs.append(add)
        #expect(add.status == 0, "\(add.stderr)")
        let withUserInfo = sandbox.server.baseURL.replacingOccurrences(of: "://", with: "://other:\(Self.password)@")
        let addURL = try await sandbox.run(["podcast", "add", withUserInfo + "/private/b.xml", "--all"])
        outputs.append(addURL)
        #expect(addURL.status == 0, "\(addURL.stderr)")

        for arguments in [
            ["sync"], ["podcast", "list", "--json"], ["podcast", "export"], ["sync", "--dry-run", "--json"],
        ] {
            let output = try await sandbox.run(arguments)
            #expect(output.status == 0, "\(arguments): \(output.stderr)")
            outputs.append(output)
        }
        let store = sandbox.folder + "/config/feed-credentials.json"
        var info = stat()
        #expect(stat(store, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect((FileManager.default.contents(atPath: store) ?? Data()).range(of: Data(Self.password.utf8)) != nil)
        for output in outputs {
            #expect(!output.stdout.contains(Self.password) && !output.stderr.contains(Self.password))
        }
        #expect(outputs.contains { $0.stdout.contains("<outline") })
        // Only the store holds it: not the index, the mirror, nor anything else in the config folder.
        let everything = ((try? FileManager.default.subpathsOfDirectory(atPath: sandbox.folder)) ?? []).map {
            sandbox.folder + "/" + $0
        }
        let holders = everything.filter { path in
            path != store
                && (FileManager.default.contents(atPath: path) ?? Data()).range(of: Data(Self.password.utf8)) != nil
        }
        #expect(holders.isEmpty, "\(holders)")
        let downloads =
            (try? FileManager.default.subpathsOfDirectory(atPath: sandbox.folder + "/mirror/Downloads")) ?? []
        #expect(downloads.filter { $0.hasSuffix("bonus-1.mp3") }.count == 2, "\(downloads)")
    }

    @Test func usernameAndPasswordStdinGoTogether() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let alone = try await sandbox.run(["podcast", "add", sandbox.server.baseURL + "/x.xml", "--username", "u"])
        #expect(alone.status == 64)
        let noUser = try await sandbox.run(["podcast", "add", sandbox.server.baseURL + "/x.xml", "--password-stdin"])
        #expect(noUser.status == 64)
    }
}
