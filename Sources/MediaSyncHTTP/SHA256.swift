import Crypto

#if canImport(Glibc)
    import Glibc
#endif

/// SHA-256, used to verify a downloaded file against the digest a server announces and to tell a listing's answers
/// and the metadata signatures apart. swift-crypto's (BoringSSL's, with the processor's SHA instructions where it has
/// them) does the work: several times faster than portable Swift, and a no-op sync hashes every listing page.
public struct SHA256 {
    private var hasher = Crypto.SHA256()

    public init() {}

    /// Adds bytes to the digest.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// The lowercase hex digest of everything added.
    public mutating func finalize() -> String {
        HexText.lowercase(hasher.finalize())
    }

    /// The lowercase hex digest of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        var hasher = SHA256()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }

    /// The lowercase hex digest of a file's contents, or nil when it cannot be read.
    public static func hex(ofFile path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            chunk.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        return hasher.finalize()
    }
}
