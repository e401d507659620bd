import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Watches everything of a test's temporary tree that is not the mirror's root, to prove a sync wrote and deleted
/// nothing outside the root. Two independent witnesses:
/// - a snapshot (path, type, inode, size, mtime, link target) of the tree outside the root, before and after;
/// - inotify on every folder outside the root (creations, writes, deletions, moves, attribute changes), and on
///   the folders a hostile path would reach outside the tree (`$TMPDIR` and `/tmp`, which other processes also
///   write to: there only names carrying the test's marker count).
final class OutsideWatcher {
    struct Entry: Equatable, CustomStringConvertible {
        var type: UInt32
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int
        var target: String?

        var description: String {
            "type \(String(type, radix: 8)), inode \(inode), \(size) B, mtime \(modified).\(modifiedNanoseconds)"
                + (target.map { " → \($0)" } ?? "")
        }
    }

    let tree: String
    let root: String
    let marker: String
    private let before: [String: Entry]
    private var fd: Int32 = -1
    private var watches: [Int32: (path: String, strict: Bool)] = [:]

    /// - Parameters:
    ///   - tree: the test's temporary folder; `root` lies inside it.
    ///   - marker: a string every hostile name carries; events elsewhere count only when a name holds it.
    init(tree: String, root: String, marker: String) {
        self.tree = tree
        self.root = root
        self.marker = marker
        before = OutsideWatcher.snapshot(tree: tree, excluding: root)
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return }
        for folder in OutsideWatcher.folders(tree: tree, excluding: root) { watch(folder, strict: true) }
        var loose = ["/tmp"]
        if let temporary = ProcessInfo.processInfo.environment["TMPDIR"], !temporary.isEmpty { loose.append(temporary) }
        for folder in Set(loose.map { URL(fileURLWithPath: $0).standardizedFileURL.path }) where folder != tree {
            watch(folder, strict: false)
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Whether inotify could be set up (else only the snapshot witnesses).
    var usesInotify: Bool { fd >= 0 }

    private func watch(_ folder: String, strict: Bool) {
        let mask =
            UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_MODIFY) | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO)
            | UInt32(IN_ATTRIB) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
            | UInt32(IN_DONT_FOLLOW) | UInt32(IN_ONLYDIR)
        let descriptor = inotify_add_watch(fd, folder, mask)
        if descriptor >= 0 { watches[descriptor] = (folder, strict) }
    }

    /// Everything that happened outside the root since the watcher was made, one line each (empty: nothing).
    func changes() -> [String] {
        var found: [String] = []
        let after = OutsideWatcher.snapshot(tree: tree, excluding: root)
        for path in Set(before.keys).union(after.keys).sorted() where before[path] != after[path] {
            switch (before[path], after[path]) {
            case (nil, let new?): found.append("created \(path) (\(new))")
            case (let old?, nil): found.append("deleted \(path) (\(old))")
            case (let old?, let new?): found.append("changed \(path): \(old) → \(new)")
            default: break
            }
        }
        found += events()
        return found
    }

    /// Drains the inotify queue.
    private func events() -> [String] {
        guard fd >= 0 else { return [] }
        var found: [String] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let (descriptor, mask, length) = buffer.withUnsafeBytes { raw -> (Int32, UInt32, Int) in
                    (
                        raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset += 16 + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    found.append("inotify queue overflowed: events were lost")
                    continue
                }
                guard let watched = watches[descriptor] else { continue }
                if mask & UInt32(IN_IGNORED) != 0 { continue }
                let path = name.isEmpty ? watched.path : watched.path + "/" + name
                // The root's own entry in the tree's folder changes as the sync writes inside it.
                if path == root { continue }
                if watched.strict || name.contains(marker) {
                    found.append("inotify: \(OutsideWatcher.describe(mask)) \(path)")
                }
            }
        }
        return found
    }

    static func describe(_ mask: UInt32) -> String {
        let names: [(Int32, String)] = [
            (IN_CREATE, "create"), (IN_DELETE, "delete"), (IN_MODIFY, "modify"), (IN_MOVED_FROM, "moved-from"),
            (IN_MOVED_TO, "moved-to"), (IN_ATTRIB, "attrib"), (IN_CLOSE_WRITE, "close-write"),
            (IN_DELETE_SELF, "delete-self"), (IN_MOVE_SELF, "move-self"),
        ]
        return names.filter { mask & UInt32($0.0) != 0 }.map(\.1).joined(separator: ",")
    }

    /// Every path under `tree` except `excluding` and what is below it; symlinks are recorded, not followed.
    static func snapshot(tree: String, excluding: String) -> [String: Entry] {
        var entries: [String: Entry] = [:]
        var pending = [tree]
        while let folder = pending.popLast() {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names {
                let path = folder + "/" + name
                guard path != excluding else { continue }
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                let type = info.st_mode & S_IFMT
                let target = type == S_IFLNK ? try? FileManager.default.destinationOfSymbolicLink(atPath: path) : nil
                entries[path] = Entry(
                    type: type, inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: info.st_mtim.tv_sec,
                    modifiedNanoseconds: info.st_mtim.tv_nsec, target: target)
                if type == S_IFDIR { pending.append(path) }
            }
        }
        return entries
    }

    static func folders(tree: String, excluding: String) -> [String] {
        [tree] + snapshot(tree: tree, excluding: excluding).filter { $0.value.type == S_IFDIR }.keys.sorted()
    }
}
