import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// Read-only questions about what the mirror holds: where an item's media is, how much room things take.
public struct StorageQueries: Sendable {
    /// Makes the one change a query can make (`verify --fix` forgetting broken files).
    let executor: MirrorExecutor
    var root: MirrorRoot { executor.root }
    var index: MirrorIndex { executor.index }

    init(executor: MirrorExecutor) {
        self.executor = executor
    }

    /// The absolute path of a downloaded item's media (its stored relative path resolved under the current root,
    /// wherever the root has moved).
    ///
    /// `id` is a Jellyfin item id or a podcast episode id; without `version`, the primary version (the one
    /// whose id is the item's) wins, else the first. The file must exist with its recorded size.
    /// - Throws: ``SyncError`` of kind `notFound` when nothing usable is downloaded.
    public func mediaPath(id: String, version: String? = nil) throws -> String {
        let candidates = try index.entries().filter { entry in
            entry.file.kind == .media && (entry.file.itemId == id || entry.versionId == id)
                && (version == nil || entry.versionId == version)
        }
        let ordered = candidates.sorted { left, right in
            let leftPrimary = left.versionId == left.file.itemId
            let rightPrimary = right.versionId == right.file.itemId
            return leftPrimary != rightPrimary ? leftPrimary : left.file.path < right.file.path
        }
        let placer = FilePlacer(root: root, durable: false)
        for entry in ordered {
            guard let path = root.absolute(entry.file.path),
                placer.sizes(of: [entry.file.path])[entry.file.path] == entry.file.size
            else { continue }
            return path
        }
        let what = version.map { "version \($0) of \(id)" } ?? id
        throw SyncError.notFound(
            candidates.isEmpty
                ? "\(what) is not downloaded (see `mediasync selections`, then `mediasync sync`)"
                : "\(what) is in the index but its file is missing or damaged: run `mediasync sync` to fetch it again")
    }

    /// Space used per movie, series and podcast.
    public struct Usage: Codable, Sendable, Equatable {
        public struct Entry: Codable, Sendable, Equatable {
            public var id: String
            /// `Movie`, `Series`, `MusicAlbum`, `Playlist`, `BoxSet` (as its `metadata.json` says) or `Podcast`.
            public var type: String
            public var title: String
            public var files: Int
            public var bytes: Int64
        }

        public var entries: [Entry]
        public var totalBytes: Int64
        /// Free space on the root's file system.
        public var freeBytes: Int64
        /// Set when less than 500 MB is free (``lowSpaceThreshold``).
        public var warning: String?
    }

    /// The threshold under which ``usage()`` warns.
    public static let lowSpaceThreshold: Int64 = 500_000_000

    public func usage() throws -> Usage {
        var groups: [String: (files: Int, bytes: Int64, podcast: Bool)] = [:]
        for entry in try index.entries() {
            let parts = entry.file.path.split(separator: "/")
            guard parts.count >= 2 else { continue }
            let id = String(parts[1])
            var group = groups[id] ?? (0, 0, false)
            group.files += 1
            group.bytes += entry.file.size
            group.podcast = group.podcast || entry.file.key.isPodcast
            groups[id] = group
        }
        let entries = groups.keys.sorted().compactMap { id -> Usage.Entry? in
            guard let group = groups[id] else { return nil }
            let metadata = root.absolute("\(LibraryLayout.downloads)/\(id)/\(LibraryLayout.metadataFile)")
                .flatMap { FileManager.default.contents(atPath: $0) }
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            let title = (metadata?["displayTitle"] ?? metadata?["podcastTitle"]) as? String ?? id
            let type = group.podcast ? "Podcast" : (metadata?["itemType"] as? String ?? "Item")
            return Usage.Entry(id: id, type: type, title: title, files: group.files, bytes: group.bytes)
        }
        var info = statvfs()
        let free = statvfs(root.path, &info) == 0 ? Int64(info.f_bavail) * Int64(info.f_frsize) : 0
        return Usage(
            entries: entries, totalBytes: entries.reduce(0) { $0 + $1.bytes }, freeBytes: free,
            warning: free < StorageQueries.lowSpaceThreshold
                ? "only \(ByteCount.format(free)) free on \(root.path) (less than 500 MB)" : nil)
    }

    /// A file the index records that is missing or not of its recorded size.
    public struct Problem: Codable, Sendable, Equatable {
        public var path: String
        /// `missing` or `damaged`.
        public var problem: String
        public var expectedBytes: Int64
        public var actualBytes: Int64?
    }

    /// Checks every indexed file; with `fix`, forgets the broken ones so the next sync fetches them again.
    ///
    /// - Parameter deep: also read every file whose content hash was recorded at placement and compare (a file of
    ///   the right size with other bytes is `damaged`). Files placed before hashes were recorded are counted in
    ///   ``DeepCheck/unhashed`` of ``verifyDeep(fix:)``.
    public func verify(fix: Bool, deep: Bool = false) throws -> [Problem] {
        try verifyDeep(fix: fix, deep: deep).problems
    }

    /// What a verification found.
    public struct DeepCheck: Sendable {
        public var problems: [Problem]
        /// Files whose bytes were read and matched their recorded hash.
        public var hashed = 0
        /// Files of the right size with no recorded hash (placed by an older version): not read.
        public var unhashed = 0
        /// Bytes read.
        public var bytesRead: Int64 = 0
    }

    /// ``verify(fix:deep:)`` with the counts of a deep check.
    public func verifyDeep(fix: Bool, deep: Bool) throws -> DeepCheck {
        let entries = try index.entries()
        let sizes = executor.files.sizes(of: entries.map(\.file.path))
        var check = DeepCheck(problems: [])
        var broken: [FileKey] = []
        for entry in entries {
            let actual = sizes[entry.file.path]
            var problem: String?
            if actual != entry.file.size {
                problem = actual == nil ? "missing" : "damaged"
            } else if deep {
                if let recorded = entry.contentHash, let path = root.absolute(entry.file.path) {
                    let found = ContentHash.hex(ofFile: path)
                    check.bytesRead += entry.file.size
                    if found == recorded {
                        check.hashed += 1
                    } else {
                        problem = found == nil ? "unreadable" : "damaged"
                    }
                } else {
                    check.unhashed += 1
                }
            }
            guard let problem else { continue }
            check.problems.append(
                Problem(path: entry.file.path, problem: problem, expectedBytes: entry.file.size, actualBytes: actual))
            broken.append(entry.file.key)
        }
        if fix { try executor.forget(keys: broken) }
        return check
    }
}
