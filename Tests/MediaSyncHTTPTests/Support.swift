import Foundation
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Deterministic pseudo-random bytes.
func testBytes(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
    var state = seed &+ 0x9E37_79B9_7F4A_7C15
    var bytes = [UInt8](repeating: 0, count: count)
    var index = 0
    while index < count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var word = state
        for _ in 0..<8 where index < count {
            bytes[index] = UInt8(truncatingIfNeeded: word >> 33)
            word = word &* 31 &+ 17
            index += 1
        }
    }
    return bytes
}

func readBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// Runs `body` with a fresh test server and temporary folder; the folder is removed and the server shut down after it,
/// whatever it does.
func withServerAndFolder(_ body: (TestServer, TemporaryDirectory) async throws -> Void) async throws {
    let server = try TestServer()
    defer { server.shutdown() }
    try await TemporaryDirectory.with { folder in try await body(server, folder) }
}

/// Quick retries so that the tests do not wait for real backoff.
let quickRetries = RetryPolicy(maxAttempts: 4, baseDelay: 0.05, maxDelay: 0.2, maxRetryAfter: 5, jitter: 0)

func makeEngine(
    concurrency: Int = 4, perHostLimit: Int? = nil, durable: Bool = true, retry: RetryPolicy = quickRetries,
    staging: String? = nil, configuration: HTTPClientConfiguration = HTTPClientConfiguration(), bandwidth: Int? = nil
) -> TransferEngine {
    TransferEngine(
        client: HTTPClient(configuration: configuration, retryPolicy: retry),
        options: TransferOptions(
            concurrency: concurrency, perHostLimit: perHostLimit, durable: durable, retryPolicy: retry,
            bandwidthLimit: bandwidth, stagingDirectory: staging, progressInterval: 0.02))
}

/// Collects progress reports from the engine's callback.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [BatchProgress] = []

    func append(_ progress: BatchProgress) {
        lock.lock()
        entries.append(progress)
        lock.unlock()
    }

    var all: [BatchProgress] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }
}
