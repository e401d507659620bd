import Foundation
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The file-system facts and primitives the export needs: identities, the destination's type, and placing one
/// file by hardlink, reflink or copy under a temporary name.
public enum ExportFileSystem {
    /// A source file's size and identity (size, modification time in ns, device and inode), or nil when it is not a
    /// regular file.
    @Sendable public static func identity(_ path: String) -> (size: Int64, identity: String)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return identity(of: info)
    }

    /// A regular file's size and identity from its status; nil for anything else.
    static func identity(of info: stat) -> (size: Int64, identity: String)? {
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return (Int64(info.st_size), "\(info.st_size):\(nanoseconds):\(info.st_dev):\(info.st_ino)")
    }

    /// The device of the folder at `path`, symbolic links followed; nil when there is none.
    static func device(of path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return UInt64(info.st_dev)
    }

    /// What is at a destination path (symbolic links are not followed).
    public static func fact(_ path: String) -> DestinationFact {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        return (info.st_mode & S_IFMT) == S_IFREG ? .file(size: Int64(info.st_size)) : .other
    }

    // MARK: File system type

    /// The type of the file system holding `path` (`ext4`, `vfat`, `exfat`, `tmpfs`…), from `/proc/self/mountinfo`.
    /// (Swift's Glibc module does not export `statfs`; the mount table names the same driver `statfs`'s `f_type`
    /// would, 0x4d44 being `vfat`/`msdos`.)
    public static func type(of path: String) -> String? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        return mountType(of: resolved, mountinfo: table)
    }

    /// The file system type of the longest mount point containing `path`, in `mountinfo` text. Pure.
    public static func mountType(of path: String, mountinfo: String) -> String? {
        var best: (length: Int, type: String)?
        for line in mountinfo.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 6, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { continue }
            let mountPoint = unescape(String(fields[4]))
            let contains = mountPoint == "/" || path == mountPoint || path.hasPrefix(mountPoint + "/")
            if contains, mountPoint.count >= (best?.length ?? -1) {
                best = (mountPoint.count, String(fields[dash + 1]))
            }
        }
        return best?.type
    }

    /// `\040` and the other octal escapes of mountinfo.
    private static func unescape(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4,
                let value = UInt8(String(decoding: utf8.dropFirst().prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The largest file the file system type holds, nil for no practical limit.
    public static func maximumFileSize(type: String?) -> Int64? {
        switch type {
        case "vfat", "msdos", "fat", "umsdos": return ExportPlanner.fat32Limit
        default: return nil
        }
    }

    // MARK: Placing files

    /// How a file got its bytes.
    public enum Method: String, Codable, Sendable {
        case hardlink, reflink, copy, write
    }

    /// An errno from a file operation, with what was being done.
    public struct Failure: Error, Sendable {
        public var number: Int32
        public var what: String
        /// Whether the destination failed (not the mirror's file).
        public var atDestination = true

        public init(number: Int32, what: String, atDestination: Bool = true) {
            self.number = number
            self.what = what
            self.atDestination = atDestination
        }

        /// A failure of the destination as a whole (full, read-only, gone): the run stops.
        public var stopsTheRun: Bool {
            atDestination
                && [ENOSPC, EDQUOT, EROFS, EIO, ENODEV, ENXIO, ESTALE, ENOTCONN, EACCES, EPERM].contains(number)
        }

        /// The destination is full.
        public var isDiskFull: Bool { number == ENOSPC || number == EDQUOT }

        /// How a destination going away makes a write fail.
        static let goneNumbers: Set<Int32> = [ENOENT, ENODEV, EIO, ESTALE, ENOTDIR, ENXIO]

        /// The destination folder itself is no longer there.
        public static func gone(_ destination: String) -> Failure {
            Failure(number: ENODEV, what: "the destination \(destination) is gone (was its disk removed or unmounted?)")
        }

        public var message: String { "\(what): \(String(cString: strerror(number)))" }
    }

    /// Creates `folder` and its parents (an existing folder is fine).
    /// With `root`, only folders below it are made: a root that is gone (a disk pulled out, its mount point
    /// removed) is a failure that stops the run, never made again on whatever file system is left there.
    public static func makeFolders(_ folder: String, below root: String? = nil) throws(Failure) {
        // Made first and looked at only when that fails: an export makes thousands of new folders.
        let isRoot = root.map { folder == $0 || !folder.hasPrefix($0 + "/") } ?? false
        if !isRoot && mkdir(folder, 0o755) == 0 { return }
        let number = isRoot ? ENOENT : errno
        var info = stat()
        if stat(folder, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw Failure(number: ENOTDIR, what: "cannot make the folder \(folder)")
        }
        if let root, isRoot { throw Failure.gone(root) }
        guard number == ENOENT else { throw Failure(number: number, what: "cannot make the folder \(folder)") }
        let parent = PathText.parent(of: folder)
        if parent != folder && !parent.isEmpty { try makeFolders(parent, below: root) }
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw Failure(number: errno, what: "cannot make the folder \(folder)")
        }
    }

    /// `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`; Swift's Glibc module does not export it).
    static let unnamedFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY

    /// Places a mirror file at the new name `name` in the open folder `folder` in one step, so that the name only
    /// ever shows a whole file: a hardlink (`allowLink`, same file system), else an unnamed `O_TMPFILE` in the folder
    /// that gets its bytes by reflink or copy and then its name with `linkat`. The source is `source`, relative to the
    /// open folder `sourceBase` (the mirror's root): neither path is walked from `/` again for each file.
    /// `beforeNaming` runs just before the name is made (to journal it; nil when it was journaled before). Returns nil
    /// when the file system has no `O_TMPFILE` (FAT32): the caller uses a named temporary file. Throws with `EEXIST`
    /// when a file appeared at the name meanwhile (it is left as it is); `final` names it in messages.
    public static func placeNew(
        source: String, in sourceBase: Int32, name: String, folder: Int32, final: String, allowLink: Bool,
        beforeNaming: (() throws(Failure) -> Void)?, progress: (Int64) -> Void
    ) throws(Failure) -> Method? {
        if allowLink {
            var sourceInfo = stat()
            var folderInfo = stat()
            if fstatat(sourceBase, source, &sourceInfo, 0) == 0, fstat(folder, &folderInfo) == 0,
                sourceInfo.st_dev == folderInfo.st_dev
            {
                try beforeNaming?()
                if linkat(sourceBase, source, folder, name, 0) == 0 { return .hardlink }
                if errno == EEXIST { throw Failure(number: EEXIST, what: "\(final) appeared meanwhile") }
            }
        }
        let output = openat(folder, ".", unnamedFileFlag | O_WRONLY | O_CLOEXEC, 0o644)
        guard output >= 0 else {
            if [EOPNOTSUPP, EISDIR, EINVAL, ENOTSUP].contains(errno) { return nil }
            throw Failure(number: errno, what: "cannot write in \(PathText.parent(of: final))")
        }
        defer { close(output) }
        let method = try withSource(source, in: sourceBase) { (input, info) throws(Failure) -> Method in
            try fill(output, from: input, info: info, name: final, allowLink: allowLink, progress: progress)
        }
        try beforeNaming?()
        guard linkat(AT_FDCWD, "/proc/self/fd/\(output)", folder, name, AT_SYMLINK_FOLLOW) == 0 else {
            if errno == EEXIST { throw Failure(number: EEXIST, what: "\(final) appeared meanwhile") }
            throw Failure(number: errno, what: "cannot name \(final)")
        }
        return method
    }

    /// Opens `source` (relative to the open folder `base`, or absolute) for reading and runs `body` with its
    /// descriptor and status; closes it afterwards.
    private static func withSource<Result>(
        _ source: String, in base: Int32 = AT_FDCWD, _ body: (_ input: Int32, _ info: stat) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let input = openat(base, source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw Failure(number: errno, what: "cannot read \(source)", atDestination: false) }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else {
            throw Failure(number: errno, what: "cannot read \(source)", atDestination: false)
        }
        return try body(input, info)
    }

    /// Reflinks or copies the open source `input` (whose status is `info`) into the open file `output`, keeping
    /// the source's times.
    private static func fill(
        _ output: Int32, from input: Int32, info: stat, name: String, allowLink: Bool, progress: (Int64) -> Void
    )
        throws(Failure) -> Method
    {
        var method = Method.copy
        if allowLink && ioctl(output, UInt(0x4004_9409), CInt(input)) == 0 {  // FICLONE
            method = .reflink
            progress(Int64(info.st_size))
        } else {
            try copyBytes(from: input, to: output, size: Int64(info.st_size), name: name, progress: progress)
        }
        var times = [info.st_atim, info.st_mtim]
        _ = futimens(output, &times)
        return method
    }

    /// Links (`allowLink`), reflinks or copies `source` to the new file `temporary`, keeping the source's
    /// modification time; `progress` gets the bytes copied so far. On failure the temporary file is removed.
    public static func place(
        source: String, temporary: String, allowLink: Bool, progress: (Int64) -> Void
    ) throws(Failure) -> Method {
        if allowLink && link(source, temporary) == 0 { return .hardlink }
        return try withSource(source) { (input, info) throws(Failure) -> Method in
            let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard output >= 0 else { throw Failure(number: errno, what: "cannot write \(temporary)") }
            do throws(Failure) {
                let method = try fill(
                    output, from: input, info: info, name: temporary, allowLink: allowLink, progress: progress)
                guard close(output) == 0 else { throw Failure(number: errno, what: "cannot write \(temporary)") }
                return method
            } catch {
                close(output)
                unlink(temporary)
                throw error
            }
        }
    }

    private static func copyBytes(
        from input: Int32, to output: Int32, size: Int64, name: String, progress: (Int64) -> Void
    )
        throws(Failure)
    {
        var done: Int64 = 0
        var useSendfile = true
        let chunk = 8 * 1024 * 1024
        var buffer: [UInt8] = []
        while true {
            if done == size { break }  // saves the call that would return 0
            if useSendfile {
                let sent = sendfile(output, input, nil, chunk)
                if sent > 0 {
                    done += Int64(sent)
                    progress(done)
                    continue
                }
                if sent == 0 { break }
                if errno == EINTR { continue }
                if (errno == EINVAL || errno == ENOSYS) && done == 0 {
                    useSendfile = false
                    continue
                }
                throw Failure(number: errno, what: "cannot write \(name)")
            }
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 1024 * 1024) }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(number: errno, what: "cannot read the source of \(name)", atDestination: false)
            }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes {
                    Glibc.write(output, $0.baseAddress.map { $0 + offset }, count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(number: errno, what: "cannot write \(name)")
                }
                offset += written
            }
            done += Int64(count)
            progress(done)
        }
        if done != size {
            throw Failure(
                number: EIO, what: "\(name): the source changed size while it was copied", atDestination: false)
        }
    }

    /// Writes `bytes` to the new file `temporary`.
    public static func write(_ bytes: [UInt8], to temporary: String) throws(Failure) {
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw Failure(number: errno, what: "cannot write \(temporary)") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.write(output, $0.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                let number = errno
                close(output)
                unlink(temporary)
                throw Failure(number: number, what: "cannot write \(temporary)")
            }
            offset += written
        }
        guard close(output) == 0 else {
            let number = errno
            unlink(temporary)
            throw Failure(number: number, what: "cannot write \(temporary)")
        }
    }

    /// Flushes a file or folder to the disk (errors ignored: a file system without fsync on folders).
    public static func flush(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
