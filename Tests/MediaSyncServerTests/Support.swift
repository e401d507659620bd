import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncServer
import MediaSyncTestServer
import Testing

/// Recorded responses copied into `Fixtures/server/decode/` (from `../shared/jellyfin-api/`).
enum DecodeFixture {
    /// `Fixtures/server/decode`, found from this file's path (SwiftPM only bundles resources inside a target).
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/server/decode")

    /// The bytes of `group/name.json`.
    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(relativePath))
    }

    /// Decodes `group/name.json` as `type`.
    static func decode<T: Decodable>(_ type: T.Type, _ relativePath: String) throws -> T {
        try JSONDecoder().decode(type, from: data(relativePath))
    }

    /// The file as a generic JSON value.
    static func json(_ relativePath: String) throws -> JSONValue {
        try decode(JSONValue.self, relativePath)
    }

    /// Every `.json` file below the folder, as `group/name.json`, sorted.
    static func allFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if relative.hasSuffix(".json") { files.append(relative) }
        }
        return files.sorted()
    }
}

/// The identity every test client uses.
let testIdentity = ClientIdentity(device: "test box", deviceId: "3f2a9c1e-device")

/// A client for the test server, with no retries unless asked.
func makeClient(
    _ server: TestServer, token: String? = nil, userId: String? = nil, retryPolicy: RetryPolicy = .none,
    patience: ListingPatience = ListingPatience()
) throws -> JellyfinClient {
    try JellyfinClient(
        serverURL: server.baseURL, identity: testIdentity, accessToken: token, userId: userId,
        http: HTTPClient(retryPolicy: retryPolicy), patience: patience)
}

/// A client signed in as the test library's user.
func makeUserClient(
    _ server: TestServer, retryPolicy: RetryPolicy = .none, patience: ListingPatience = ListingPatience()
) throws -> JellyfinClient {
    let library = server.library
    return try makeClient(
        server, token: library.accessToken, userId: library.userId, retryPolicy: retryPolicy, patience: patience)
}

/// Runs `body` and returns the ``JellyfinError`` it throws (nil, and a recorded issue, when it throws none).
func jellyfinError<T>(_ body: () async throws -> T) async -> JellyfinError? {
    do {
        _ = try await body()
        return nil
    } catch let error as JellyfinError {
        return error
    } catch {
        Issue.record("expected a JellyfinError, got \(type(of: error)): \(error)")
        return nil
    }
}

/// A JSON body for an injected response.
func jsonBytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// Collects strings handed to a callback.
final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []

    func append(_ value: String) {
        lock.withLock { items.append(value) }
    }

    var values: [String] {
        lock.withLock { items }
    }
}
