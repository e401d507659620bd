/// A strict RFC 8259 parser straight from bytes into ``JSONValue``.
///
/// `JSONDecoder` into `JSONValue` goes through Codable's try-each-type dance for every value; a listing of
/// 10,000 Jellyfin items took seconds. This reads the bytes once. Invalid UTF-8 inside strings is
/// replaced by U+FFFD rather than refused (a server's odd byte must not lose a whole listing).
public enum JSONParseError: Error, Equatable, CustomStringConvertible {
    case unexpectedEnd
    case unexpected(byte: UInt8, offset: Int)
    case tooDeep(offset: Int)
    case invalidNumber(offset: Int)
    case invalidEscape(offset: Int)
    case trailingData(offset: Int)

    public var description: String {
        switch self {
        case .unexpectedEnd: return "the JSON ends too early"
        case .unexpected(let byte, let offset):
            let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
            return "unexpected \(shown) at offset \(offset)"
        case .tooDeep(let offset): return "nested more than \(JSONValue.maximumDepth) levels at offset \(offset)"
        case .invalidNumber(let offset): return "invalid number at offset \(offset)"
        case .invalidEscape(let offset): return "invalid escape at offset \(offset)"
        case .trailingData(let offset): return "unexpected data after the JSON value at offset \(offset)"
        }
    }
}

extension JSONValue {
    /// Deeper nesting is refused (a hostile document must not exhaust the stack).
    public static let maximumDepth = 256

    /// Parses one JSON document (surrounding whitespace allowed).
    /// - Throws: ``JSONParseError``.
    public init(parsing bytes: [UInt8]) throws {
        self = try JSONValue.parse(bytes, keeping: nil)
    }

    /// Parses one JSON document keeping, in every object at any depth, only the members named in `keys`: the
    /// others are checked as strictly as ever but never built (a reader that needs a few fields of large documents
    /// skips the allocations of the rest).
    /// - Throws: ``JSONParseError``, for any fault in the whole document, kept or not.
    public init(parsing bytes: [UInt8], keepingKeys keys: Set<String>) throws {
        self = try JSONValue.parse(bytes, keeping: keys)
    }

    private static func parse(_ bytes: [UInt8], keeping: Set<String>?) throws -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONByteParser(buffer, keeping: keeping)
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.offset == buffer.count else { throw JSONParseError.trailingData(offset: parser.offset) }
            return value
        }
    }
}

