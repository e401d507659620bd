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

    private static func hasScheme(_ url: String) -> Bool {
        var sawLetter = false
        for byte in url.utf8 {
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
