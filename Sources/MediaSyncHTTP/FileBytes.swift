#if canImport(Glibc)
    import Glibc
#endif

/// Whole small files read with `open`/`fstat`/`read`, as the engine reads everything else.
///
/// Used instead of Foundation's `FileManager.contents(atPath:)` for files read again and again in one process (the
/// placed-files journal, resume records): in this toolchain's Foundation every read of an empty file keeps the
/// 4 KiB buffer it read into (LeakSanitizer reports each; a process reading an empty journal 10,000 times grows by
/// 40 MB), and a long-running process (`serve`) must not grow with each read.
public enum FileBytes {
    /// The file's bytes; nil when it cannot be opened or read, is not a regular file, or is larger than `limit`.
    /// A symbolic link is followed unless `followLinks` is false (then it is refused).
    public static func read(_ path: String, limit: Int = 64 << 20, followLinks: Bool = true) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) <= limit else {
            return nil
        }
        // One byte more than the size fstat gives, so that the end is seen in the same read; a file that grew
        // meanwhile is read again into more room, up to one byte past the limit (which refuses it).
        var capacity = Int(info.st_size) + 1
        while true {
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                count = 0
                guard let base = buffer.baseAddress else { return }
                while count < capacity {
                    let got = Glibc.read(descriptor, base + count, capacity - count)
                    if got < 0 && errno == EINTR { continue }
                    if got < 0 { failed = true }
                    if got <= 0 { return }
                    count += got
                }
            }
            if failed { return nil }
            if bytes.count < capacity { return bytes }
            guard capacity <= limit, lseek(descriptor, 0, SEEK_SET) == 0 else { return nil }
            capacity = min(max(capacity * 2, 4096), limit + 1)
        }
    }
}
