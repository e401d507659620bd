import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The segments of an HLS VOD stream fetched through the transfer engine and joined in order as they arrive:
/// shared by a server transcode (``TranscodeDownloader``) and `mediasync get --hls` (``HLSDownload``).
///
/// Everything lives in a folder of its own in staging: a manifest of the stream, the joined file so far
/// (`joined.ts`) with a mark of how many segments and bytes it holds (`joined.mark`), and segments fetched ahead of
/// it. Each segment is appended and removed as soon as every earlier one is in: the joined file grows while the
/// fetch goes on, and a segment rarely lives long enough to be written to the disk on its own. A killed or failed
/// run resumes at the first segment not joined (the joined file cut back to its mark); a folder of another stream
/// is emptied first. Each segment must be MPEG-TS (sync byte 0x47): an HTML page or an error in its place is
/// refused and removed.
struct HLSFetch: Sendable {
    let client: HTTPClient
    let options: TransferOptions
    let headers: HTTPHeaders

    /// Segments fetched at once: ahead of an encoder by a few segments at most (Jellyfin restarts an encoding asked
    /// for a segment far ahead of it, `DynamicHlsController`).
    static let segmentsInFlight = 4

    /// The joined file and its size.
    struct Joined {
        var path: String
        var size: Int64
    }

    /// The join's state, shared with the engine's completion callback.
    private final class Join: @unchecked Sendable {
        let lock = NSLock()
        let fd: Int32
        let markPath: String
        let paths: [String]
        var next: Int
        var size: Int64
        var failure: SyncError?

        init(fd: Int32, markPath: String, paths: [String], next: Int, size: Int64) {
            self.fd = fd
            self.markPath = markPath
            self.paths = paths
            self.next = next
            self.size = size
        }

        /// Appends every segment that is there, in order from the first not joined; stops at the first missing.
        func advance() {
            lock.lock()
            defer { lock.unlock() }
            while failure == nil, next < paths.count, access(paths[next], F_OK) == 0 {
                let path = paths[next]
                do {
                    size += try HLSFetch.append(path, to: fd, at: size, index: next, count: paths.count)
                } catch let error as SyncError {
                    failure = error
                    return
                } catch {
                    failure = SyncError.fileSystem("cannot join \(path): \(error)")
                    return
                }
                unlink(path)
                next += 1
                HLSFetch.writeMark(markPath, next: next, size: size)
            }
        }
    }

