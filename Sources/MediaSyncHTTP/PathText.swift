#if canImport(Glibc)
    import Glibc
#endif

/// Path text handled by bytes: NSString's path methods cost more than the file system calls of placing a small file.
public enum PathText {
    /// The folder part of a path (`/a/b` → `/a`, `/a/b/` → `/a`, `/a` → `/`, `a` → ``), as NSString's
    /// `deletingLastPathComponent` gives it for paths made by joining names with `/`.
    public static func parent(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return slash == trimmed.utf8.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// The last component of a path (`/a/b` → `b`, `/a/b/` → `b`), as NSString's `lastPathComponent` gives it for
    /// such paths.
    public static func name(of path: String) -> Substring {
        let trimmed = withoutTrailingSlashes(path)
        return trimmed.lastIndex(of: "/").map { trimmed[trimmed.index(after: $0)...] } ?? trimmed
    }

    private static func withoutTrailingSlashes(_ path: String) -> Substring {
        var trimmed = Substring(path)
        while trimmed.utf8.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed
    }
}

/// What a folder holds, looked at once.
public enum Folders {
    /// Whether `path` is a folder with nothing in it (false when it cannot be read).
    public static func isEmpty(_ path: String) -> Bool {
        guard let folder = opendir(path) else { return false }
        defer { closedir(folder) }
        errno = 0
        while let entry = readdir(folder) {
            let name = entryName(entry)
            if name != "." && name != ".." { return false }
        }
        return errno == 0
    }

    /// The name of an entry `readdir` returned, read up to its terminating zero and no further. (Copying
    /// `entry.pointee.d_name` reads all 256 bytes of the declared array, but a record is only as long as its name:
    /// at the end of `readdir`'s buffer that read ran past the mapped memory and crashed.)
    public static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        guard let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { return "" }
        return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
    }
}

/// Bytes as lowercase hexadecimal text, two digits a byte (digests, ids).
public enum HexText {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
