import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The Jellyfin commands as a user runs them: login, browse, select, sync, each a separate process.
@Suite struct JellyfinCommandTests {
    struct Sandbox {
        let server: TestServer
        let folder: String
        var environment: [String: String] {
            ["MEDIASYNC_ROOT": folder + "/mirror", "MEDIASYNC_CONFIG_DIR": folder + "/config", "MEDIASYNC_API_KEY": ""]
        }

        init(library: TestLibrary = TestLibrary(movies: 2, series: 1, mediaSize: 30_000)) throws {
            server = try TestServer(library: library)
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-cli-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        func run(_ arguments: [String], input: String? = nil, extra: [String: String] = [:]) async throws
            -> CommandRunner.Output
        {
            try await CommandRunner.run(arguments, environment: environment.merging(extra) { $1 }, input: input)
        }

        func login() async throws -> CommandRunner.Output {
            try await run(["login", server.baseURL, "--username", "demo", "--password-stdin"], input: "demo\n")
        }

        func tearDown() {
            server.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// Runs `body` in a fresh sandbox signed in with a password (the sign-in is checked to succeed), torn down
        /// after it whatever it does.
        static func signedIn(sourceLocation: SourceLocation = #_sourceLocation, _ body: (Sandbox) async throws -> Void)
            async throws
        {
            let sandbox = try Sandbox()
            defer { sandbox.tearDown() }
            #expect(try await sandbox.login().status == 0, sourceLocation: sourceLocation)
            try await body(sandbox)
        }
    }

    @Test func logsInWithAPasswordAndKeepsTheTokenPrivate() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let output = try await sandbox.login()
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("Signed in as demo"))
        let credentials = sandbox.folder + "/config/credentials.json"
        let attributes = try FileManager.default.attributesOfItem(atPath: credentials)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let token = sandbox.server.library.accessToken
        #expect(
            String(decoding: FileManager.default.contents(atPath: credentials) ?? Data(), as: UTF8.self).contains(token)
        )
        #expect(!output.stdout.contains(token) && !output.stderr.contains(token))
        // The password went in the body, never in a URL or header; no request carried the token in its URL.
        #expect(sandbox.server.allRequests.allSatisfy { !$0.query.values.contains(token) && !$0.path.contains(token) })
    }

    @Test func aWrongPasswordIsOneClearLineAndNoCredentials() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let output = try await sandbox.run(
            ["login", sandbox.server.baseURL, "--username", "demo", "--password-stdin"], input: "nope\n")
        #expect(output.status == 1)
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("mediasync: ") == true)
        #expect(!FileManager.default.fileExists(atPath: sandbox.folder + "/config/credentials.json"))
    }

    @Test func logsInWithAnAPIKeyFromTheEnvironment() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let output = try await sandbox.run(
            ["login", sandbox.server.baseURL, "--username", "demo"],
            extra: ["MEDIASYNC_API_KEY": sandbox.server.library.apiKey])
        #expect(output.status == 0, "\(output.stderr)")
        let browse = try await sandbox.run(["browse", "--type", "movie", "--json"])
        #expect(browse.status == 0, "\(browse.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(browse.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 2)
    }

    @Test func aSyncWithSelectionsButNoSignInExitsWithTheAuthenticationCode() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let nothingSelected = try await sandbox.run(["sync"])
        #expect(nothingSelected.status == 0, "nothing selected and no podcasts: nothing to do, no sign-in needed")
        let root = MirrorRoot(path: sandbox.folder + "/mirror")
        try MirrorIndex(path: root.indexPath).select(
            Selection(id: sandbox.server.library.movies[0].id, kind: .movie, addedAt: "2026-01-01T00:00:00Z"))
        let output = try await sandbox.run(["sync"])
        #expect(output.status == 4)
        #expect(output.stderr.contains("mediasync login"))
    }

    @Test func selectsSyncsAndFindsNothingToDoTheSecondTime() async throws {
        try await Sandbox.signedIn { sandbox in
            let movie = sandbox.server.library.movies[0]
            let select = try await sandbox.run(["select", "movie", movie.id, "--all-versions"])
            #expect(select.status == 0, "\(select.stderr)")
            let wrongKind = try await sandbox.run(["select", "series", movie.id])
            #expect(wrongKind.status == 1)
            #expect(wrongKind.stderr.contains("not a series"))
            let hostile = try await sandbox.run(["select", "movie", "../../etc"])
            #expect(hostile.status == 64)
            let selections = try await sandbox.run(["selections", "--json"])
            #expect(selections.stdout.contains(movie.id))

            let plan = try await sandbox.run(["sync", "--dry-run", "--json"])
            #expect(plan.status == 0, "\(plan.stderr)")
            let planned = try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any]
            #expect(planned?["dryRun"] as? Bool == true)
            #expect(
                ((planned?["planned"] as? [[String: Any]]) ?? []).contains { $0["action"] as? String == "download" })
            #expect(!FileManager.default.fileExists(atPath: sandbox.folder + "/mirror/Downloads/\(movie.id)"))

            let first = try await sandbox.run(["sync"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("Downloaded"))
            // Not on a terminal: one timestamped line per finished file.
            let lines = first.stderr.split(separator: "\n")
            #expect(lines.contains { $0.contains(" info downloaded Downloads/\(movie.id)/") && $0.hasPrefix("20") })
            #expect(lines.contains { $0.contains(" info written Downloads/\(movie.id)/metadata.json") })
            for source in movie.mediaSources {
                let path = sandbox.folder + "/mirror/Downloads/\(movie.id)/\(movie.id)-\(source.id).mkv"
                let same =
                    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
                    == sandbox.server.library.mediaBytes(forMediaSourceId: source.id)
                #expect(same, "\(path)")
            }
            let second = try await sandbox.run(["sync"])
            #expect(second.status == 0)
            #expect(second.stdout.contains("Up to date"))

            let url = try await sandbox.run(["url", movie.id, "--version", movie.mediaSources[1].id])
            #expect(
                url.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                    == "\(sandbox.server.baseURL)/Items/\(movie.mediaSources[1].id)/Download")
        }
    }

    @Test func aSecondSyncOnTheSameRootExitsAtOnce() async throws {
        try await Sandbox.signedIn { sandbox in
            let lock = try RootLock(root: MirrorRoot(path: sandbox.folder + "/mirror"))
            let output = try await sandbox.run(["sync"])
            #expect(output.status == 5)
            #expect(output.stderr.contains("another mediasync sync is running"))
            withExtendedLifetime(lock) {}
        }
    }
}

