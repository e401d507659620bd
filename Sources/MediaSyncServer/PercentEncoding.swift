/// Percent-encoding with only RFC 3986's unreserved characters (`A–Z a–z 0–9 - . _ ~`) left as they are.
enum PercentEncoding {
    /// Encodes every byte of the UTF-8 form except the unreserved characters.
    static func encode(_ text: String) -> String {
        // Ids, tags and numbers (most of what goes into a URL) need no escape at all.
        if text.utf8.allSatisfy(isUnreserved) { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%"
                result.unicodeScalars.append(hexDigit(byte >> 4))
                result.unicodeScalars.append(hexDigit(byte & 0x0F))
            }
        }
        return result
    }

    /// A query string (`?a=b&c=d`) with names and values encoded; empty for no items.
    static func query(_ items: [(name: String, value: String)]) -> String {
        guard !items.isEmpty else { return "" }
        return "?" + items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexDigit(_ value: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10)
    }
}
