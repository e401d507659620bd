import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A browser's requests to the page without a browser: its cookie kept by hand, redirects not followed.
final class WebClient: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    let base: String
    private let lock = NSLock()
    private var cookie: String?

    init(base: String) {
        self.base = base
    }

    var sessionCookie: String? {
        get { lock.withLock { cookie } }
        set { lock.withLock { cookie = newValue } }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Sends a request; a `Set-Cookie` of the page's session is kept for the next ones.
    func send(
        _ method: String, _ path: String, form: [String: String]? = nil, headers: [String: String] = [:],
        useCookie: Bool = true
    ) async throws -> Reply {
        guard let url = URL(string: base + path) else { throw ServeError("bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if useCookie, let cookie = sessionCookie { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let form {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let body = form.map { key, value in
                "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
            }.joined(separator: "&")
            request.httpBody = Data(body.utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 600
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw ServeError("not HTTP") }
        var lowered: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { lowered[name.lowercased()] = value }
        }
        if let set = lowered["set-cookie"], set.hasPrefix("mediasync_session="),
            let pair = set.split(separator: ";").first
        {
            sessionCookie = set.hasPrefix("mediasync_session=;") ? nil : String(pair)
        }
        return Reply(status: http.statusCode, headers: lowered, body: [UInt8](data))
    }

    /// The CSRF token the page holds.
    static func csrf(_ page: Reply) -> String {
        let text = page.text
        guard let start = text.range(of: "name=\"csrf\" value=\"") else { return "" }
        return String(text[start.upperBound...].prefix { $0 != "\"" })
    }
}

/// The page on `serve` over real loopback: routes, sign-in, the security rules, escaping, keep, sync, podcasts.
@Suite struct WebPageTests {
    static func library() -> TestLibrary {
        var library = TestLibrary(
            movies: 3, series: 1, seasonsPerSeries: 1, episodesPerSeason: 2, mediaSize: 20_000, seed: 71)
        // A hostile title: the page must show it as text.
        if let index = library.items.firstIndex(where: { $0.type == "Movie" }) {
            library.items[index].name = "<img src=x onerror=alert(1)>"
        }
        return library
    }

    static func securityHeadersAreSent(_ reply: Reply) {
        #expect(reply.headers["content-security-policy"]?.contains("default-src 'self'") == true)
        #expect(reply.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(reply.headers["x-content-type-options"] == "nosniff")
        #expect(reply.headers["referrer-policy"] == "no-referrer")
    }

