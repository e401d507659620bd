import Foundation
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The access token, the API key and the password never leave the credentials file: not in a log line (text or
/// JSON), `--json` output, an error message, a printed URL, a process's argument list, a request URL, or any file
/// under the mirror roots and the config folder but the 0600 credentials file.
///
/// The CLI runs end to end against the test server with distinctive secrets, through sign-in (password and API
/// key), browsing, selection, syncs in every output format, a dry run, and failures: a 500 mid-run, a 401 on one
/// download, a server that echoes the token in its error bodies, and a revoked token.
@Suite struct SecretsTests {
    /// Values no other text contains, so any occurrence is a leak.
    static let token = "Tk7Q9zXk2LpV4wR8mN3bJ6hG5fD1sA0e"
    static let apiKey = "Ak4E8rT2yU6iO0pL3kJ9hG7fD5sA1zXc"
    static let password = "Pw9M3nB7vC1xZ5aSq"
    static let secrets = [token, apiKey, password]

    /// The secret (or a 12-character piece of it) that `text` contains, if any.
    static func leak(in text: String) -> String? {
        for secret in secrets {
            let pieces = [secret, String(secret.prefix(12)), String(secret.suffix(12))]
            if let found = pieces.first(where: { text.contains($0) }) { return found }
        }
        return nil
    }

    struct Sandbox {
        let server: TestServer
        let folder: String
        var config: String { folder + "/config" }
        var environment: [String: String] {
            ["MEDIASYNC_ROOT": folder + "/mirror", "MEDIASYNC_CONFIG_DIR": config, "MEDIASYNC_API_KEY": ""]
        }

        init() throws {
            var library = TestLibrary(movies: 3, series: 1, mediaSize: 40_000)
            library.accessToken = SecretsTests.token
            library.apiKey = SecretsTests.apiKey
            library.password = SecretsTests.password
            server = try TestServer(library: library)
            folder =
                FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-secrets-\(UUID().uuidString)")
                .path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        func run(_ arguments: [String], input: String? = nil, extra: [String: String] = [:]) async throws
            -> CommandRunner.Output
        {
            try await CommandRunner.run(arguments, environment: environment.merging(extra) { $1 }, input: input)
        }

        func tearDown() {
            server.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    /// Every command's output, labelled, for the final scan.
    final class Transcript: @unchecked Sendable {
        private(set) var entries: [(label: String, text: String)] = []

        func add(_ label: String, _ output: CommandRunner.Output) {
            entries.append(("\(label) (stdout)", output.stdout))
            entries.append(("\(label) (stderr)", output.stderr))
        }
    }

    @Test func noSecretInAnyOutputArgumentListRequestOrFile() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let transcript = Transcript()
        let library = sandbox.server.library
        let base = sandbox.server.baseURL

        // Sign in with the password (stdin), then with the API key (environment), then with the password again.
        let login = try await sandbox.run(
            ["login", base, "--username", "demo", "--password-stdin"], input: Self.password + "\n")
        transcript.add("login --password-stdin", login)
        #expect(login.status == 0, "\(login.stderr)")
        let keyLogin = try await sandbox.run(
            ["login", base, "--username", "demo"], extra: ["MEDIASYNC_API_KEY": Self.apiKey])
        transcript.add("login with MEDIASYNC_API_KEY", keyLogin)
        #expect(keyLogin.status == 0, "\(keyLogin.stderr)")
        let wrong = try await sandbox.run(
            ["login", base, "--username", "demo", "--password-stdin"], input: Self.password + "x\n")
        transcript.add("login with a wrong password", wrong)
        #expect(wrong.status != 0)
        let relogin = try await sandbox.run(
            ["login", base, "--username", "demo", "--password-stdin"], input: Self.password + "\n")
        transcript.add("login again", relogin)
        #expect(relogin.status == 0, "\(relogin.stderr)")

        // Browse and select, then print URLs and the schedule.
        for arguments in [["browse"], ["browse", "--json"], ["browse", "--type", "movie", "--json"]] {
            let output = try await sandbox.run(arguments)
            transcript.add(arguments.joined(separator: " "), output)
            #expect(output.status == 0, "\(arguments): \(output.stderr)")
        }
        let movies = library.movies
        // Selections live in a root's index: each sync below gets a root of its own with the same selections.
        func selectAll(root: String) async throws {
            for movie in movies {
                let select = try await sandbox.run(["select", "movie", movie.id, "--all-versions", "--root", root])
                transcript.add("select movie", select)
                #expect(select.status == 0, "\(select.stderr)")
            }
            let series = try await sandbox.run(["select", "series", library.series[0].id, "--root", root])
            transcript.add("select series", series)
            #expect(series.status == 0, "\(series.stderr)")
        }
        let roots = [
            "mirror", "mirror-text", "mirror-json", "mirror-jsonlog", "mirror-faults", "mirror-faults-json",
            "mirror-faults-log", "mirror-revoked",
        ]
        for root in roots { try await selectAll(root: sandbox.folder + "/" + root) }
        for arguments in [
            ["selections", "--json"], ["url", movies[0].id], ["url", movies[0].id, "--image", "Primary"],
            ["schedule", "print"], ["schedule", "print", "--format", "cron"], ["sync", "--dry-run", "--json"],
            ["sync", "--dry-run"],
        ] {
            let output = try await sandbox.run(arguments)
            transcript.add(arguments.joined(separator: " "), output)
            #expect(output.status == 0, "\(arguments): \(output.stderr)")
        }

        // A sync with text log lines, rate-limited so that its argument list can be read while it runs.
        let arguments = ["sync", "--limit-rate", "100K", "--root", sandbox.folder + "/mirror-text"]
        let environment = sandbox.environment
        // Sampled on a thread of its own: a cooperative thread blocked in this loop would starve parallel tests.
        let (text, samples, argumentLeaks) = try await offThePool {
            try Self.runSampling(arguments, environment: environment)
        }
        transcript.add("sync (text log)", text)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.contains(" info downloaded Downloads/"))
        #expect(samples > 0, "the sync ended before its argument list was read")
        #expect(argumentLeaks.isEmpty, "secrets in argument lists: \(argumentLeaks)")

        // The same in the other output formats, each into a root of its own.
        let json = try await sandbox.run(["sync", "--json", "--root", sandbox.folder + "/mirror-json"])
        transcript.add("sync --json", json)
        #expect(json.status == 0, "\(json.stderr)")
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) != nil)
        let jsonLog = try await sandbox.run([
            "sync", "--log-format", "json", "--root", sandbox.folder + "/mirror-jsonlog",
        ])
        transcript.add("sync --log-format json", jsonLog)
        #expect(jsonLog.status == 0, "\(jsonLog.stderr)")
        #expect(jsonLog.stderr.contains("\"level\""))

        // Failures mid-run: a 500 on one file, a 401 on another, a server that echoes the token in its error
        // bodies, each into a fresh root; then a revoked token.
        let sources = movies.flatMap(\.mediaSources)
        sandbox.server.inject(.status(500), path: "/Items/\(sources[0].id)/Download", count: 50)
        sandbox.server.inject(.status(401), path: "/Items/\(sources[1].id)/Download", count: 50)
        // (The token this client sent; an API key the server merely knows is not the client's to hide.)
        let echo = Array("invalid token \(Self.token) in MediaBrowser Token=\"\(Self.token)\"".utf8)
        sandbox.server.inject(
            .body(status: 500, contentType: "text/plain", bytes: echo), path: "/Items/\(sources[2].id)/Download",
            count: 50)
        for (label, arguments) in [
            ("sync with failures", ["sync", "--attempts", "2", "--root", sandbox.folder + "/mirror-faults"]),
            (
                "sync --json with failures",
                ["sync", "--json", "--attempts", "2", "--root", sandbox.folder + "/mirror-faults-json"]
            ),
            (
                "sync --log-format json with failures",
                ["sync", "--log-format", "json", "--attempts", "2", "--root", sandbox.folder + "/mirror-faults-log"]
            ),
        ] {
            let output = try await sandbox.run(arguments)
            transcript.add(label, output)
            #expect(output.status != 0, "\(label) should report its failures")
            #expect(!output.stderr.isEmpty || !output.stdout.isEmpty)
        }
        sandbox.server.clearFaults()
        // (400: not retried, so the listing fails at once.)
        sandbox.server.inject(
            .body(
                status: 400, contentType: "application/json",
                bytes: Array("{\"Message\":\"bad token \(Self.token)\"}".utf8)),
            path: "/Items", count: 50)
        let listing = try await sandbox.run(["browse", "--type", "movie", "--json"])
        transcript.add("browse with an echoing 500", listing)
        #expect(listing.status != 0)
        sandbox.server.clearFaults()
        sandbox.server.updateLibrary { $0.accessToken = "revoked0000000000000000000000000" }
        let revoked = try await sandbox.run(["sync", "--root", sandbox.folder + "/mirror-revoked"])
        transcript.add("sync with a revoked token", revoked)
        #expect(revoked.status == 4, "\(revoked.stderr)")

        // 1. No output of any command holds a secret.
        #expect(transcript.entries.count >= 40)
        for (label, text) in transcript.entries {
            #expect(Self.leak(in: text) == nil, "\(label) shows a secret: \(text.prefix(2000))")
        }
        // 2. No request carried a secret in its URL.
        let requests = sandbox.server.allRequests
        #expect(requests.count > 20)
        for request in requests {
            let url = request.path + "?" + request.query.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
            #expect(Self.leak(in: url) == nil, "request \(url)")
        }
        // 3. No file holds a secret but the credentials file, which holds the token and is private.
        let credentials = sandbox.config + "/credentials.json"
        var scanned = 0
        for file in Self.files(under: sandbox.folder) {
            let bytes = FileManager.default.contents(atPath: file) ?? Data()
            scanned += 1
            let found =
                Self.leak(in: String(decoding: bytes, as: UTF8.self))
                ?? Self.leak(in: String(decoding: bytes, as: Unicode.ASCII.self))
            if file == credentials {
                #expect(found == String(Self.token), "the credentials file holds the last sign-in's token")
            } else {
                #expect(found == nil, "\(file) holds a secret")
            }
        }
        #expect(scanned > 20)
        let attributes = try FileManager.default.attributesOfItem(atPath: credentials)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: sandbox.config)
        #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)
    }

    // MARK: Helpers

    /// Runs the CLI and reads the argument lists of its process tree until it exits: (output, samples, leaks).
    static func runSampling(_ arguments: [String], environment: [String: String]) throws
        -> (CommandRunner.Output, Int, [String])
    {
        let process = try CommandRunner.start(arguments, environment: environment)
        var samples = 0
        var leaks: [String] = []
        while process.isRunning {
            for pid in processTree(from: process.pid) {
                guard let line = commandLine(of: pid) else { continue }
                samples += 1
                if let leak = leak(in: line) { leaks.append("\(pid): \(leak)") }
            }
            usleep(5_000)
        }
        let finished = process.finish()
        return (
            CommandRunner.Output(status: finished.status, stdout: finished.stdout, stderr: finished.stderr), samples,
            leaks
        )
    }

    /// `pid` and its descendants (from `/proc/*/stat`).
    static func processTree(from pid: Int32) -> [Int32] {
        var parents: [Int32: Int32] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[child] = parent }
        }
        var tree: Set<Int32> = [pid]
        var grew = true
        while grew {
            grew = false
            for (child, parent) in parents where tree.contains(parent) && !tree.contains(child) {
                tree.insert(child)
                grew = true
            }
        }
        return Array(tree)
    }

    /// A process's argument list, NULs turned into spaces; nil once it has gone.
    static func commandLine(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }

    /// Every regular file under `folder`, hidden ones included.
    static func files(under folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let path = folder + "/" + relative
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files
    }
}

/// For `Scripts/check-secrets.sh`: writes every secret the test suite uses (the test libraries' tokens and API keys
/// for each seed the tests use, and the secrets suite's values), one per line, to `$MEDIASYNC_SECRETS_LIST`; the
/// script then counts them in the whole suite's output.
@Suite struct SecretsListTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MEDIASYNC_SECRETS_LIST"] != nil))
    func writeTheKnownSecrets() throws {
        let path = try #require(ProcessInfo.processInfo.environment["MEDIASYNC_SECRETS_LIST"])
        // Seeds: the default, and those the tests pass to TestLibrary (grep "seed:" in Tests).
        var secrets = [1, 3, 4, 42].flatMap { seed -> [String] in
            let library = TestLibrary(movies: 1, series: 0, seed: UInt64(seed))
            return [library.accessToken, library.apiKey]
        }
        secrets += SecretsTests.secrets
        // The private feeds' passwords.
        secrets += [PrivateFeedCommandTests.password, "s3cret-Pr1vate-feed-pw"]  // and PrivateFeedTests.password
        try (secrets.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Set(secrets).count == secrets.count)
        #expect(secrets.allSatisfy { $0.count >= 16 })
    }
}
