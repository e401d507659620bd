import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A held file opened for one response. Its size and modification time are the open file's, so the headers always
/// describe the bytes sent: when a `sync` replaces the file meanwhile, this response goes on with the old bytes (the
/// descriptor keeps them) and the next request opens the new file. Closed when the last reference goes, whether or not
/// a body was ever sent.
final class OpenFile: Sendable {
    let descriptor: CInt
    let size: Int64
    /// Whole seconds since 1970.
    let modified: Int64

    /// Opens `path` for reading; nil when it is not there or not a regular file.
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec)
    }

    deinit {
        close(descriptor)
    }

    /// The held file as these headers describe it.
    func held(path: String) -> HeldFile {
        HeldFile(path: path, size: size, modified: modified)
    }

    /// Replaces what `buffer` holds with up to `count` bytes at `offset` (fewer only at the end of the file).
    /// Blocking: called on a thread pool. A buffer nobody else holds any more is filled in place, without an
    /// allocation.
    func read(into buffer: inout ByteBuffer, at offset: Int64, count: Int) throws {
        buffer.clear()
        var failure: CInt = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { space in
            var done = 0
            while done < count {
                let got = pread(
                    descriptor, space.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
                if got > 0 {
                    done += got
                } else if got == 0 {
                    break
                } else if errno != EINTR {
                    failure = errno
                    break
                }
            }
            return done
        }
        if failure != 0 { throw FileStreamError(errno: failure) }
    }
}

/// A read that failed, or a file that became shorter than its headers said: the connection is closed (the client
/// sees a short body, as from any web server whose file changed under it).
struct FileStreamError: Error {
    let errno: CInt
}

/// One chunk's buffer, used in turn by the reader (which fills it on the thread pool) and the writer (which hands a
/// copy of it to the connection). The stream sequences the two, so one party at a time touches it; once the
/// connection has sent a chunk, its buffer is filled again in place, so a stream does not allocate per chunk (with
/// glibc, a new 512 KiB buffer per chunk also left hundreds of MB resident under 20 fast readers).
private final class ChunkSlot: @unchecked Sendable {
    var buffer: ByteBuffer

    init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }
}

/// Streams a range of an open file as a response body: each chunk read on NIO's blocking-I/O thread pool with `pread`
/// while the one before it is written, so reading and sending overlap, and four chunk buffers per stream are all
/// `serve` holds of it, however fast or slow the client reads (the writer waits while the connection cannot take
/// more).
enum FileStream {
    /// 256 KiB: large enough that a stream costs few thread hops; four of them (1 MiB) per stream at most.
    static let chunkLength = 256 * 1024
    /// Buffers per stream, used in turn. The connection holds a chunk until its last byte is in the socket, which can
    /// be after the writer was let go on to the next one; with four in turn, a buffer is filled again three chunks
    /// after it was handed over, by when the connection has usually let it go, so it is filled in place (if not, the
    /// fill gets a new buffer: a chunk still being sent is never written over).
    static let slotCount = 4

    /// - Parameter channel: the connection.
    static func body(
        _ file: OpenFile, range: ClosedRange<Int64>, channel: any Channel, threadPool: NIOThreadPool = .singleton
    ) -> ResponseBody {
        let length = range.upperBound - range.lowerBound + 1
        return ResponseBody(contentLength: Int(length)) { writer in
            if try await sent(file, range: range, channel: channel) {
                try await writer.finish(nil)
            } else {
                try await copied(file, range: range, eventLoop: channel.eventLoop, threadPool: threadPool, to: &writer)
            }
        }
    }

    /// Sends the range with `sendfile`: the kernel moves the bytes from the file to the socket, none of them passes
    /// through this process, and the connection's own back-pressure paces it. Written as one file region from the
    /// ``RawBodySlot`` below Hummingbird's codec (whose body parts are byte buffers only), after the head, which
    /// Hummingbird has handed to the connection before it asks for the body: the loop runs tasks in order, so the head
    /// is in the pipeline before this write. False when the connection has no slot (the body is then copied).
    static func sent(_ file: OpenFile, range: ClosedRange<Int64>, channel: any Channel) async throws -> Bool {
        let descriptor = dup(file.descriptor)
        guard descriptor >= 0 else { throw FileStreamError(errno: errno) }
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
        let written = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Bool> in
            guard let slot = try? channel.pipeline.syncOperations.context(handlerType: RawBodySlot.self) else {
                return channel.eventLoop.makeSucceededFuture(false)
            }
            let region = FileRegion(
                fileHandle: handle, readerIndex: Int(range.lowerBound), endIndex: Int(range.upperBound) + 1)
            return slot.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.fileRegion(region)))).map { true }
        }
        defer { try? handle.close() }
        // A stream whose task is cancelled (the server shutting down) ends its connection, which fails the write:
        // a client that stopped reading cannot hold the shutdown.
        return try await withTaskCancellationHandler {
            try await written.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// Copies the range through four rotating buffers (see ``slotCount``).
    /// - Parameter eventLoop: the connection's event loop. The writer hands each chunk to it and returns at once;
    ///   the connection says it is full only once the loop has run that write. So after each chunk the stream waits
    ///   for the loop to have run it: without that, 20 fast readers on a busy machine piled up chunks queued for the
    ///   loop to 2 GB and more.
    private static func copied(
        _ file: OpenFile, range: ClosedRange<Int64>, eventLoop: any EventLoop, threadPool: NIOThreadPool,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        let length = range.upperBound - range.lowerBound + 1
        let end = range.upperBound + 1
        let capacity = Int(min(Int64(chunkLength), length))
        let slots = (0..<slotCount).map { _ in ChunkSlot(capacity: capacity) }
        @Sendable func fill(_ slot: ChunkSlot, at offset: Int64) async throws {
            let count = Int(min(Int64(chunkLength), end - offset))
            try await threadPool.runIfActive { try file.read(into: &slot.buffer, at: offset, count: count) }
            // The file became shorter than the headers said.
            guard slot.buffer.readableBytes > 0 else { throw FileStreamError(errno: 0) }
        }
        var offset = range.lowerBound
        var turn = 0
        try await fill(slots[0], at: offset)
        while true {
            let current = slots[turn]
            offset += Int64(current.buffer.readableBytes)
            guard offset < end else {
                try await writer.write(current.buffer)
                break
            }
            let spare = slots[(turn + 1) % slotCount]
            let from = offset
            let next = Task { try await fill(spare, at: from) }
            do {
                try await writer.write(current.buffer)
                try await eventLoop.submit {}.get()
            } catch {
                next.cancel()
                throw error
            }
            try await next.value
            turn = (turn + 1) % slotCount
        }
        try await writer.finish(nil)
    }
}

/// A place in each connection's pipeline below Hummingbird's codec, where a response body can be written as a file
/// region (``FileStream/sent(_:range:channel:)``). It passes everything through.
final class RawBodySlot: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
}