    /// Fetches the segments not joined yet and joins them; returns the joined file.
    /// - Throws: ``SyncError``: a segment that failed (what is joined and fetched is kept), one that is not MPEG-TS,
    ///   a full disk.
    func download(
        _ urls: [String], into folder: String, manifest: String, progress: (@Sendable (BatchProgress) -> Void)?
    ) async throws -> Joined {
        let manifestPath = folder + "/manifest"
        if (try? String(contentsOfFile: manifestPath, encoding: .utf8)) != manifest {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: manifestPath))
        }
        let paths = urls.indices.map { index -> String in
            let number = String(index)
            return folder + "/" + String(repeating: "0", count: max(0, 6 - number.count)) + number + ".ts"
        }
        let joinedPath = folder + "/joined.ts"
        let markPath = folder + "/joined.mark"
        let fd = open(joinedPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SyncError.fileSystem("cannot create \(joinedPath)", errno) }
        defer { close(fd) }
        // What a killed run joined: cut back to its mark (bytes past it may be a segment half appended).
        // A joined file shorter than its mark (lost, or cut) starts again from nothing: truncating cannot lengthen it.
        var (next, size) = HLSFetch.readMark(markPath)
        var info = stat()
        if next > urls.count || fstat(fd, &info) != 0 || Int64(info.st_size) < size
            || ftruncate(fd, off_t(size)) != 0
        {
            (next, size) = (0, 0)
        }
        if size == 0 { _ = ftruncate(fd, 0) }
        let join = Join(fd: fd, markPath: markPath, paths: paths, next: next, size: size)
        join.advance()
        let first = join.lock.withLock { join.next }
        let requests = (first..<urls.count).filter { access(paths[$0], F_OK) != 0 }.map {
            TransferRequest(id: String($0), url: urls[$0], destination: paths[$0], headers: headers)
        }
        var segmentOptions = options
        segmentOptions.concurrency = min(max(1, options.concurrency), HLSFetch.segmentsInFlight)
        segmentOptions.stagingDirectory = folder
        segmentOptions.durable = false
        if !requests.isEmpty {
            // Segments are joined as they finish, on a queue of their own: `finished` runs on the transfer engine's
            // thread, where copying a segment of megabytes would hold up every transfer.
            let joiner = DispatchQueue(label: "mediasync.hls-join")
            let result = await TransferEngine(client: client, options: segmentOptions).download(
                requests, progress: progress,
                finished: { outcome in if outcome.error == nil { joiner.async { join.advance() } } })
            // The joins still queued are done before the joined file is looked at (or closed).
            await withCheckedContinuation { continuation in joiner.async { continuation.resume() } }
            join.advance()
            if let failure = join.lock.withLock({ join.failure }) { throw failure }
            if let failed = result.failed.first, let error = failed.error {
                if error.isFatal { throw SyncError.diskFull("\(error.description) (segment \(failed.request.id))") }
                let joined = join.lock.withLock { join.next }
                throw SyncError.invalidInput(
                    "segment \((Int(failed.request.id) ?? 0) + 1) of \(urls.count) failed (\(error.description)); "
                        + "\(urls.count - result.failed.count) are kept for the next run (\(joined) joined)")
            }
        }
        join.advance()
        let (joined, total, failure) = join.lock.withLock { (join.next, join.size, join.failure) }
        if let failure { throw failure }
        guard joined == urls.count else {
            throw SyncError.invalidInput("segment \(joined + 1) of \(urls.count) is missing; kept for the next run")
        }
        if options.durable, fsync(fd) != 0 { throw SyncError.fileSystem("cannot flush \(joinedPath)", errno) }
        return Joined(path: joinedPath, size: total)
    }

    /// Appends one segment at `offset` of the joined file; returns its size.
    /// - Throws: ``SyncError`` when it is not MPEG-TS (it is removed) or cannot be read or written.
    fileprivate static func append(_ path: String, to out: Int32, at offset: Int64, index: Int, count: Int) throws
        -> Int64
    {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw SyncError.fileSystem("cannot read \(path)", errno) }
        defer { close(input) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw SyncError.fileSystem("cannot read \(path)", errno) }
            if got == 0 { break }
            if total == 0, buffer[0] != 0x47 {
                unlink(path)
                let start = String(decoding: buffer.prefix(min(16, got)), as: UTF8.self).debugDescription
                throw SyncError.invalidInput(
                    "segment \(index + 1) of \(count) is not MPEG-TS (it starts with \(start)); nothing placed")
            }
            var done = 0
            while done < got {
                let written = buffer.withUnsafeBytes {
                    pwrite(out, $0.baseAddress?.advanced(by: done), got - done, off_t(offset + total + Int64(done)))
                }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw SyncError.fileSystem("cannot write the joined file", errno) }
                done += written
            }
            total += Int64(got)
        }
        if total == 0 {
            unlink(path)
            throw SyncError.invalidInput("segment \(index + 1) of \(count) is empty; nothing placed")
        }
        return total
    }

    /// `joined.mark`: how many segments and bytes the joined file holds ("count size"), replaced by a rename.
    fileprivate static func writeMark(_ path: String, next: Int, size: Int64) {
        let temporary = path + ".tmp"
        let text = Array("\(next) \(size)\n".utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == text.count { rename(temporary, path) } else { unlink(temporary) }
    }

    fileprivate static func readMark(_ path: String) -> (Int, Int64) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return (0, 0) }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, let next = Int(parts[0]), let size = Int64(parts[1]), next >= 0, size >= 0 else {
            return (0, 0)
        }
        return (next, size)
    }
}

/// `mediasync get --hls`: an HLS VOD stream (a master or a media playlist) saved as one file.
public enum HLSDownload {
    /// Fetches the playlist's segments (resuming those already in `staging`) and places the joined file at
    /// `destination` atomically. Returns its size.
    /// - Throws: ``SyncError`` (a bad playlist, a segment that failed or is not MPEG-TS, another host), HTTP errors.
    public static func run(
        url: String, destination: String, staging: String, client: HTTPClient, options: TransferOptions,
        headers: HTTPHeaders = HTTPHeaders(), progress: (@Sendable (BatchProgress) -> Void)? = nil
    ) async throws -> Int64 {
        let urls = try await HLSPlaylist.segmentURLs(at: url, requireMaster: false) { address, _ in
            String(decoding: try await client.send(HTTPRequest(url: address, headers: headers)).body, as: UTF8.self)
        }
        let fetch = HLSFetch(client: client, options: options, headers: headers)
        let folder = staging + "/hls-" + String(ContentHash.hex(of: Array(url.utf8)))
        let joined = try await fetch.download(
            urls, into: folder, manifest: "\(url)\n\(urls.count)\n", progress: progress)
        guard rename(joined.path, destination) == 0 else {
            throw SyncError.fileSystem("cannot place \(destination)", errno)
        }
        try? FileManager.default.removeItem(atPath: folder)
        return joined.size
    }
}
