import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Live counters of one transfer, written on the loop thread and read by the progress reporter.
final class ItemProgress: Sendable {
    let done = Atomic<Int64>(0)
    /// The full size, or -1 while unknown.
    let expected: Atomic<Int64>

    init(expected: Int64?) {
        self.expected = Atomic(expected ?? -1)
    }
}

/// Counters shared by a whole batch.
final class BatchCounters: Sendable {
    /// Bytes received from the network and written, across the batch.
    let received = Atomic<Int64>(0)
}

/// Streams one response body into a partial file in the staging area, deciding from the response head
/// whether the bytes may continue the partial file, must replace it, or are an error body.
final class FileWriter: CurlResponseHandler, @unchecked Sendable {
    /// Why an attempt must start over from byte zero with a fresh request.
    enum Restart: Equatable, Sendable {
        /// 416: the partial file is not a prefix of what the server has now.
        case rangeNotSatisfiable
        /// A 206 whose validator differs from the partial file's.
        case validatorChanged
        /// A 206 that does not start where the partial file ends.
        case rangeMismatch
        /// A 206 without a validator (its bytes cannot be tied to the partial file's version).
        case validatorMissing
        /// A 206 whose complete length differs from the partial file's version.
        case lengthChanged
    }

    /// Past this many bytes a partial file gets a resume record; smaller ones are simply fetched again.
    static let resumeRecordThreshold: Int64 = 1 << 20
    /// Write-back of the file is started every this many bytes. In durable mode the final fsync then has little
    /// left to do; in both modes the page cache never piles up enough dirty pages for the kernel to throttle
    /// the writer (measured here: 1 GiB at ~400 MB/s without it, ~740 MB/s with it).
    static let writebackStride: Int64 = 8 << 20

    let fd: Int32
    let url: String
    let destination: String
    let staging: StagingArea
    let resumeOffset: Int64
    let sentValidator: String?
    /// The complete length recorded with the partial file, if any.
    let sentTotal: Int64?
    let item: ItemProgress
    let counters: BatchCounters

    private(set) var status = 0
    private(set) var headers = HTTPHeaders()
    private(set) var restart: Restart?
    /// Set when a 200 answered a range request: the partial file was truncated and refilled from zero.
    private(set) var restartedFromZero = false
    private(set) var startOffset: Int64 = 0
    private(set) var offset: Int64 = 0
    private(set) var totalSize: Int64?
    private(set) var errorBody: [UInt8] = []
    private var writing = false
    /// libcurl hands the body over in pieces of at most 16 KiB (`CURL_MAX_WRITE_SIZE`); they are gathered
    /// here and written in large blocks, which costs a memcpy and saves ~60 system calls per MiB.
    private let coalesceCapacity: Int
    private let buffers: BufferPool
    private var coalesce: UnsafeMutableRawPointer?
    private var pending = 0
    /// The validator of the response being written (see ``validator(from:)``).
    private(set) var validator: String?
    /// The SHA-256 (lowercase hex) the server announced for the whole representation (`Repr-Digest`, `Digest`).
    private(set) var announcedSHA256: String?
    /// The content hash of the bytes written, in order, from byte 0; nil when this attempt continued a partial
    /// file (its first bytes were not seen here) or a write broke the order.
    private(set) var streamHash: ContentHash?
    private var recordWritten = false
    /// Whether the file has a name (in the staging area); an unnamed file gets one once it is worth resuming.
    private(set) var isNamed: Bool
    private var writebackFrom: Int64 = 0
    private var writtenBackFrom: Int64 = 0

    init(
        fd: Int32, url: String, destination: String, staging: StagingArea, resumeOffset: Int64, sentValidator: String?,
        sentTotal: Int64?, item: ItemProgress, counters: BatchCounters, buffers: BufferPool, named: Bool
    ) {
        self.sentTotal = sentTotal
        self.buffers = buffers
        self.isNamed = named
        self.coalesceCapacity = buffers.bufferSize
        self.fd = fd
        self.url = url
        self.destination = destination
        self.staging = staging
        self.resumeOffset = resumeOffset
        self.sentValidator = sentValidator
        self.item = item
        self.counters = counters
        self.recordWritten = resumeOffset > 0
    }

