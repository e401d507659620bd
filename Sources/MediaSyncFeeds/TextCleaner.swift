internal import CLibXML2

/// Cleans text values: titles become plain text, other values are trimmed.
enum TextCleaner {
    /// Plain text from a title that may hold HTML: tags removed, entity references decoded (titles are often
    /// double-escaped, `&amp;amp;`), runs of ASCII whitespace squashed to one space. No-break and other Unicode
    /// spaces are characters of the title and stay as they are.
    static func plainText(_ text: String) -> String? {
        if isAlreadyPlain(text) { return text }
        var scalars = String.UnicodeScalarView()
        var inTag = false
        var pendingSpace = false
        let source = Array(text.unicodeScalars)
        var index = 0
        while index < source.count {
            let scalar = source[index]
            if inTag {
                if scalar == ">" { inTag = false }
                index += 1
                continue
            }
            if scalar == "<", index + 1 < source.count, isTagStart(source[index + 1]) {
                inTag = true
                if isBlockTag(source, at: index + 1) { pendingSpace = !scalars.isEmpty }
                index += 1
                continue
            }
            var output = scalar
            if scalar == "&", let (decoded, length) = decodeReference(source, at: index) {
                output = decoded
                index += length
            } else {
                index += 1
            }
            if isASCIIWhitespace(output) {
                pendingSpace = !scalars.isEmpty
                continue
            }
            if pendingSpace {
                scalars.append(" ")
                pendingSpace = false
            }
            scalars.append(output)
        }
        let result = String(scalars)
        return result.isEmpty ? nil : result
    }

    /// ``plainText(_:)`` would return the text unchanged: ``isAlreadyPlain(_:)`` for UTF-8 bytes, `false` for
    /// any non-ASCII byte (those take the long way).
    static func isAlreadyPlainASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var scan = PlainScan()
        for byte in bytes {
            guard scan.accepts(UInt32(byte), nonASCII: false) else { return false }
        }
        return scan.isComplete
    }

    /// Printable ASCII with single inner spaces and no `<` or `&`: nothing to clean (the common case).
    private static func isAlreadyPlain(_ text: String) -> Bool {
        var scan = PlainScan()
        for byte in text.utf8 {
            if byte >= 0x80 { return isAlreadyPlainUnicode(text) }
            guard scan.accepts(UInt32(byte), nonASCII: false) else { return false }
        }
        return scan.isComplete
    }

    /// ``isAlreadyPlain(_:)`` for text with non-ASCII characters (which are kept as they are, Unicode spaces
    /// included).
    private static func isAlreadyPlainUnicode(_ text: String) -> Bool {
        var scan = PlainScan()
        for scalar in text.unicodeScalars {
            guard scan.accepts(scalar.value, nonASCII: true) else { return false }
        }
        return scan.isComplete
    }

    /// The check of ``isAlreadyPlain(_:)``, one character (a byte or a scalar value) at a time: printable
    /// characters, no `<`, single inner spaces, and no `&` but one a space follows.
    private struct PlainScan {
        private var previousWasSpace = true
        private var previousWasAmpersand = false

        /// Whether the text is still plain with `value` added; a value of 0x80 or more is not unless `nonASCII`.
        @inline(__always)
        mutating func accepts(_ value: UInt32, nonASCII: Bool) -> Bool {
            // "Q & A" has nothing to decode; "&amp;" or "&#38;" might.
            if previousWasAmpersand, value != 0x20 { return false }
            previousWasAmpersand = value == 0x26
            switch value {
            case 0x20:
                if previousWasSpace { return false }
                previousWasSpace = true
            case 0x3C:
                return false
            case 0x21...0x7E:
                previousWasSpace = false
            case 0x80...:
                if !nonASCII { return false }
                previousWasSpace = false
            default:
                return false
            }
            return true
        }

        /// Whether the text, ended here, is plain: it does not end with a space or an `&` (nor is it empty).
        var isComplete: Bool { !previousWasSpace && !previousWasAmpersand }
    }

    /// Literal text (an Atom `type="text"` title): runs of ASCII whitespace become one space, the ends are
    /// trimmed, nothing else changes (`<blink>` stays); `nil` when nothing is left.
    static func literalText(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                pendingSpace = !bytes.isEmpty
                continue
            }
            if pendingSpace {
                bytes.append(0x20)
                pendingSpace = false
            }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// Whether ``literalText(_:)`` returns the text unchanged: not empty, no tab, line feed or carriage return,
    /// no space at either end or next to another.
    static func isCollapsed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, let last = bytes.last, first != 0x20, last != 0x20 else { return false }
        var previousWasSpace = false
        for byte in bytes {
            if byte == 0x09 || byte == 0x0A || byte == 0x0D { return false }
            if byte == 0x20 {
                if previousWasSpace { return false }
                previousWasSpace = true
            } else {
                previousWasSpace = false
            }
        }
        return true
    }

    private static func isASCIIWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    /// A trimmed value, `nil` when empty.
    static func trimmed(_ text: String) -> String? {
        let result = text.trimmingCharacters()
        return result.isEmpty ? nil : result
    }

    private static func isTagStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "/" || scalar == "!" || scalar.properties.isAlphabetic
    }

    private static let blockTags: Set<String> = [
        "br", "p", "div", "li", "ul", "ol", "tr", "td", "h1", "h2", "h3", "h4",
    ]

    /// Whether the tag starting at `start` (just after `<`) separates words (`<br>`, `</p>`), as a browser renders it.
    private static func isBlockTag(_ source: [Unicode.Scalar], at start: Int) -> Bool {
        var index = start
        if index < source.count, source[index] == "/" { index += 1 }
        var name = ""
        while index < source.count, name.count < 3,
            source[index].properties.isAlphabetic || ("1"..."4").contains(source[index])
        {
            name.unicodeScalars.append(source[index])
            index += 1
        }
        return blockTags.contains(name.lowercased())
    }

    private static func decodeReference(_ source: [Unicode.Scalar], at start: Int) -> (Unicode.Scalar, Int)? {
        var end = start + 1
        while end < source.count, end - start < 40, source[end] != ";" {
            let scalar = source[end]
            guard scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "#"
            else { return nil }
            end += 1
        }
        guard end < source.count, source[end] == ";", end > start + 1 else { return nil }
        let name = String(String.UnicodeScalarView(source[(start + 1)..<end]))
        let length = end - start + 1
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value: UInt32?
            if digits.hasPrefix("x") || digits.hasPrefix("X") {
                value = UInt32(digits.dropFirst(), radix: 16)
            } else {
                value = UInt32(digits, radix: 10)
            }
            // Only characters XML allows: `&amp;#0;` in a title must not become a NUL (or another C0 control).
            guard let value, value >= 0x20 || value == 0x09 || value == 0x0A || value == 0x0D,
                value != 0xFFFE, value != 0xFFFF, let scalar = Unicode.Scalar(value)
            else { return nil }
            return (scalar, length)
        }
        switch name {
        case "amp": return ("&", length)
        case "lt": return ("<", length)
        case "gt": return (">", length)
        case "quot": return ("\"", length)
        case "apos": return ("'", length)
        default: break
        }
        let value = cxml_html_entity_value(Array(name.utf8) + [0])
        guard value > 0, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}
