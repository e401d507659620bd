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

/// Private feeds: HTTP Basic credentials given at `add` or in the URL, stored 0600 in the config folder
/// by podcast id and nowhere else, sent only to the feed's origin; a 401 is "needs credentials" for that podcast.
@Suite struct PrivateFeedTests {
    static let username = "listener"
    static let password = "s3cret-Pr1vate-feed-pw"

    struct World {
        let fixture: PodcastSyncTests.Fixture
        let config: TemporaryDirectory
        var store: FeedCredentialStore { FeedCredentialStore(config: ConfigDirectory(path: config.path)) }

        init() throws {
            fixture = try PodcastSyncTests.Fixture()
            config = try TemporaryDirectory()
            let server = fixture.server
            let feed = PodcastSyncTests.feed(
                title: "Private", episodes: [PodcastSyncTests.five[0]], base: server.baseURL)
            server.setFile("/media/ep1.mp3", contents: fixture.audio("ep-1"), contentType: "audio/mpeg")
            let expected =
                "Basic " + Data("\(PrivateFeedTests.username):\(PrivateFeedTests.password)".utf8).base64EncodedString()
            server.setHandler("/private/show.xml") { request in
                guard request.headers["authorization"] == expected else {
                    return TestServer.CustomResponse(
                        status: 401, contentType: "text/plain", body: Array("who are you?".utf8),
                        headers: [("WWW-Authenticate", "Basic realm=\"private\"")])
                }
                return TestServer.CustomResponse(contentType: "application/rss+xml", body: feed)
            }
        }

        var url: String { fixture.server.baseURL + "/private/show.xml" }

        func subscriptions() -> Subscriptions {
            Subscriptions(index: fixture.index, client: HTTPClient(), credentialStore: store)
        }