@Suite struct RevokedSignInTests {
    @Test func aRevokedTokenMakesSyncAskForANewSignIn() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        #expect(try await sandbox.login().status == 0)
        #expect(try await sandbox.run(["select", "movie", sandbox.server.library.movies[1].id]).status == 0)
        sandbox.server.updateLibrary { $0.accessToken = "revoked0000000000000000000000000" }
        let output = try await sandbox.run(["sync"])
        #expect(output.status == 4)
        #expect(output.stderr.contains("sign in again"))
        #expect(!output.stderr.contains(sandbox.server.library.apiKey))
    }
}

@Suite struct PodcastCommandTests {
    @Test func addsListsExportsImportsAndParses() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let feed = """
            <?xml version="1.0"?><rss version="2.0"><channel><title>Tiny Show</title>
            <item><title>One</title><guid>t-1</guid><enclosure url="\(sandbox.server.baseURL)/t1.mp3" type="audio/mpeg"/></item>
            </channel></rss>
            """
        sandbox.server.setFile("/tiny.xml", contents: Array(feed.utf8), contentType: "application/rss+xml")
        sandbox.server.setFile("/t1.mp3", contents: Array(repeating: 7, count: 3000), contentType: "audio/mpeg")
        let add = try await sandbox.run(["podcast", "add", sandbox.server.baseURL + "/tiny.xml"])
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stdout.contains("Tiny Show"))
        let list = try await sandbox.run(["podcast", "list", "--json"])
        #expect(list.stdout.contains("Tiny Show") && list.stdout.contains("/tiny.xml"))
        let export = try await sandbox.run(["podcast", "export"])
        #expect(export.stdout.contains("xmlUrl=\"\(sandbox.server.baseURL)/tiny.xml\""))

        // Podcasts need no Jellyfin sign-in. Log lines for collectors are JSON objects.
        let sync = try await sandbox.run(["sync", "--log-format", "json"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let events = try sync.stderr.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        #expect(
            events.contains { $0?["message"]?.hasPrefix("downloaded Downloads/") == true && $0?["bytes"] == "3000" })
        #expect(events.allSatisfy { $0?["time"] != nil && $0?["level"] != nil })
        #expect(sandbox.server.requests(to: "/t1.mp3").count == 1)
        #expect(sandbox.server.requests(to: "/t1.mp3").first?.headers["authorization"] == nil)

        // Importing the exported OPML into another root subscribes to the same feed.
        try export.stdout.write(toFile: sandbox.folder + "/subs.opml", atomically: true, encoding: .utf8)
        let other = try await sandbox.run(
            ["podcast", "import", sandbox.folder + "/subs.opml"], extra: ["MEDIASYNC_ROOT": sandbox.folder + "/other"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(other.stdout.contains("1 of 1 feeds subscribed"))

        try feed.write(toFile: sandbox.folder + "/feed.xml", atomically: true, encoding: .utf8)
        let parse = try await sandbox.run(["podcast", "parse", sandbox.folder + "/feed.xml", "--json"])
        let json = try JSONSerialization.jsonObject(with: Data(parse.stdout.utf8)) as? [String: Any]
        #expect(json?["title"] as? String == "Tiny Show")
        #expect((json?["episodes"] as? [[String: Any]])?.first?["guid"] as? String == "t-1")

        let broken = try await sandbox.run(["podcast", "add", sandbox.server.baseURL + "/missing.xml"])
        #expect(broken.status == 1)
        #expect(broken.stderr.hasPrefix("mediasync: "))
    }
}
