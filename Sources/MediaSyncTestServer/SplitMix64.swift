import MediaSyncCore

/// The test server derives ids and media bytes from a seed with Core's generator.
extension SplitMix64 {

    /// FNV-1a hash of a string, for mixing labels into seeds.
    static func hash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }

    /// A 32-lowercase-hex-character id (Jellyfin's "N" Guid format) derived from `seed` and `label`.
    static func hexID(seed: UInt64, label: String) -> String {
        var rng = SplitMix64(seed: seed ^ hash(label))
        let a = rng.next()
        let b = rng.next()
        return hex64(a) + hex64(b)
    }

    static func hex64(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `count` deterministic bytes for `seed`.
    static func bytes(seed: UInt64, count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var rng = SplitMix64(seed: seed)
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { raw in
            var i = 0
            while i < count {
                var word = rng.next()
                let n = min(8, count - i)
                for _ in 0..<n {
                    raw[i] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    i += 1
                }
            }
        }
        return out
    }
}