        func sync() async throws -> SyncReport {
            try await MirrorSync(
                root: fixture.root, index: fixture.index, server: nil,
                transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 1)),
                feedCredentials: store
            ).run(options: SyncOptions())
        }

        func tearDown() {
            fixture.tearDown()
            config.remove()
        }

        /// Every file under the mirror root holding the password.
        func filesHoldingThePassword() -> [String] {
            fixture.folder.allFiles().filter { name in
                let data = FileManager.default.contents(atPath: fixture.folder.file(name)) ?? Data()
                return data.range(of: Data(PrivateFeedTests.password.utf8)) != nil
            }
        }
    }

    @Test func credentialsInTheURLAreMovedIntoTheStoreAndUsedBySync() async throws {
        let world = try World()
        defer { world.tearDown() }
        let withUserInfo = world.url.replacingOccurrences(
            of: "://", with: "://\(Self.username):\(Self.password)@")
        let subscription = try await world.subscriptions().add(url: withUserInfo, retention: .all)
        #expect(subscription.feedURL == world.url)
        #expect(
            try world.store.credentials(podcastId: subscription.id)
                == HTTPCredentials(username: Self.username, password: Self.password))
        var info = stat()
        #expect(stat(world.store.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)

        let report = try await world.sync()
        #expect(report.failed.isEmpty && report.sourceErrors.isEmpty, "\(report)")
        #expect(world.fixture.folder.allFiles().contains("Downloads/\(subscription.id)/ep-1.mp3"))
        // Not in the index, the metadata or anything else under the root; nor in the report.
        #expect(world.filesHoldingThePassword().isEmpty)
        #expect(!"\(report)".contains(Self.password))
    }

    @Test func withoutCredentialsTheFeedNeedsThemAndOnlyThatPodcastFails() async throws {
        let world = try World()
        defer { world.tearDown() }
        await #expect(throws: SyncError.self) {
            try await world.subscriptions().add(url: world.url, retention: .all)
        }
        do {
            _ = try await world.subscriptions().add(url: world.url, retention: .all)
        } catch {
            #expect("\(error)".contains("needs credentials"))
        }
        let subscription = try await world.subscriptions().add(
            url: world.url, retention: .all,
            credentials: HTTPCredentials(username: Self.username, password: Self.password))
        world.fixture.publish("/feeds/public.xml", title: "Public", episodes: [PodcastSyncTests.five[1]], etag: "\"p\"")
        let open = try await world.fixture.subscribe("/feeds/public.xml")
        // The stored password goes stale: that podcast needs credentials, the other one syncs.
        try world.store.save(HTTPCredentials(username: Self.username, password: "wrong"), podcastId: subscription.id)
        let report = try await world.sync()
        #expect(report.sourceErrors.count == 1)
        #expect(report.sourceErrors.first?.contains("needs credentials") == true, "\(report.sourceErrors)")
        #expect(world.fixture.folder.allFiles().contains("Downloads/\(open.id)/ep-2.mp3"))
        #expect(!report.sourceErrors.joined().contains("wrong"))
    }

    @Test func aDigestChallengeIsAnsweredAndThePasswordNeverSent() async throws {
        let world = try World()
        defer { world.tearDown() }
        let feed = PodcastSyncTests.feed(
            title: "Digest", episodes: [PodcastSyncTests.five[2]], base: world.fixture.server.baseURL)
        world.fixture.server.setFile("/media/ep3.mp3", contents: world.fixture.audio("ep-3"), contentType: "audio/mpeg")
        let seen = LockedLines()
        // RFC 7616 with SHA-256 and qop=auth, checked the way a server does: the password itself never travels.
        world.fixture.server.setHandler("/digest/show.xml") { request in
            let header = request.headers["authorization"] ?? ""
            seen.append(header)
            let fields = DigestChallenge.fields(header)
            let ha1 = DigestChallenge.sha256("\(Self.username):private:\(Self.password)")
            let ha2 = DigestChallenge.sha256("\(request.method):\(fields["uri"] ?? "")")
            let expected = DigestChallenge.sha256(
                [ha1, DigestChallenge.nonce, fields["nc"] ?? "", fields["cnonce"] ?? "", "auth", ha2].joined(
                    separator: ":"))
            guard header.hasPrefix("Digest "), fields["username"] == Self.username, fields["realm"] == "private",
                fields["nonce"] == DigestChallenge.nonce, fields["qop"] == "auth", fields["uri"] == request.path,
                fields["response"] == expected
            else {
                return TestServer.CustomResponse(
                    status: 401, contentType: "text/plain", body: Array("who are you?".utf8),
                    headers: [
                        (
                            "WWW-Authenticate",
                            #"Digest realm="private", qop="auth", algorithm=SHA-256, nonce="\#(DigestChallenge.nonce)""#
                        )
                    ])
            }
            return TestServer.CustomResponse(contentType: "application/rss+xml", body: feed)
        }
        let url = world.fixture.server.baseURL + "/digest/show.xml"
        let subscription = try await world.subscriptions().add(
            url: url, retention: .all,
            credentials: HTTPCredentials(username: Self.username, password: Self.password))
        #expect(subscription.title == "Digest")
        let report = try await world.sync()
        #expect(report.failed.isEmpty && report.sourceErrors.isEmpty, "\(report)")
        #expect(world.fixture.folder.allFiles().contains("Downloads/\(subscription.id)/ep-3.mp3"))
        // Each fetch asked first without credentials, then answered the challenge; never Basic, never the password.
        #expect(seen.values.contains { $0.hasPrefix("Digest ") })
        #expect(seen.values.allSatisfy { !$0.hasPrefix("Basic") && !$0.contains(Self.password) })
        #expect(world.filesHoldingThePassword().isEmpty)
    }

    @Test(
        "user:pass@ is split off a URL",
        arguments: [
            ("https://u:p@h.example/f.xml", "https://h.example/f.xml", "u", "p"),
            ("https://u%40x:p%3Aq@h.example:8443/f.xml?a=1", "https://h.example:8443/f.xml?a=1", "u@x", "p:q"),
            ("https://u@h.example/f.xml", "https://h.example/f.xml", "u", ""),
            ("https://h.example/f.xml", "https://h.example/f.xml", nil, nil),
        ] as [(String, String, String?, String?)])
    func userInfo(url: String, stripped: String, username: String?, password: String?) {
        let (rest, credentials) = FeedCredentialStore.splitUserInfo(url)
        #expect(rest == stripped)
        #expect(credentials?.username == username)
        #expect(credentials?.password == password)
    }
}

/// The server side of an RFC 7616 Digest exchange, for the tests.
enum DigestChallenge {
    static let nonce = "7c1f0d6e2b9a4c3d"

    static func sha256(_ text: String) -> String {
        var digest = SHA256()
        Array(text.utf8).withUnsafeBytes { digest.update($0) }
        return digest.finalize()
    }

    /// The `name=value` and `name="value"` pairs of an `Authorization: Digest …` header.
    static func fields(_ header: String) -> [String: String] {
        var fields: [String: String] = [:]
        var rest = Substring(header.hasPrefix("Digest ") ? String(header.dropFirst(7)) : header)
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let end = body.firstIndex(of: "\"") ?? body.endIndex
                value = body[..<end]
                rest = end < body.endIndex ? body[body.index(after: end)...] : ""
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end]
                rest = rest[end...]
            }
            fields[name.lowercased()] = String(value)
        }
        return fields
    }
}

/// Lines collected from the server's threads.
final class LockedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var values: [String] { lock.withLock { lines } }
}