    @Test func rootSendsToThePageAndNothingIsServedWithoutASession() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            try await fixture.serving { http in
                let web = WebClient(base: http.base)
                let root = try await web.send("GET", "/")
                #expect(root.status == 302)
                #expect(root.headers["location"] == "/mediasync/")
                let signIn = try await web.send("GET", "/mediasync/")
                #expect(signIn.status == 200)
                #expect(signIn.text.contains("Password"))
                #expect(signIn.text.contains("Sign in"))
                #expect(!signIn.text.contains("<script"))
                Self.securityHeadersAreSent(signIn)
                // The stylesheet comes without a session; nothing else does.
                let css = try await web.send("GET", "/mediasync/assets/site.css")
                #expect(css.status == 200)
                Self.securityHeadersAreSent(css)
                for path in [
                    "/mediasync/sync", "/mediasync/browse", "/mediasync/podcasts", "/mediasync/assets/site.js",
                ] {
                    let reply = try await web.send("GET", path)
                    #expect(reply.status == 401, "\(path)")
                    #expect(reply.text.contains("Sign in"), "\(path)")
                }
                let api = try await web.send("GET", "/mediasync/api/progress")
                #expect(api.status == 401)
                #expect(api.headers["content-type"]?.hasPrefix("application/json") == true)
                // A made-up session is no session.
                web.sessionCookie = "mediasync_session=0123456789abcdef"
                let forged = try await web.send("GET", "/mediasync/api/progress")
                #expect(forged.status == 401)
                let post = try await web.send("POST", "/mediasync/sync", form: ["csrf": "x"])
                #expect(post.status == 401)
                // The Jellyfin routes keep their own rules.
                let ping = try await http.send("GET", "/System/Ping")
                #expect(ping.status == 200)
                #expect(ping.headers["access-control-allow-origin"] == "*")
            }
        }
    }

    @Test func aWrongPasswordIsRefusedTheRightOneSignsInAndANewPasswordSignsOut() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            try await fixture.serving { http in
                let web = WebClient(base: http.base)
                let wrong = try await web.send("POST", "/mediasync/sign-in", form: ["password": "guess"])
                #expect(wrong.status == 401)
                #expect(wrong.text.contains("Wrong password"))
                #expect(web.sessionCookie == nil)
                let right = try await web.send(
                    "POST", "/mediasync/sign-in", form: ["password": ServeFixture.password])
                #expect(right.status == 303)
                let cookie = right.headers["set-cookie"] ?? ""
                #expect(cookie.contains("HttpOnly"))
                #expect(cookie.contains("SameSite=Strict"))
                #expect(!cookie.contains("Secure"))
                let mirror = try await web.send("GET", "/mediasync/")
                #expect(mirror.status == 200)
                #expect(mirror.text.contains("<h1>Mirror</h1>"))
                Self.securityHeadersAreSent(mirror)
                // Behind a TLS proxy the cookie is Secure.
                let proxied = WebClient(base: http.base)
                let secure = try await proxied.send(
                    "POST", "/mediasync/sign-in", form: ["password": ServeFixture.password],
                    headers: ["X-Forwarded-Proto": "https"])
                #expect(secure.headers["set-cookie"]?.contains("; Secure") == true)
                // A new password ends the session.
                try MediaServe.setPassword("another one", user: nil, config: fixture.config)
                let after = try await web.send("GET", "/mediasync/sync")
                #expect(after.status == 401)
                #expect(after.text.contains("Sign in"))
            }
        }
    }

    @Test func changesNeedThePagesTokenAndItsOwnOrigin() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            try await fixture.serving { http in
                let web = WebClient(base: http.base)
                _ = try await web.send("POST", "/mediasync/sign-in", form: ["password": ServeFixture.password])
                let page = try await web.send("GET", "/mediasync/sync")
                let csrf = WebClient.csrf(page)
                #expect(csrf.count == 64)
                let host = String(http.base.dropFirst("http://".count))
                let noToken = try await web.send("POST", "/mediasync/podcasts/unsubscribe", form: ["id": "x"])
                #expect(noToken.status == 403)
                let wrongToken = try await web.send(
                    "POST", "/mediasync/podcasts/unsubscribe",
                    form: ["id": "x", "csrf": String(repeating: "0", count: 64)])
                #expect(wrongToken.status == 403)
                let foreign = try await web.send(
                    "POST", "/mediasync/podcasts/unsubscribe", form: ["id": "x", "csrf": csrf],
                    headers: ["Origin": "http://evil.example"])
                #expect(foreign.status == 403)
                Self.securityHeadersAreSent(foreign)
                let crossSite = try await web.send(
                    "POST", "/mediasync/sign-in", form: ["password": ServeFixture.password],
                    headers: ["Sec-Fetch-Site": "cross-site"], useCookie: false)
                #expect(crossSite.status == 403)
                // `Origin: null` (what a browser sends under `Referrer-Policy: no-referrer`) passes only with
                // `Sec-Fetch-Site: same-origin`.
                let nullOrigin = try await web.send(
                    "POST", "/mediasync/podcasts/unsubscribe", form: ["id": "x", "csrf": csrf],
                    headers: ["Origin": "null"])
                #expect(nullOrigin.status == 403)
                let nullSameSite = try await web.send(
                    "POST", "/mediasync/podcasts/unsubscribe", form: ["id": "x", "csrf": csrf],
                    headers: ["Origin": "null", "Sec-Fetch-Site": "same-origin"])
                #expect(nullSameSite.status == 404)
                // The page's own origin with its token passes the checks (the podcast is not there: 404).
                let own = try await web.send(
                    "POST", "/mediasync/podcasts/unsubscribe", form: ["id": "x", "csrf": csrf],
                    headers: ["Origin": "http://\(host)"])
                #expect(own.status == 404)
                // Sign out ends the session.
                let out = try await web.send("POST", "/mediasync/sign-out", form: ["csrf": csrf])
                #expect(out.status == 303)
                let after = try await web.send("GET", "/mediasync/api/progress")
                #expect(after.status == 401)
            }
        }
    }

    @Test func browseEscapesNamesKeepsAnItemAndSyncNowPlacesItsFiles() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            try await fixture.serving { http in
                let web = WebClient(base: http.base)
                _ = try await web.send("POST", "/mediasync/sign-in", form: ["password": ServeFixture.password])
                let browse = try await web.send("GET", "/mediasync/browse")
                #expect(browse.status == 200)
                #expect(browse.text.contains("Keep offline"))
                #expect(browse.text.contains("&lt;img src=x onerror=alert(1)&gt;"))
                #expect(!browse.text.contains("<img src=x"))
                #expect(!browse.text.contains(fixture.client.accessToken ?? "-"))
                let csrf = WebClient.csrf(browse)
                guard let movie = fixture.library.movies.last else { throw ServeError("no movie") }
                // Search by name, as the server searches.
                let searched = try await web.send(
                    "GET",
                    "/mediasync/browse?search="
                        + (movie.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
                #expect(searched.text.contains("data-id=\"\(movie.id)\""))
                // A poster through serve, with the page's headers.
                let poster = try await web.send("GET", "/mediasync/image/server/\(movie.id)")
                #expect(poster.status == 200)
                #expect(poster.headers["content-type"]?.hasPrefix("image/") == true)
                Self.securityHeadersAreSent(poster)
                let kept = try await web.send(
                    "POST", "/mediasync/keep", form: ["csrf": csrf, "id": movie.id, "back": "/mediasync/browse"])
                #expect(kept.status == 303)
                #expect(kept.headers["location"] == "/mediasync/browse?notice=kept")
                let selections = try fixture.index.selections()
                #expect(selections.map(\.id) == [movie.id])
                #expect(selections.first?.kind == .movie)
                #expect(selections.first?.name == movie.name)
                let after = try await web.send("GET", "/mediasync/browse")
                #expect(after.text.contains("Kept offline"))
                #expect(after.text.contains("Stop keeping"))
                // A second "Sync now" while a sync holds the lock says so.
                do {
                    let held = try RootLock(root: fixture.root)
                    let refused = try await web.send("POST", "/mediasync/sync", form: ["csrf": csrf])
                    #expect(refused.headers["location"] == "/mediasync/sync?notice=running")
                    withExtendedLifetime(held) {}
                }
                let started = try await web.send("POST", "/mediasync/sync", form: ["csrf": csrf])
                #expect(started.headers["location"] == "/mediasync/sync?notice=started")
                var progress: [String: Any] = [:]
                for _ in 0..<6_000 {
                    progress = try await web.send("GET", "/mediasync/api/progress").object
                    if progress["running"] as? Bool == false, progress["outcome"] != nil { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(progress["outcome"] as? String == "ok", "\(progress)")
                #expect((progress["downloaded"] as? Int ?? 0) > 0)
                #expect(try fixture.index.entries().contains { $0.file.itemId == movie.id })
                let sync = try await web.send("GET", "/mediasync/sync")
                #expect(sync.text.contains("Last sync"))
                #expect(sync.text.contains("role=\"progressbar\""))
                let mirror = try await web.send("GET", "/mediasync/")
                #expect(mirror.text.contains(WebTestsText.escaped(movie.name)))
                // Stop keeping: the selection goes, the files stay.
                let unkept = try await web.send(
                    "POST", "/mediasync/unkeep", form: ["csrf": csrf, "id": movie.id, "back": "https://evil.example/"])
                #expect(unkept.headers["location"] == "/mediasync/browse?notice=unkept")
                #expect(try fixture.index.selections().isEmpty)
                #expect(try fixture.index.entries().contains { $0.file.itemId == movie.id })
            }
        }
    }

    @Test func theServerUnreachableLeavesTheMirrorPage() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            // No password, loopback: the page asks for none.
            // Between serve and the home server: it counts the connections made to it.
            let port = try #require(URL(string: fixture.upstream.baseURL)?.port)
            let proxy = try CountingProxy(to: UInt16(port))
            defer { proxy.close() }
            var credentials = try #require(try Credentials.load(from: fixture.config))
            try await fixture.serving { http in
                fixture.upstream.shutdown()
                let web = WebClient(base: http.base)
                // A closed port: the connection is refused.
                let browse = try await web.send("GET", "/mediasync/browse")
                #expect(browse.status == 200)
                #expect(browse.text.contains("Server unreachable"))
                // A server whose connections end at once: the page asks once and says so (a sync would try again).
                credentials.serverURL = proxy.address
                try credentials.save(to: fixture.config)
                let once = try await web.send("GET", "/mediasync/browse")
                #expect(once.status == 200)
                #expect(once.text.contains("Server unreachable"))
                #expect(proxy.connections == 1)
                let mirror = try await web.send("GET", "/mediasync/")
                #expect(mirror.status == 200)
                #expect(mirror.text.contains("&lt;img src=x onerror=alert(1)&gt;"))
                #expect(!mirror.text.contains("<img src=x"))
                #expect(mirror.text.contains("/mediasync/image/held/"))
                #expect(!mirror.text.contains("Sign out"))
                // The mirror's own posters.
                let text = mirror.text
                if let range = text.range(of: "/mediasync/image/held/") {
                    let path = "/mediasync/image/held/" + text[range.upperBound...].prefix { $0 != "\"" }
                    let image = try await web.send("GET", path)
                    #expect(image.status == 200)
                    Self.securityHeadersAreSent(image)
                }
            }
        }
    }

    @Test func aSyncWhoseProcessIsGoneReadsAsInterrupted() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            // A process that has ended: its pid names no process now.
            let ended = try Spawned("/bin/true", [])
            _ = ended.finish()
            let state: [String: Any] = [
                "running": true, "pid": Int(ended.pid), "phase": "downloading", "startedAt": "2026-01-01T00:00:00Z",
                "updatedAt": "2026-01-01T00:00:05Z", "filesDone": 1, "filesTotal": 4, "bytesDone": 10,
                "bytesTotal": 40, "bytesPerSecond": 2.0, "percent": 25, "downloaded": 0, "failed": [],
            ]
            try JSONSerialization.data(withJSONObject: state).write(
                to: URL(fileURLWithPath: SyncProgressFile.path(fixture.root)))
            let read = SyncProgressFile.read(fixture.root)
            #expect(read?.running == false)
            #expect(read?.outcome == "interrupted")
            #expect(read?.finishedAt == "2026-01-01T00:00:05Z")
            try await fixture.serving { http in
                let web = WebClient(base: http.base)
                let page = try await web.send("GET", "/mediasync/sync")
                #expect(page.text.contains("Last sync"))
                #expect(page.text.contains("interrupted"))
            }
        }
    }

    @Test func hostilePathsAndMethodsAreNeverA5xx() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try await fixture.serving { http in
                let web = WebClient(base: http.base)
                for (method, path) in [
                    ("GET", "/mediasync/image/held/..%2F..%2Fetc%2Fpasswd"), ("GET", "/mediasync/image/server/..%2Fx"),
                    ("DELETE", "/mediasync/"), ("PUT", "/mediasync/sync"),
                    ("GET", "/mediasync/keep"), ("GET", "/mediasync/nothing"), ("POST", "/"),
                    ("GET", "/mediasync/browse?page=-5&library=%00"),
                ] {
                    let reply = try await web.send(method, path)
                    #expect(reply.status < 500, "\(method) \(path): \(reply.status)")
                    Self.securityHeadersAreSent(reply)
                }
            }
        }
    }
}

enum WebTestsText {
    /// What the page shows for `text`, written here on its own (not the page's function).
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}
