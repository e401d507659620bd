import Hummingbird
import NIOCore
import NIOHTTP1

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

    /// The bytes of `range`, read now; nil when the file holds fewer (it was cut short meanwhile) or cannot be read.
    func read(_ range: ClosedRange<Int64>) -> ByteBuffer? {
        let count = Int(range.upperBound - range.lowerBound + 1)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(count)
        var done = 0
        while done < count {
            let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { bytes in
                let read = pread(descriptor, bytes.baseAddress, count - done, off_t(range.lowerBound) + off_t(done))
                return max(read, 0)
            }
            if got <= 0 { return nil }
            done += got
        }
        return buffer
    }
}

/// A file that could not be sent: the connection is closed (the client sees a short body).
struct FileStreamError: Error {
    let errno: CInt
}

/// Streams a range of an open file as a response body with `sendfile`.
enum FileStream {
    /// A body this small is read and sent with the head: one `pread`, and the answer leaves in one write, where a
    /// file region costs a hop to the connection's loop and a write of its own (images, subtitles, small files are
    /// most of the requests a mirror syncing from `serve` makes).
    static let readWholeUpTo: Int64 = 64 * 1024

    /// - Parameter channel: the connection.
    static func body(_ file: OpenFile, range: ClosedRange<Int64>, channel: any Channel) -> ResponseBody {
        if range.upperBound - range.lowerBound < readWholeUpTo, let bytes = file.read(range) {
            return ResponseBody(byteBuffer: bytes)
        }
        return ResponseBody(contentLength: Int(range.upperBound - range.lowerBound + 1)) { writer in
            try await send(file, range: range, channel: channel)
            try await writer.finish(nil)
        }
    }

    /// Sends the range with `sendfile`: the kernel moves the bytes from the file to the socket, none of them passes
    /// through this process, and the connection's own back-pressure paces it. Written as one file region from the
    /// ``RawBodySlot`` below Hummingbird's codec (whose body parts are byte buffers only), after the head, which
    /// Hummingbird has handed to the connection before it asks for the body: the loop runs tasks in order, so the head
    /// is in the pipeline before this write. Every connection `serve` makes has the slot (``AnsweringUpgradeChannel``);
    /// one without it is closed.
    static func send(_ file: OpenFile, range: ClosedRange<Int64>, channel: any Channel) async throws {
        let descriptor = dup(file.descriptor)
        guard descriptor >= 0 else { throw FileStreamError(errno: errno) }
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
        let written = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            guard let slot = try? channel.pipeline.syncOperations.context(handlerType: RawBodySlot.self) else {
                return channel.eventLoop.makeFailedFuture(FileStreamError(errno: 0))
            }
            let region = FileRegion(
                fileHandle: handle, readerIndex: Int(range.lowerBound), endIndex: Int(range.upperBound) + 1)
            return slot.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.fileRegion(region))))
        }
        defer { try? handle.close() }
        // A stream whose task is cancelled (the server shutting down) ends its connection, which fails the write:
        // a client that stopped reading cannot hold the shutdown.
        try await withTaskCancellationHandler {
            try await written.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}

/// A place in each connection's pipeline below Hummingbird's codec, where a response body can be written as a file
/// region (``FileStream/send(_:range:channel:)``). It passes everything through.
final class RawBodySlot: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
}
