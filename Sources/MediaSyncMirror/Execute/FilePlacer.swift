import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The file operations of the mirror's executor (``MirrorExecutor``): atomic writes, renames and removals under the
/// root. The root's real path is resolved once, and each folder is created and checked once per run.
struct FilePlacer: Sendable {
    let root: MirrorRoot
    let durable: Bool
    private let rootResolved: String
    /// Folders created (or found) and checked to lead nowhere out of the root.
    private let checkedFolders = Locked<Set<String>>([])
    /// Existing folders found to be inside the root by ``staysInside(_:)``.
    private let insideFolders = Locked<Set<String>>([])
    /// Parent folders of paths ``staysInside(_:)`` allowed.
    private let checkedParents = Locked<Set<String>>([])
    /// Names of ``write(_:to:)``'s temporary files: a random stem chosen once, and a count.
    private let temporaryStem = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    private let temporaryCount = Locked(0)

    init(root: MirrorRoot, durable: Bool) {
        self.root = root
        self.durable = durable
        self.rootResolved = URL(fileURLWithPath: root.path).resolvingSymlinksInPath().path
    }

    /// Writes `bytes` to a temporary file in the staging folder, flushes it, and renames it over `relative`.
    func write(_ bytes: [UInt8], to relative: String) throws {
        let target = try absolute(relative)
        try makeParent(of: target)
        if !checkedFolders.withLock({ $0.contains(root.stagingDirectory) }) {
            try FileManager.default.createDirectory(atPath: root.stagingDirectory, withIntermediateDirectories: true)
            checkedFolders.withLock { _ = $0.insert(root.stagingDirectory) }
        }
        // A new name each time (O_EXCL: never written through a file or link found at it). UUID() read
        // /dev/urandom for each of a first sync's thousands of metadata files.
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<8 {
            let count = temporaryCount.withLock { count in
                count += 1
                return count
            }
            temporary = root.stagingDirectory + "/write-\(temporaryStem)-\(count).tmp"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw SyncError.fileSystem("cannot create \(temporary)", errno) }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += count
            }
        }
        if failure == 0 && durable && fsync(fd) != 0 { failure = errno }
        close(fd)
        guard failure == 0 else {
            unlink(temporary)
            throw SyncError.fileSystem("cannot write \(relative)", failure)
        }
        guard rename(temporary, target) == 0 else {
            let number = errno
            unlink(temporary)
            throw SyncError.fileSystem("cannot place \(relative)", number)
        }
        try syncParent(of: target)
    }

    /// Makes the folders of the files at `relatives` (and the folders on their way), each once, parents first,
    /// and remembers them as checked, so placing and writing there looks at nothing again. A folder made here is
    /// a real folder in a folder known to be inside the root; one already there counts only when it is a real
    /// folder (not a symbolic link) in such a folder, else it is left to ``staysInside(_:)``'s check of each
    /// file. Returns the absolute paths of the folders made or found.
    func makeFolders(for relatives: [String]) -> Set<String> {
        var wanted = Set<String>()
        for relative in relatives {
            guard let path = root.absolute(relative) else { continue }
            var folder = PathText.parent(of: path)
            while folder.utf8.count > root.path.utf8.count, wanted.insert(folder).inserted {
                folder = PathText.parent(of: folder)
            }
        }
        var made = Set<String>()
        let known = checkedFolders.withLock { $0 }
        for folder in wanted.sorted(by: { $0.utf8.count < $1.utf8.count }) {
            if known.contains(folder) {
                made.insert(folder)
                continue
            }
            let parent = PathText.parent(of: folder)
            guard parent == root.path || made.contains(parent) else { continue }
            var info = stat()
            let isFolder =
                mkdir(folder, 0o777) == 0
                || (errno == EEXIST && lstat(folder, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR)
            if isFolder { made.insert(folder) }
        }
        checkedFolders.withLock { $0.formUnion(made) }
        insideFolders.withLock { $0.formUnion(made) }
        checkedParents.withLock { $0.formUnion(made) }
        return made
    }

    /// Names a download the transfer engine completed at `relative`, replacing what is there; the folder on its way
    /// must stay inside the root (checked once per folder).
    func placeDownload(_ completed: CompletedFile, at relative: String) throws -> String {
        guard staysInside(relative) else { throw SyncError.unsafePath(relative) }
        try completed.place(at: try absolute(relative))
        return relative
    }

    /// Renames a file under the root to another path under the root.
    func move(_ from: String, to relative: String) throws {
        let source = try absolute(from)
        // A folder on the way that is a symbolic link out of the root must not lead a file in from outside.
        guard parentStaysInside(source) else { throw SyncError.unsafePath(from) }
        let target = try absolute(relative)
        try makeParent(of: target)
        guard rename(source, target) == 0 else {
            throw SyncError.fileSystem("cannot move \(from) to \(relative)", errno)
        }
        try syncParent(of: target)
    }

    /// Removes a file under the root (never a folder, never a symlink's target) and then its empty parents up to
    /// `Downloads/`.
    func remove(_ relative: String) throws {
        let target = try absolute(relative)
        var info = stat()
        guard lstat(target, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw SyncError.fileSystem("refusing to delete the folder \(relative)", EISDIR)
        }
        // A folder on the way that is a symbolic link out of the root must not lead a deletion outside.
        guard parentStaysInside(target) else { throw SyncError.unsafePath(relative) }
        guard unlink(target) == 0 || errno == ENOENT else {
            throw SyncError.fileSystem("cannot delete \(relative)", errno)
        }
        var parent = (target as NSString).deletingLastPathComponent
        let stop = root.path + "/Downloads"
        while parent.hasPrefix(stop + "/"), rmdir(parent) == 0 {
            let removed = parent
            checkedFolders.withLock { _ = $0.remove(removed) }
            insideFolders.withLock { _ = $0.remove(removed) }
            checkedParents.withLock { _ = $0.remove(removed) }
            parent = (parent as NSString).deletingLastPathComponent
        }
    }

    /// Removes a file of mediasync's own state (`.mediasync/staging/…`), never a folder.
    func removeStateFile(_ relative: String) throws {
        let target = try absolute(relative)
        guard relative.hasPrefix(".mediasync/staging/") else { throw SyncError.unsafePath(relative) }
        guard unlink(target) == 0 || errno == ENOENT else {
            throw SyncError.fileSystem("cannot delete \(relative)", errno)
        }
    }

    /// Sizes of the regular files at these relative paths (missing or non-regular ones are left out), looked at
    /// folder by folder on every core.
    func sizes(of relatives: [String]) -> [String: Int64] {
        let found = FolderLookup.facts(of: relatives, under: root.path) { info in
            (info.st_mode & S_IFMT) == S_IFREG ? Int64(info.st_size) : nil
        }
        var sizes: [String: Int64] = [:]
        sizes.reserveCapacity(relatives.count)
        for (relative, size) in zip(relatives, found) {
            if let size { sizes[relative] = size }
        }
        return sizes
    }

    /// Whether writing `relative` stays inside the root: the nearest existing folder on its way must not be a
    /// symlink (or under one) that leads elsewhere.
    func staysInside(_ relative: String) -> Bool {
        guard let target = root.absolute(relative) else { return false }
        let parent = PathText.parent(of: target)
        // Asked once per folder in a run (the files of one item share a few folders).
        if checkedParents.withLock({ $0.contains(parent) }) { return true }
        var folder = parent
        var info = stat()
        while lstat(folder, &info) != 0, folder.count > root.path.count {
            folder = (folder as NSString).deletingLastPathComponent
        }
        let inside: Bool
        if insideFolders.withLock({ $0.contains(folder) }) {
            inside = true
        } else {
            let resolved = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
            inside = resolved == rootResolved || resolved.hasPrefix(rootResolved + "/")
        }
        if inside {
            insideFolders.withLock { _ = $0.insert(folder) }
            checkedParents.withLock { _ = $0.insert(parent) }
        }
        return inside
    }

    /// Whether the folder holding `path` (an absolute path under the root), symbolic links resolved, is in the root.
    private func parentStaysInside(_ path: String) -> Bool {
        let resolved = URL(fileURLWithPath: (path as NSString).deletingLastPathComponent).resolvingSymlinksInPath().path
        return resolved == rootResolved || resolved.hasPrefix(rootResolved + "/")
    }

    private func absolute(_ relative: String) throws -> String {
        guard let path = root.absolute(relative) else { throw SyncError.unsafePath(relative) }
        return path
    }

    private func makeParent(of path: String) throws {
        let parent = PathText.parent(of: path)
        if checkedFolders.withLock({ $0.contains(parent) }) { return }
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            throw SyncError.fileSystem("cannot create \(parent)", ENOTDIR)
        }
        // A symlink planted inside the mirror must not lead a write outside the root.
        let resolved = URL(fileURLWithPath: parent).resolvingSymlinksInPath().path
        guard resolved == rootResolved || resolved.hasPrefix(rootResolved + "/") else {
            throw SyncError.unsafePath(String(path.dropFirst(root.path.count + 1)))
        }
        checkedFolders.withLock { _ = $0.insert(parent) }
    }

    private func syncParent(of path: String) throws {
        guard durable else { return }
        let fd = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
