/// How an Atom text construct carries its text (RFC 4287 §3.1, and Atom 0.3's `type` and `mode`), or Media
/// RSS's `media:title type="plain|html"`.
///
/// The rule for titles: `text` (the default, and `text/plain`, `plain`) is literal: nothing is decoded or
/// removed, only runs of ASCII whitespace become one space. `html` (`text/html`, and Atom 0.3's
/// `mode="escaped"` without a type) and `xhtml` (`application/xhtml+xml`) become plain text: markup removed,
/// character and entity references decoded, so `&amp;lt;blink&amp;gt;` in HTML still reads `<blink>`.
/// `mode="base64"` (Atom 0.3), or a `type` that is a MIME type other than text or XML (Atom 1.0), is decoded
/// first; text that is not base64 of UTF-8 is kept as written.
struct TextConstruct: Equatable {
    enum Kind {
        case text, html, xhtml
    }

    var kind: Kind
    var base64: Bool

    init(kind: Kind = .text, base64: Bool = false) {
        self.kind = kind
        self.base64 = base64
    }

    /// From an element's `type` and `mode` attributes.
    init(_ source: some AttributeSource) {
        let type = source.withAttribute("type") { Self.lowercasedASCII(Self.trimmed($0)) }
        let mode = source.withAttribute("mode") { Self.lowercasedASCII(Self.trimmed($0)) }
        self.init(type: type, mode: mode)
    }

    init(type: String?, mode: String?) {
        // Atom 0.3's `mode="base64"`, or a MIME type that is neither text nor XML (RFC 4287 §4.1.3.3).
        base64 = mode == "base64" || type.map(Self.isBase64MediaType) ?? false
        switch type {
        case nil, "":
            kind = mode == "escaped" ? .html : .text
        case "text", "text/plain", "plain":
            kind = .text
        case "html", "text/html":
            kind = .html
        case "xhtml", "application/xhtml+xml":
            kind = .xhtml
        case let other?:
            kind = other.contains("xhtml") ? .xhtml : other.contains("html") ? .html : .text
        }
    }

    /// Whether content of a `type` is base64 (RFC 4287 §4.1.3.3): a MIME type other than `text/*`, `*/xml` and
    /// `*+xml` (the lowercased `type`).
    static func isBase64MediaType(_ type: String) -> Bool {
        type.contains("/") && !type.hasPrefix("text/") && !type.hasSuffix("/xml") && !type.hasSuffix("+xml")
    }

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end, InputRewriter.isWhitespace(bytes[start]) { start += 1 }
        while end > start, InputRewriter.isWhitespace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// The bytes as a string with ASCII capitals lowered.
    static func lowercasedASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The base64 (standard or URL-safe alphabet, ASCII whitespace ignored, padding optional) of UTF-8 text, with
    /// the characters XML 1.0 forbids removed; `nil` when the text is not base64 or does not decode to UTF-8.
    static func base64Decoded(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var sawPadding = false
        var digits = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="):
                sawPadding = true
                continue
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            default:
                return nil
            }
            if sawPadding { return nil }  // data after the padding
            digits += 1
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard digits > 0, digits % 4 != 1 else { return nil }
        guard output.withUnsafeBufferPointer({ InputRewriter.isValidUTF8($0) }) else { return nil }
        var clean: [UInt8] = []
        clean.reserveCapacity(output.count)
        var index = 0
        while index < output.count {
            let byte = output[index]
            // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters either.
            if byte == 0xEF, index + 2 < output.count, output[index + 1] == 0xBF, output[index + 2] >= 0xBE {
                index += 3
                continue
            }
            if byte >= 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { clean.append(byte) }
            index += 1
        }
        return clean
    }
}
