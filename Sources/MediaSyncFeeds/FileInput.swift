#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a streaming ``InputRewriter`` gets its bytes.
protocol RewriterSource: AnyObject {
    /// Reads the next bytes of the document into `buffer`. Returns the number read, 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Whether the document from byte `offset` to its end is well-formed UTF-8 (may read ahead; does not
    /// change what ``read(into:)`` returns next).
    func isValidUTF8(from offset: Int) throws -> Bool
}

/// A regular file read with `pread(2)`: the document is streamed once for the UTF-8 check and once for parsing,
/// never held in memory as a whole.
final class FileInput: RewriterSource {
    private let descriptor: Int32
    private var offset = 0

    /// Wraps an open descriptor of a regular file; the caller keeps ownership and closes it.
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = try Self.pread(descriptor, buffer, at: offset)
        offset += count
        return count
    }

    /// Checks the file through 16 MiB memory-mapped windows (no copy; each window is unmapped before the next,
    /// so the mapping never adds more than 16 MiB to the resident set); falls back to reads when mapping fails.
    func isValidUTF8(from start: Int) throws -> Bool {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return try isValidUTF8Reading(from: start) }
        let size = Int(info.st_size)
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        let windowSize = 16 << 20
        var position = start
        while position < size {
            let mapStart = position / page * page
            let mapEnd = min(size, mapStart + windowSize)
            guard let mapping = mmap(nil, mapEnd - mapStart, PROT_READ, MAP_PRIVATE, descriptor, off_t(mapStart)),
                mapping != MAP_FAILED
            else { return try isValidUTF8Reading(from: position) }
            defer { munmap(mapping, mapEnd - mapStart) }
            let bytes = UnsafeBufferPointer(
                start: mapping.assumingMemoryBound(to: UInt8.self) + (position - mapStart), count: mapEnd - position)
            guard let complete = InputRewriter.validUTF8Prefix(bytes) else { return false }
            if mapEnd == size { return complete == bytes.count }
            position += complete
        }
        return true
    }

    /// Reads from `offset` in 256 KiB chunks, carrying an incomplete sequence over to the next chunk.
    private func isValidUTF8Reading(from start: Int) throws -> Bool {
        let capacity = 256 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        let bytes = buffer.bindMemory(to: UInt8.self)
        var position = start
        var carried = 0
        while true {
            let count = try Self.pread(
                descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[carried...]), at: position)
            position += count
            let total = carried + count
            if count == 0 { return carried == 0 }
            guard let complete = InputRewriter.validUTF8Prefix(UnsafeBufferPointer(rebasing: bytes[0..<total]))
            else { return false }
            carried = total - complete
            if carried > 0, let base = bytes.baseAddress { base.update(from: base + complete, count: carried) }
        }
    }

    /// Reads the whole file from the start (for the recovery re-read and for UTF-16 documents).
    func readAll() throws -> [UInt8] {
        var result: [UInt8] = []
        var position = 0
        let chunk = 1024 * 1024
        while true {
            // Read into uninitialised storage: appending a chunk of zeros and removing the unused part cost
            // two passes over 1 MiB per call, whatever the file's size.
            let piece = try [UInt8](unsafeUninitializedCapacity: chunk) { buffer, initialized in
                initialized = 0
                initialized = try Self.pread(descriptor, UnsafeMutableRawBufferPointer(buffer), at: position)
            }
            if piece.isEmpty { return result }
            if result.isEmpty { result = piece } else { result.append(contentsOf: piece) }
            position += piece.count
        }
    }

    private static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws
        -> Int
    {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            #if canImport(Darwin)
                let count = Darwin.pread(descriptor, base, buffer.count, off_t(offset))
            #else
                let count = Glibc.pread(descriptor, base, buffer.count, off_t(offset))
            #endif
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw FeedError.unreadable(String(cString: strerror(errno)))
        }
    }
}