private struct JSONByteParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    /// Object members kept (nil: all of them).
    let keeping: Set<String>?
    /// The members and elements of the objects and arrays being read, innermost last: each container is copied
    /// out at its exact size when it ends (an array grown by doubling kept up to twice its room, for the life of
    /// a listing's 10,000 items).
    var memberStack: [JSONMember] = []
    var elementStack: [JSONValue] = []
    /// The keys and the id-sized ASCII strings read so far, each kept once: a listing page repeats its members'
    /// names, and ids (the server's, the library's, a series' and season's, the item's own as its user data's key),
    /// in each of its 500 items. Longer strings (paths, overviews) rarely repeat.
    var known = SharedText()

    init(_ bytes: UnsafeBufferPointer<UInt8>, keeping: Set<String>? = nil) {
        self.bytes = bytes
        self.keeping = keeping
    }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    func peek() throws -> UInt8 {
        guard offset < bytes.count else { throw JSONParseError.unexpectedEnd }
        return bytes[offset]
    }

    mutating func expect(_ literal: StaticString, _ value: JSONValue) throws -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw JSONParseError.unexpectedEnd }
        let pointer = literal.utf8Start
        for index in 0..<count where bytes[offset + index] != pointer[index] {
            throw JSONParseError.unexpected(byte: bytes[offset + index], offset: offset + index)
        }
        offset += count
        return value
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw JSONParseError.tooDeep(offset: offset) }
        let byte = try peek()
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw JSONParseError.unexpected(byte: byte, offset: offset)
        }
    }

    mutating func object(depth: Int) throws -> JSONValue {
        offset += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            offset += 1
            return .object([:])
        }
        let base = memberStack.count
        func finish(_ stack: inout [JSONMember]) -> JSONValue {
            let members = JSONByteParser.exactCopy(of: stack[base...])
            stack.removeSubrange(base...)
            return .object(JSONObject(members))
        }
        while true {
            skipWhitespace()
            let byte = try peek()
            guard byte == UInt8(ascii: "\"") else { throw JSONParseError.unexpected(byte: byte, offset: offset) }
            let key = try string()
            skipWhitespace()
            let colon = try peek()
            guard colon == UInt8(ascii: ":") else { throw JSONParseError.unexpected(byte: colon, offset: offset) }
            offset += 1
            skipWhitespace()
            if let keeping, !keeping.contains(key) {
                try skip(depth: depth + 1)
            } else {
                let member = JSONMember(key, try value(depth: depth + 1))
                memberStack.append(member)
            }
            skipWhitespace()
            let next = try peek()
            offset += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "}") { return finish(&memberStack) }
            throw JSONParseError.unexpected(byte: next, offset: offset - 1)
        }
    }

    /// A container's members or elements in an array of their own, of their size. `Array(slice)` is not: when the
    /// slice is the whole stack (a document's outermost container) it hands back the stack's own buffer, with room
    /// for every member the document nested at once; kept for each of 8,000 cached media sources, that was most of
    /// their memory.
    static func exactCopy<Element>(of slice: ArraySlice<Element>) -> [Element] {
        var copy: [Element] = []
        copy.reserveCapacity(slice.count)
        copy.append(contentsOf: slice)
        return copy
    }

    mutating func array(depth: Int) throws -> JSONValue {
        offset += 1
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            offset += 1
            return .array([])
        }
        let base = elementStack.count
        while true {
            skipWhitespace()
            let element = try value(depth: depth + 1)
            elementStack.append(element)
            skipWhitespace()
            let next = try peek()
            offset += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "]") {
                let elements = JSONByteParser.exactCopy(of: elementStack[base...])
                elementStack.removeSubrange(base...)
                return .array(elements)
            }
            throw JSONParseError.unexpected(byte: next, offset: offset - 1)
        }
    }

    /// Checks one value as ``value(depth:)`` does, without building it.
    mutating func skip(depth: Int) throws {
        guard depth < JSONValue.maximumDepth else { throw JSONParseError.tooDeep(offset: offset) }
        let byte = try peek()
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            offset += 1
            skipWhitespace()
            if try peek() == close {
                offset += 1
                return
            }
            while true {
                skipWhitespace()
                if close == UInt8(ascii: "}") {
                    let quote = try peek()
                    guard quote == UInt8(ascii: "\"") else {
                        throw JSONParseError.unexpected(byte: quote, offset: offset)
                    }
                    try skipString()
                    skipWhitespace()
                    let colon = try peek()
                    guard colon == UInt8(ascii: ":") else {
                        throw JSONParseError.unexpected(byte: colon, offset: offset)
                    }
                    offset += 1
                    skipWhitespace()
                }
                try skip(depth: depth + 1)
                skipWhitespace()
                let next = try peek()
                offset += 1
                if next == UInt8(ascii: ",") { continue }
                if next == close { return }
                throw JSONParseError.unexpected(byte: next, offset: offset - 1)
            }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): _ = try expect("true", .null)
        case UInt8(ascii: "f"): _ = try expect("false", .null)
        case UInt8(ascii: "n"): _ = try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw JSONParseError.unexpected(byte: byte, offset: offset)
        }
    }

    /// Checks a string starting at its opening quote, without building it (escapes are checked as ``string()``
    /// checks them).
    mutating func skipString() throws {
        offset += 1
        var scratch: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return
            case UInt8(ascii: "\\"):
                try escape(into: &scratch)
                scratch.removeAll(keepingCapacity: true)
            case 0..<0x20:
                throw JSONParseError.unexpected(byte: byte, offset: offset)
            default:
                offset += 1
            }
        }
        throw JSONParseError.unexpectedEnd
    }

    /// A string starting at the opening quote; the fast path copies an escape-free run in one go.
    mutating func string() throws -> String {
        offset += 1
        let start = offset
        // Every byte OR-ed: below 0x80, the text is ASCII.
        var bits: UInt8 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            bits |= byte
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return offset - start > 16 && offset - start <= 65 && bits < 0x80 ? known.one(ascii: text) : text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw JSONParseError.unexpected(byte: byte, offset: offset) }
            offset += 1
        }
        guard offset < bytes.count else { throw JSONParseError.unexpectedEnd }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &scratch)
            case 0..<0x20:
                throw JSONParseError.unexpected(byte: byte, offset: offset)
            default:
                scratch.append(byte)
                offset += 1
            }
        }
        throw JSONParseError.unexpectedEnd
    }

    mutating func escape(into scratch: inout [UInt8]) throws {
        let at = offset
        guard offset + 1 < bytes.count else { throw JSONParseError.unexpectedEnd }
        let kind = bytes[offset + 1]
        offset += 2
        switch kind {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(kind)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(at: at)
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate wants a low one right after; alone it becomes U+FFFD.
                if offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
                {
                    let saved = offset
                    offset += 2
                    let low = try hex4(at: saved)
                    if (0xDC00..<0xE000).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        offset = saved
                        scalar = 0xFFFD
                    }
                } else {
                    scalar = 0xFFFD
                }
            } else if (0xDC00..<0xE000).contains(scalar) {
                scalar = 0xFFFD
            }
            let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
            scratch.append(contentsOf: String(character).utf8)
        default:
            throw JSONParseError.invalidEscape(offset: at)
        }
    }

    mutating func hex4(at escapeOffset: Int) throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw JSONParseError.unexpectedEnd }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw JSONParseError.invalidEscape(offset: escapeOffset)
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    /// A number per RFC 8259's grammar; integers of up to 15 digits are computed exactly without a string.
    mutating func number() throws -> Double {
        let start = offset
        var negative = false
        if bytes[offset] == UInt8(ascii: "-") {
            negative = true
            offset += 1
        }
        func digits() -> Int {
            let from = offset
            while offset < bytes.count, bytes[offset] >= UInt8(ascii: "0"), bytes[offset] <= UInt8(ascii: "9") {
                offset += 1
            }
            return offset - from
        }
        let integerStart = offset
        let integerDigits = digits()
        guard integerDigits > 0 else { throw JSONParseError.invalidNumber(offset: start) }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            throw JSONParseError.invalidNumber(offset: start)
        }
        var simple = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw JSONParseError.invalidNumber(offset: start) }
            simple = false
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard digits() > 0 else { throw JSONParseError.invalidNumber(offset: start) }
            simple = false
        }
        if simple, integerDigits <= 15 {
            var value: Int64 = 0
            for index in integerStart..<(integerStart + integerDigits) {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            }
            return Double(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw JSONParseError.invalidNumber(offset: start) }
        return value
    }
}
