import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh temporary folder, removed when the value is discarded via `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Runs `body` with a fresh temporary folder, removed after it whatever it does.
    public static func with<Result>(_ body: (TemporaryDirectory) async throws -> Result) async throws -> Result {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        return try await body(folder)
    }

    /// Every regular file below the folder, as paths relative to it, sorted.
    public func allFiles() -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(relative)
            }
        }
        return files.sorted()
    }
}

/// A small tmpfs mounted for a test; nil where this machine does not allow mounting.
public struct SmallTmpfs: Sendable {
    public let path: String

    public static var canMount: Bool {
        guard getuid() == 0, let probe = SmallTmpfs(bytes: 64 * 1024) else { return false }
        probe.unmount()
        return true
    }

    public init?(bytes: Int) {
        guard let directory = try? TemporaryDirectory() else { return nil }
        let mount = try? Spawned("/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path])
        guard mount?.finish().status == 0 else {
            directory.remove()
            return nil
        }
        path = directory.path
    }

    public func unmount() {
        _ = try? Spawned("/bin/umount", [path]).finish()
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Waits for a download to get under way: its partial file in the staging folder.
public enum PartialFileWatch {
    /// Polls `staging` every 10 ms, for two minutes at the most, until a `.part` file there holds at least `bytes`
    /// bytes; returns the size of the largest `.part` file at the last look (0 when there was none).
    ///
    /// Polled on a thread of its own: a loaded run can keep the cooperative threads (and Dispatch's pool, held by other
    /// tests' blocking loops) from running the poll for a long time.
    public static func size(in staging: String, reaching bytes: Int) async -> Int {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var size = 0
                for _ in 0..<12_000 where size < bytes {
                    usleep(10_000)
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
                    size =
                        names.filter { $0.hasSuffix(".part") }.compactMap {
                            (try? FileManager.default.attributesOfItem(atPath: staging + "/" + $0)[.size] as? Int)
                                ?? nil
                        }.max() ?? 0
                }
                continuation.resume(returning: size)
            }
        }
    }
}

/// What a test reads back from a tree it made.
public enum TreeReading {
    /// Every regular file below `folder`, as `prefix` + its path relative to `folder`, sorted; paths for which `skip`
    /// holds are left out.
    public static func files(under folder: String, prefix: String = "", skip: (String) -> Bool = { _ in false })
        -> [String]
    {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var found: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard !skip(relative),
                FileManager.default.fileExists(atPath: folder + "/" + relative, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            found.append(prefix + relative)
        }
        return found.sorted()
    }

    /// A file's bytes, or nil.
    public static func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    /// A JSON object file, or nil.
    public static func json(_ path: String) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}

/// The transfer engine's staging names, computed apart from it with Foundation's path and character-set methods (the
/// names it made before it worked by bytes): what tests plant at, and what its own naming is checked against.
public enum StagingNames {
    /// Where the engine keeps the partial file of `destination` in the staging folder `staging`.
    public static func partPath(staging: String, destination: String) -> String {
        let name = (destination as NSString).lastPathComponent
        let safe = String(
            name.unicodeScalars.prefix(40).map { scalar -> Character in
                let ok =
                    scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                return ok ? Character(scalar) : "_"
            })
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in destination.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return (staging as NSString).appendingPathComponent("\(String(hash, radix: 16))-\(safe).part")
    }
}

/// What `JSONEncoder` writes for a value with the options of mediasync's metadata files and `--json` outputs
/// (pretty-printed, sorted keys, slashes unescaped): the oracle the hand-written JSON writers are held to.
public enum JSONEncoderOracle {
    public static func prettyBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try encoder.encode(value))
    }

    /// The metadata files' form: compact, sorted keys, slashes unescaped.
    public static func sortedCompactBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try encoder.encode(value))
    }
}

/// Media files real players play, made without any program.
public enum TestMedia {
    /// A WAV file: `seconds` of silence, 8 kHz mono 8-bit.
    public static func silence(seconds: Int) -> [UInt8] {
        let samples = 8000 * seconds
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        var bytes = Array("RIFF".utf8) + le32(36 + samples) + Array("WAVEfmt ".utf8)
        bytes += le32(16) + le16(1) + le16(1) + le32(8000) + le32(8000) + le16(1) + le16(8)
        bytes += Array("data".utf8) + le32(samples) + [UInt8](repeating: 0x80, count: samples)
        return bytes
    }
}