    deinit {
        if let coalesce { buffers.give(coalesce) }
    }

    /// Whether a resume record may exist beside the partial file (so placing the file must remove it).
    var mayHaveRecord: Bool { recordWritten || resumeOffset > 0 }

    /// The bytes this attempt received for the file (written, or gathered and about to be).
    var bytesWritten: Int64 { offset - startOffset }

    /// The validator a partial file may be continued with: a strong `ETag`, else a `Last-Modified` that is strong
    /// (RFC 9110 §8.8.2.2: at least one second before the response's `Date`, so a change within the same second
    /// cannot hide behind it). Nil when the response has neither: its bytes are then never continued.
    static func validator(from headers: HTTPHeaders) -> String? {
        if let etag = headers["ETag"], !etag.hasPrefix("W/"), !etag.isEmpty { return etag }
        guard let lastModified = headers["Last-Modified"], let modified = HTTPDate.parse(lastModified),
            let dateField = headers["Date"], let date = HTTPDate.parse(dateField), modified <= date - 1
        else { return nil }
        return lastModified
    }

    /// Parses `Content-Range: bytes START-END/TOTAL` (TOTAL may be `*`).
    static func parseContentRange(_ value: String?) -> (start: Int64, end: Int64, total: Int64?)? {
        guard let value else { return nil }
        let text = value.trimmed(of: " ")
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), end >= start else {
            return nil
        }
        return (start, end, Int64(halves[1]))
    }

    func didReceiveHead(status: Int, headers: HTTPHeaders, contentLength: Int64?) -> HTTPError? {
        self.status = status
        self.headers = headers
        let validator = FileWriter.validator(from: headers)
        switch status {
        case 206:
            // Invariant: bytes are continued only by a 206 that starts where the partial file ends, carries the
            // partial file's validator, and (when both are known) the same complete length. Anything else starts
            // the file over: no file ever holds bytes of two versions.
            guard let range = FileWriter.parseContentRange(headers["Content-Range"]), range.start == resumeOffset else {
                restart = .rangeMismatch
                return restartError
            }
            // (A 206 from byte 0 to a request that continued nothing is one response: nothing to tie.)
            if resumeOffset > 0 {
                guard let validator, let sentValidator else {
                    restart = .validatorMissing
                    return restartError
                }
                guard validator == sentValidator else {
                    restart = .validatorChanged
                    return restartError
                }
            }
            let total = range.total ?? contentLength.map { resumeOffset + $0 }
            if let sentTotal, let total, sentTotal != total {
                restart = .lengthChanged
                return restartError
            }
            startOffset = resumeOffset
            totalSize = total
        case 200, 203:
            if resumeOffset > 0 {
                // The server ignored Range or If-Range failed: these bytes start at zero, so the old ones go.
                restartedFromZero = true
                staging.removeRecord(for: destination)
                recordWritten = false
            }
            // A fresh attempt opened the file truncated; only a refused resume has bytes to drop.
            guard resumeOffset == 0 || ftruncate(fd, 0) == 0 else {
                return HTTPError.fromErrno(errno, operation: "truncate", path: staging.partPath(for: destination))
            }
            startOffset = 0
            totalSize = contentLength
            streamHash = ContentHash()
            hashedUpTo = 0
        case 416:
            restart = .rangeNotSatisfiable
            return restartError
        default:
            // An error or unexpected answer: its body is kept (briefly) for the message, not written.
            return nil
        }
        self.validator = validator
        announcedSHA256 = AnnouncedDigest.sha256(headers)
        writing = true
        offset = startOffset
        writebackFrom = startOffset
        writtenBackFrom = startOffset
        item.done.store(startOffset, ordering: .relaxed)
        if let totalSize { item.expected.store(totalSize, ordering: .relaxed) }
        return nil
    }

    func didReceive(_ bytes: UnsafeRawBufferPointer) -> HTTPError? {
        guard writing else {
            if errorBody.count < 4096 { errorBody.append(contentsOf: bytes.prefix(4096 - errorBody.count)) }
            return nil
        }
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return nil }
        if pending + bytes.count > coalesceCapacity, let error = flush() { return error }
        if bytes.count >= coalesceCapacity {
            if let error = writeFully(source, count: bytes.count, at: offset) { return error }
        } else {
            let buffer = coalesce ?? buffers.take()
            coalesce = buffer
            (buffer + pending).copyMemory(from: source, byteCount: bytes.count)
            pending += bytes.count
        }
        offset += Int64(bytes.count)
        item.done.store(offset, ordering: .relaxed)
        counters.received.add(Int64(bytes.count), ordering: .relaxed)
        if pending == coalesceCapacity, let error = flush() { return error }
        if !recordWritten, offset >= FileWriter.resumeRecordThreshold, let validator {
            recordWritten = true
            if !isNamed {
                // Worth resuming now: give the unnamed file its staging name. If that fails, it simply stays
                // unnamed (and is fetched from the start should this attempt fail).
                let path = staging.partPath(for: destination)
                unlink(path)
                guard NamespaceLock.shared.withLock({ AnonymousFile.link(fd, to: path) }) == nil else { return nil }
                isNamed = true
            }
            do {
                try staging.writeRecord(
                    StagingArea.Record(url: url, validator: validator, total: totalSize), for: destination)
            } catch {
                return error
            }
        }
        return nil
    }

    /// Writes the gathered bytes to the file. Call it once the transfer has ended, before the file is used.
    func flush() -> HTTPError? {
        guard pending > 0, let buffer = coalesce else { return nil }
        let count = pending
        pending = 0
        if let error = writeFully(buffer, count: count, at: offset - Int64(count)) {
            // What did not reach the disk is not part of the file.
            offset -= Int64(count)
            item.done.store(offset, ordering: .relaxed)
            return error
        }
        if offset - writebackFrom >= FileWriter.writebackStride {
            Writeback.start(fd: fd, offset: writebackFrom, length: offset - writebackFrom)
            // The stride before this one has had time to reach the disk: drop its clean pages, so a large
            // download does not fill the page cache and make the kernel reclaim memory under us.
            if writebackFrom > writtenBackFrom {
                _ = posix_fadvise(
                    fd, off_t(writtenBackFrom), off_t(writebackFrom - writtenBackFrom), POSIX_FADV_DONTNEED)
            }
            writtenBackFrom = writebackFrom
            writebackFrom = offset
        }
        return nil
    }

    private func writeFully(_ start: UnsafeRawPointer, count: Int, at position: Int64) -> HTTPError? {
        var base = start
        var remaining = count
        var position = position
        while remaining > 0 {
            let written = pwrite(fd, base, remaining, off_t(position))
            if written < 0 {
                if errno == EINTR { continue }
                return HTTPError.fromErrno(errno, operation: "write", path: staging.partPath(for: destination))
            }
            if streamHash != nil {
                if position == hashedUpTo {
                    streamHash?.update(UnsafeRawBufferPointer(start: base, count: written))
                    hashedUpTo += Int64(written)
                } else {
                    streamHash = nil
                }
            }
            position += Int64(written)
            remaining -= written
            base += written
        }
        return nil
    }

    /// How far ``streamHash`` has seen the file.
    private var hashedUpTo: Int64 = 0

    private var restartError: HTTPError {
        HTTPError(.invalidResponse, "the server's range answer does not continue the partial file", url: url)
    }
}

/// Starts asynchronous write-back of a file range (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`),
/// so the fsync before the rename has little left to do. Looked up at run time; a no-op where missing.
enum Writeback {
    private typealias Function = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
    private static let function: Function? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }()

    static func start(fd: Int32, offset: Int64, length: Int64) {
        _ = function?(fd, offset, length, 2)
    }
}
