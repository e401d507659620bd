import Foundation
import Logging
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServe
import MediaSyncServer
import MediaSyncTestServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The upstream test server, a mirror synced from it (every movie and series selected), a configuration folder
/// with the upstream sign-in and a `serve` password, and `serve` itself on 127.0.0.1.
final class ServeFixture: Sendable {
    let upstream: TestServer
    let client: JellyfinClient
    let root: MirrorRoot
    let index: MirrorIndex
    let config: ConfigDirectory
    let library: TestLibrary
    static let password = "correct horse"

    init(library: TestLibrary, profile: JellyfinProfile = .newest) async throws {
        self.library = library
        upstream = try TestServer(library: library)
        upstream.profile = profile
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediasync-serve-\(UUID().uuidString)")
        root = MirrorRoot(path: folder.path + "/root")
        config = ConfigDirectory(path: folder.path + "/config")
        try root.prepare()
        index = try MirrorIndex(path: root.indexPath)
        let anonymous = try JellyfinClient(
            serverURL: upstream.baseURL, identity: ClientIdentity(device: "tests", deviceId: "serve-tests"))
        let result = try await anonymous.authenticate(username: library.userName, password: library.password)
        client = anonymous.signedIn(result)
        try Credentials(
            serverURL: upstream.baseURL, serverId: library.serverId, serverName: library.serverName,
            userId: library.userId, userName: library.userName, accessToken: client.accessToken ?? "",
            method: .password
        ).save(to: config)
    }

    var folder: String { (root.path as NSString).deletingLastPathComponent }

    func selectEverything() throws {
        for movie in library.movies {
            try index.select(Selection(id: movie.id, kind: .movie, addedAt: "2026-01-01T00:00:00Z"))
        }
        for series in library.series {
            try index.select(
                Selection(id: series.id, kind: .series, allVersions: true, addedAt: "2026-01-01T00:00:00Z"))
        }
    }

    @discardableResult
    func sync() async throws -> SyncReport {
        let sync = MirrorSync(
            root: root, index: index, server: client,
            transferOptions: TransferOptions(durable: false, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01)))
        return try await sync.run(options: SyncOptions())
    }

    func tearDown() {
        upstream.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs `body` against `serve` started on 127.0.0.1 (any free port), stopped afterwards.
    func serving(_ body: (ServeHTTP) async throws -> Void) async throws {
        let serve = try MediaServe(
            options: ServeOptions(root: root, config: config, host: "127.0.0.1", port: 0))
        let (addresses, continuation) = AsyncStream.makeStream(of: String.self)
        var logger = Logger(label: "serve-tests")
        // Cancelling the server at the end logs an error of its own; anything else a test sees in its answers.
        logger.logLevel = .critical
        let task = Task { [logger] in try await serve.run(logger: logger) { continuation.yield($0) } }
        var iterator = addresses.makeAsyncIterator()
        guard let address = await iterator.next() else {
            task.cancel()
            throw ServeError("serve did not start")
        }
        do {
            try await body(ServeHTTP(base: "http://\(address)", serverId: serve.serverId))
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
        task.cancel()
        _ = await task.result
    }

    static func with(
        _ library: TestLibrary, profile: JellyfinProfile = .newest, _ body: (ServeFixture) async throws -> Void
    ) async throws {
        let fixture = try await ServeFixture(library: library, profile: profile)
        do {
            try await body(fixture)
        } catch {
            fixture.tearDown()
            throw error
        }
        fixture.tearDown()
    }
}

/// A reply read whole.
struct Reply: Sendable {
    var status: Int
    /// Header values by lowercased name.
    var headers: [String: String]
    var body: [UInt8]

    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var items: [[String: Any]] { object["Items"] as? [[String: Any]] ?? [] }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A plain HTTP client of `serve` (URLSession, no cache, no cookies).
struct ServeHTTP: Sendable {
    let base: String
    let serverId: String
    static let clientHeader =
        #"MediaBrowser Client="mediasync tests", Device="test", DeviceId="device-1", Version="1.0""#

    func send(
        _ method: String, _ path: String, token: String? = nil, headers: [String: String] = [:], json: Any? = nil,
        deviceId: String = "device-1"
    ) async throws -> Reply {
        guard let url = URL(string: base + path) else { throw ServeError("bad URL \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        var authorization =
            #"MediaBrowser Client="mediasync tests", Device="test", DeviceId="\#(deviceId)", Version="1.0""#
        if let token { authorization += #", Token="\#(token)""# }
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let configuration = URLSessionConfiguration.ephemeral
        // A bound for a loaded machine (the whole suite runs at once on two cores), not a timing check.
        configuration.timeoutIntervalForRequest = 600
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw ServeError("not HTTP") }
        var lowered: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { lowered[name.lowercased()] = value }
        }
        return Reply(status: http.statusCode, headers: lowered, body: [UInt8](data))
    }

    func signIn(_ user: String = "demo", _ password: String = ServeFixture.password) async throws -> Reply {
        try await send("POST", "/Users/AuthenticateByName", json: ["Username": user, "Pw": password])
    }
}
