import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Partial files and their resume records, kept apart from final paths until a file is complete.
///
/// A partial file for destination `D` is `<staging>/<hash(D)>-<name>.part`; beside it,
/// `….part.meta` records the URL and the validator (`ETag` or `Last-Modified`) its bytes came with,
/// so a later attempt or run can resume with `Range` + `If-Range`, and never splices bytes of two versions.
struct StagingArea: Sendable {
    /// The resume record of a partial file.
    struct Record: Codable, Equatable, Sendable {
        var url: String
        var validator: String
        /// The complete length of the version the bytes belong to (absent in records of older versions).
        var total: Int64?
    }

    /// A partial file that may be continued: its size, and the version its bytes belong to.
    struct Resume: Equatable, Sendable {
        var size: Int64
        var validator: String
        var total: Int64?
    }

    let directory: String

    func partPath(for destination: String) -> String {
        // The last path component's first 40 characters, ASCII letters, digits and `._-` kept, the rest `_` (by
        // bytes and scalars: CharacterSet and NSString's path methods were most of the cost of each placed file).
        var safe = ""
        for scalar in PathText.name(of: destination).unicodeScalars.prefix(40) {
            let ok =
                scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "." || scalar == "_" || scalar == "-")
            safe.unicodeScalars.append(ok ? scalar : "_")
        }
        let hash = String(StagingArea.fnv1a64(destination), radix: 16)
        return (directory.hasSuffix("/") ? directory : directory + "/") + "\(hash)-\(safe).part"
    }

    func recordPath(for destination: String) -> String {
        partPath(for: destination) + ".meta"
    }

    /// The bytes a partial file of `destination` may resume from, with its validator; nil when there is
    /// nothing usable (in which case any stale partial file is removed).
    func resumable(for destination: String, url: String) -> Resume? {
        let part = partPath(for: destination)
        let meta = recordPath(for: destination)
        var info = stat()
        // Most transfers have no partial file: one lstat answers that, with nothing to clean up.
        guard lstat(part, &info) == 0 else { return nil }
        // Only a regular file of ours is resumed: a symbolic link planted in its place would have the download
        // written wherever it points (it is removed, never followed).
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0,
            let bytes = FileBytes.read(meta, limit: 1 << 20, followLinks: false),
            let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)),
            record.url == url, !record.validator.isEmpty
        else {
            discard(destination)
            return nil
        }
        return Resume(size: Int64(info.st_size), validator: record.validator, total: record.total)
    }

    /// Writes a resume record: a temporary file renamed over the record, so a reader sees a whole record or the
    /// previous one. Not flushed: a record is advice, and one lost or cut by a power failure only means the partial
    /// file is fetched again (an unreadable record is discarded with its file). An fsync here cost every file past
    /// the resume threshold a synchronous disk write (400 segments of a transcode: 400 fsyncs).
    func writeRecord(_ record: Record, for destination: String) throws(HTTPError) {
        let path = recordPath(for: destination)
        let bytes: [UInt8]
        do {
            bytes = Array(try JSONEncoder().encode(record))
        } catch {
            throw HTTPError(.fileSystem, "could not write the resume record \(path): \(error.localizedDescription)")
        }
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw HTTPError.fromErrno(errno, operation: "write the resume record", path: path) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let failure = written == bytes.count ? 0 : (written < 0 ? errno : ENOSPC)
        close(fd)
        guard failure == 0, rename(temporary, path) == 0 else {
            let number = failure != 0 ? failure : errno
            unlink(temporary)
            throw HTTPError.fromErrno(number, operation: "write the resume record", path: path)
        }
    }

    func removeRecord(for destination: String) {
        unlink(recordPath(for: destination))
    }

    /// Removes a partial file that a later attempt could not resume (it has no usable record).
    func discardIfNotResumable(_ destination: String, url: String) {
        _ = resumable(for: destination, url: url)
    }

    /// Removes the partial file and its record.
    func discard(_ destination: String) {
        unlink(partPath(for: destination))
        unlink(recordPath(for: destination))
    }

    /// Removes the staging folder if nothing is left in it.
    func removeIfEmpty() {
        rmdir(directory)
    }

    // MARK: File-system helpers

    /// Creates a folder and its missing parents (an existing folder, or a link to one, is fine): one `mkdir` when the
    /// parent is there, the common case, where FileManager looked at every component first.
    static func makeDirectories(_ path: String) throws(HTTPError) {
        if mkdir(path, 0o777) == 0 { return }
        var number = errno
        let parent = PathText.parent(of: path)
        if number == ENOENT && !parent.isEmpty && parent != "/" {
            try makeDirectories(parent)
            if mkdir(path, 0o777) == 0 { return }
            number = errno
        }
        var info = stat()
        if number == EEXIST && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { return }
        throw HTTPError.fromErrno(number == EEXIST ? ENOTDIR : number, operation: "create the folder", path: path)
    }

    static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
