import Foundation
import MediaSyncHTTP
import MediaSyncTestServer

#if canImport(Glibc)
import Glibc
#endif

/// A fresh temporary folder, removed when the value is discarded via `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Every regular file below the folder, as paths relative to it, sorted.
    func allFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(relative)
            }
        }
        return files.sorted()
    }
}

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

/// A small tmpfs mounted for a test; nil where this machine does not allow mounting.
struct SmallTmpfs {
    let path: String

    static var canMount: Bool {
        guard getuid() == 0, let probe = SmallTmpfs(bytes: 64 * 1024) else { return false }
        probe.unmount()
        return true
    }

    init?(bytes: Int) {
        guard let directory = try? TemporaryDirectory() else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/mount")
        process.arguments = ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            directory.remove()
            return nil
        }
        path = directory.path
    }

    func unmount() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/umount")
        process.arguments = [path]
        try? process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: path)
    }
}
