internal import CLibXML2

/// Cleans and resolves URLs found in feeds.
enum URLResolver {
    private static let schemeRewrites: [(String, String)] = [
        ("feed:https://", "https://"), ("feed:http://", "http://"), ("feed://", "http://"),
        ("itpc://", "http://"), ("pcast://", "http://"), ("podcast://", "http://"),
    ]

    /// Trims `text`, rewrites `itpc:`/`pcast:`/`feed:` schemes to HTTP(S), percent-encodes spaces and other bytes
    /// not allowed in a URI, and resolves a relative reference against `base`.
    /// The corresponding C function is `xmlBuildURI`.
    static func resolve(_ text: String, base: String?) -> String? {
        resolve(text, base: { base })
    }

    /// As ``resolve(_:base:)``, asking for the base only when the reference is relative.
    static func resolve(_ text: String, base baseProvider: () -> String?) -> String? {
        var url = text.trimmingCharacters()
        guard !url.isEmpty else { return nil }
        if let first = url.utf8.first, [UInt8(ascii: "f"), UInt8(ascii: "i"), UInt8(ascii: "p")].contains(first | 0x20)
        {
            let lowered = url.lowercased()
            for (from, to) in schemeRewrites where lowered.hasPrefix(from) {
                url = to + url.dropFirst(from.count)
                break
            }
        }
        url = escape(url)
        guard !hasScheme(url), let base = baseProvider(), !base.isEmpty else { return url }
        let escapedBase = escape(base)
        guard let built = xmlBuildURI(url, escapedBase) else { return url }
        defer { cxml_free(built) }
        // xmlBuildURI unescapes a network-path reference's host (`//host%C3%BF/…`): escape its result again.
        return escape(String(cString: built))
    }

    /// Whether ``resolve(_:base:)`` returns `trimmed` unchanged whatever the base: an absolute URL with a scheme
    /// that is not rewritten and nothing to percent-encode. (Conservative: `false` sends a URL the long way.)
    /// - Parameter trimmed: A value already trimmed of ASCII whitespace, not empty.
    static func isAbsoluteAsIs(_ trimmed: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = trimmed.first else { return false }
        switch first | 0x20 {
        case UInt8(ascii: "f"), UInt8(ascii: "i"), UInt8(ascii: "p"): return false  // feed:, itpc:, pcast:, podcast:
        default: break
        }
        // The scheme: a letter, then letters, digits, `+`, `-` or `.`, up to the colon.
        var index = 0
        while true {
            guard index < trimmed.count else { return false }
            let byte = trimmed[index]
            index += 1
            if (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") { continue }
            if byte == UInt8(ascii: ":"), index > 1 { break }
            let isSchemeByte =
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            guard index > 1, isSchemeByte else { return false }
        }
        // Nothing to percent-encode after it (the bytes `escape(_:)` encodes, as two bit sets).
        let low: UInt64 = 1 << 0x22 | 1 << 0x3C | 1 << 0x3E  // " < >
        // \\ ^ ` { | }
        let high: UInt64 =
            1 << (0x5C - 0x40) | 1 << (0x5E - 0x40) | 1 << (0x60 - 0x40) | 1 << (0x7B - 0x40) | 1 << (0x7C - 0x40)
            | 1 << (0x7D - 0x40)
        if let base = trimmed.baseAddress {
            // Sixteen bytes per step (SSE2): outside 0x21...0x7E, or one of the nine above.
            let raw = UnsafeRawPointer(base)
            let low = SIMD16<UInt8>(repeating: 0x21)
            let high = SIMD16<UInt8>(repeating: 0x7B)
            let tilde = SIMD16<UInt8>(repeating: 0x7E)
            let quote = SIMD16<UInt8>(repeating: 0x22)
            let less = SIMD16<UInt8>(repeating: 0x3C)
            let greater = SIMD16<UInt8>(repeating: 0x3E)
            let backslash = SIMD16<UInt8>(repeating: 0x5C)
            let caret = SIMD16<UInt8>(repeating: 0x5E)
            let grave = SIMD16<UInt8>(repeating: 0x60)
            while index + 16 <= trimmed.count {
                let vector = raw.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
                let outside = (vector .< low) .| ((vector .>= high) .& (vector .!= tilde))
                let quotes = (vector .== quote) .| (vector .== less) .| (vector .== greater)
                let others = (vector .== backslash) .| (vector .== caret) .| (vector .== grave)
                if any(outside .| quotes .| others) { return false }
                index += 16
            }
        }
        while index < trimmed.count {
            let byte = trimmed[index]
            index += 1
            if byte &- 0x21 >= 0x5E { return false }  // 0x00...0x20, 0x7F...0xFF
            let bits = byte < 0x40 ? low &>> UInt64(byte) : high &>> UInt64(byte &- 0x40)
            if bits & 1 != 0 { return false }
        }
        return true
    }

    /// Whether the bytes start with a scheme and its colon (`urn:`, `tag:`, `https:`).
    static func hasScheme<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        var sawLetter = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                sawLetter = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                if !sawLetter { return false }
            case UInt8(ascii: ":"):
                return sawLetter
            default:
                return false
            }
        }
        return false
    }

    /// Whether the (trimmed) bytes start `http://` or `https://`, in any case, with something after it.
    static func isHTTPURL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func hasPrefix(_ prefix: StaticString) -> Bool {
            let count = prefix.utf8CodeUnitCount
            guard bytes.count > count else { return false }
            for index in 0..<count where bytes[index] | 0x20 != prefix.utf8Start[index] | 0x20 { return false }
            return true
        }
        return hasPrefix("http://") || hasPrefix("https://")
    }

    private static func hasScheme(_ url: String) -> Bool {
        hasScheme(url.utf8)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case 0...0x20, 0x7F...0xFF, UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"),
            UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            true
        default:
            false
        }
    }

    private static func escape(_ url: String) -> String {
        var copy = url
        let clean = copy.withUTF8 { bytes in
            for byte in bytes where needsEscape(byte) { return false }
            return true
        }
        guard !clean else { return url }
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        var changed = false
        for byte in url.utf8 {
            switch byte {
            case 0...0x20, 0x7F...0xFF, UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"),
                UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
                output.append(UInt8(ascii: "%"))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
                changed = true
            default:
                output.append(byte)
            }
        }
        return changed ? String(decoding: output, as: UTF8.self) : url
    }
}
