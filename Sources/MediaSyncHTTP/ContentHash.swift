#if canImport(Glibc)
    import Glibc
#endif

/// XXH64 (seed 0) of a byte stream: the content hash recorded for every placed file and checked by
/// `verify --deep`.
///
/// Not a cryptographic hash: it proves a file unchanged since it was placed, not that a server is honest (a
/// server's own `Repr-Digest`/`Digest` is checked with SHA-256). Chosen over SHA-256 for cost: it runs on the
/// transfer thread as the bytes are written, where SHA-256 would add about half a second of CPU per GiB.
/// None of the listed Swift packages provides it. The algorithm follows the public XXH64 specification.
public struct ContentHash: Sendable {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var v1: UInt64 = prime1 &+ prime2
    private var v2: UInt64 = prime2
    private var v3: UInt64 = 0
    private var v4: UInt64 = 0 &- prime1
    /// Bytes hashed so far.
    public private(set) var count: Int64 = 0
    /// Up to 31 bytes not yet folded into a 32-byte stripe.
    private var tail: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var tailCount = 0

    public init() {}

    /// The hash of `bytes` as 16 lowercase hex digits.
    public static func hex(of bytes: [UInt8]) -> String {
        var hash = ContentHash()
        bytes.withUnsafeBytes { hash.update($0) }
        return hash.hex
    }

    /// The hash of a file's bytes as 16 lowercase hex digits; nil when it cannot be read.
    public static func hex(ofFile path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hash = ContentHash()
        let size = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, size)
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return hash.hex }
            hash.update(UnsafeRawBufferPointer(start: buffer, count: count))
        }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var pointer = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        count += Int64(remaining)
        if tailCount > 0 {
            let take = min(32 - tailCount, remaining)
            let filled = tailCount
            withUnsafeMutableBytes(of: &tail) {
                $0.baseAddress.map { ($0 + filled).copyMemory(from: pointer, byteCount: take) }
            }
            tailCount += take
            pointer += take
            remaining -= take
            guard tailCount == 32 else { return }
            let stripeBytes = tail
            withUnsafeBytes(of: stripeBytes) { raw in raw.baseAddress.map { stripe($0) } }
            tailCount = 0
        }
        while remaining >= 32 {
            stripe(pointer)
            pointer += 32
            remaining -= 32
        }
        if remaining > 0 {
            let left = remaining
            withUnsafeMutableBytes(of: &tail) { $0.baseAddress.map { $0.copyMemory(from: pointer, byteCount: left) } }
            tailCount = remaining
        }
    }

    /// The hash of everything given so far, as 16 lowercase hex digits.
    public var hex: String {
        let value = digest
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    public var digest: UInt64 {
        var hash: UInt64
        if count >= 32 {
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            for lane in [v1, v2, v3, v4] {
                hash ^= ContentHash.round(0, lane)
                hash = hash &* ContentHash.prime1 &+ ContentHash.prime4
            }
        } else {
            hash = ContentHash.prime5
        }
        hash &+= UInt64(bitPattern: count)
        withUnsafeBytes(of: tail) { raw in
            var offset = 0
            while offset + 8 <= tailCount {
                hash ^= ContentHash.round(0, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
                hash = rotate(hash, 27) &* ContentHash.prime1 &+ ContentHash.prime4
                offset += 8
            }
            if offset + 4 <= tailCount {
                hash ^=
                    UInt64(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
                    &* ContentHash.prime1
                hash = rotate(hash, 23) &* ContentHash.prime2 &+ ContentHash.prime3
                offset += 4
            }
            while offset < tailCount {
                hash ^= UInt64(raw[offset]) &* ContentHash.prime5
                hash = rotate(hash, 11) &* ContentHash.prime1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash &*= ContentHash.prime2
        hash ^= hash >> 29
        hash &*= ContentHash.prime3
        hash ^= hash >> 32
        return hash
    }

    @inline(__always)
    private mutating func stripe(_ pointer: UnsafeRawPointer) {
        v1 = ContentHash.round(v1, pointer.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian)
        v2 = ContentHash.round(v2, pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
        v3 = ContentHash.round(v3, pointer.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian)
        v4 = ContentHash.round(v4, pointer.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian)
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }
}

@inline(__always)
private func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
    (value << bits) | (value >> (64 - bits))
}
