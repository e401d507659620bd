/// Turns `Encodable` values into ``JSONValue`` and JSON bytes without `JSONEncoder`.
///
/// The metadata files embed whole server objects (``JSONValue``); `JSONEncoder` walks those through Codable
/// value by value, which made composing 10,000 `metadata.json` files take seconds on every sync. Here a
/// ``JSONValue`` is taken as it is, and the bytes are exactly what `JSONEncoder` writes with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]` (files written by either are the same; a test
/// holds the two together).
public enum JSONWriter {
    /// The value as a ``JSONValue`` tree (`Date` as `JSONEncoder`'s default, seconds since 2001).
    /// - Throws: `EncodingError` for non-finite numbers.
    public static func value<T: Encodable>(_ value: T) throws -> JSONValue {
        if let json = value as? JSONValue { return json }
        let encoder = TreeEncoder(codingPath: [])
        try value.encode(to: encoder)
        return encoder.node.value
    }

    /// Pretty-printed bytes with sorted keys and unescaped slashes, as `JSONEncoder` writes them.
    public static func prettyBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(4096)
        write(try JSONWriter.value(value), indent: 0, into: &output)
        return output
    }

    /// Compact bytes with sorted keys and unescaped slashes, as `JSONEncoder` writes them with
    /// `[.sortedKeys, .withoutEscapingSlashes]`: the form of the metadata files (a reader compares values, not
    /// whitespace, and the pretty form was a third of the bytes and most of the time spent writing them).
    public static func sortedCompactBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(4096)
        writeSortedCompact(try JSONWriter.value(value), into: &output)
        return output
    }

    /// Appends the value without whitespace, object members sorted by their keys' UTF-8 bytes.
    public static func writeSortedCompact(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeSortedCompact(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            let members = object.members
            // Members usually arrive sorted (the writer's own objects are) or nearly: sorted only when they are not.
            var inOrder = true
            var position = 1
            while inOrder, position < members.count {
                inOrder = JSONMember.keyPrecedes(members[position - 1].key, members[position].key)
                position += 1
            }
            let sorted = inOrder ? members : members.sorted { JSONMember.keyPrecedes($0.key, $1.key) }
            for (position, member) in sorted.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                writeSortedCompact(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        default: writeCompact(value, into: &output)
        }
    }

    /// Appends the pretty-printed value, its nested lines indented from `indent`.
    public static func write(_ value: JSONValue, indent: Int, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: format(number).utf8)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            output.append(0x0A)
            for (position, element) in elements.enumerated() {
                pad(indent + 2, &output)
                write(element, indent: indent + 2, into: &output)
                if position < elements.count - 1 { output.append(UInt8(ascii: ",")) }
                output.append(0x0A)
            }
            if elements.isEmpty { output.append(0x0A) }
            pad(indent, &output)
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            output.append(0x0A)
            let sorted = members.members.sorted { JSONMember.keyPrecedes($0.key, $1.key) }
            for (position, member) in sorted.enumerated() {
                pad(indent + 2, &output)
                writeString(member.key, into: &output)
                output.append(contentsOf: " : ".utf8)
                write(member.value, indent: indent + 2, into: &output)
                if position < sorted.count - 1 { output.append(UInt8(ascii: ",")) }
                output.append(0x0A)
            }
            if sorted.isEmpty { output.append(0x0A) }
            pad(indent, &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Compact bytes (no whitespace), object members in their order: what ASP.NET's System.Text.Json writes for a
    /// Jellyfin answer.
    public static func compactBytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        writeCompact(value, into: &output)
        return output
    }

    /// ``compactBytes(_:)`` in an array of exactly their size, for bytes kept long (grown by doubling, an array
    /// holds up to twice its bytes).
    public static func keptCompactBytes(_ value: JSONValue) -> [UInt8] {
        let output = compactBytes(value)
        guard output.capacity > output.count + 16 else { return output }
        return Array(unsafeUninitializedCapacity: output.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: output)
        }
    }

    /// Appends the value without whitespace, object members in their order.
    public static func writeCompact(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            output.append(contentsOf: number.isFinite ? format(number).utf8 : "null".utf8)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeCompact(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                writeCompact(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends the value without whitespace, keeping in every object at any depth only the members named in `keys`
    /// (what ``JSONValue/keeping(_:)`` keeps), object members in their order.
    public static func writeCompact(_ value: JSONValue, keeping keys: Set<String>, into output: inout [UInt8]) {
        switch value {
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeCompact(element, keeping: keys, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var first = true
            for member in object.members where keys.contains(member.key) {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                writeCompact(member.value, keeping: keys, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        default: writeCompact(value, into: &output)
        }
    }

    /// Whole numbers as integers (as ``JSONValue`` encodes them), others as Swift prints them minus a ".0".
    public static func format(_ number: Double) -> String {
        if number.rounded() == number, abs(number) < 9.0e15 { return String(Int64(number)) }
        let text = number.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    private static func pad(_ count: Int, _ output: inout [UInt8]) {
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `text` as a JSON string; text with nothing to escape (most) is copied in one go.
    public static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings need no escape: checked over the string's own bytes and copied whole.
        let plain = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                return false
            }
            output.append(contentsOf: bytes)
            return true
        }
        if plain == true {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case 0x0A: output.append(contentsOf: "\\n".utf8)
            case 0x0D: output.append(contentsOf: "\\r".utf8)
            case 0x09: output.append(contentsOf: "\\t".utf8)
            case 0x08: output.append(contentsOf: "\\b".utf8)
            case 0x0C: output.append(contentsOf: "\\f".utf8)
            case 0..<0x20:
                output.append(contentsOf: "\\u00".utf8)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// A node of the tree an encoding builds; containers hold children by reference until the end.
private final class Node {
    enum Content {
        case empty
        case value(JSONValue)
        case object([String: Node])
        case array([Node])
    }

    var content: Content = .empty

    var value: JSONValue {
        switch content {
        case .empty: return .object([:])
        case .value(let value): return value
        case .object(let members): return .object(JSONObject(members.mapValues(\.value)))
        case .array(let elements): return .array(elements.map(\.value))
        }
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

private final class TreeEncoder: Encoder {
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any] = [:]
    let node = Node()

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([:]) }
        return KeyedEncodingContainer(KeyedTree<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedTree(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleTree(node: node, codingPath: codingPath)
    }

    /// Encodes a child value into a node of its own.
    static func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> Node {
        if let json = value as? JSONValue {
            let node = Node()
            node.content = .value(json)
            return node
        }
        let encoder = TreeEncoder(codingPath: codingPath)
        try value.encode(to: encoder)
        return encoder.node
    }
}

private func number(_ value: Double, codingPath: [any CodingKey]) throws -> JSONValue {
    guard value.isFinite else {
        throw EncodingError.invalidValue(
            value, EncodingError.Context(codingPath: codingPath, debugDescription: "JSON has no non-finite numbers"))
    }
    return .number(value)
}

private struct KeyedTree<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    private func set(_ child: Node, _ key: Key) {
        guard case .object(var members) = node.content else { return }
        node.content = .empty  // keeps `members` uniquely referenced while it changes
        members[key.stringValue] = child
        node.content = .object(members)
    }

    private func set(_ value: JSONValue, _ key: Key) {
        let child = Node()
        child.content = .value(value)
        set(child, key)
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try number(value, codingPath: codingPath + [key]), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try number(Double(value), codingPath: codingPath + [key]), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.number(Double(value)), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(try TreeEncoder.encode(value, codingPath: codingPath + [key]), key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = Node()
        child.content = .object([:])
        set(child, key)
        return KeyedEncodingContainer(KeyedTree<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = Node()
        child.content = .array([])
        set(child, key)
        return UnkeyedTree(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        if let key = Key(stringValue: "super") { return superEncoder(forKey: key) }
        return TreeEncoder(codingPath: codingPath)  // a key type without "super": nothing here encodes that way
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let encoder = TreeEncoder(codingPath: codingPath + [key])
        set(encoder.node, key)
        return encoder
    }
}

/// The primitive `encode` overloads of an unkeyed and a single-value container, written once: each makes the
/// ``JSONValue`` and hands it to ``store(_:)``.
private protocol PrimitiveEncoding {
    /// Stores one value: appends it (unkeyed) or sets it (single value).
    func store(_ value: JSONValue)
    /// The coding path of the value being stored, for the error about a non-finite number.
    var valuePath: [any CodingKey] { get }
}

extension PrimitiveEncoding {
    mutating func encodeNil() throws { store(.null) }
    mutating func encode(_ value: Bool) throws { store(.bool(value)) }
    mutating func encode(_ value: String) throws { store(.string(value)) }
    mutating func encode(_ value: Double) throws { store(try number(value, codingPath: valuePath)) }
    mutating func encode(_ value: Float) throws { store(try number(Double(value), codingPath: valuePath)) }
    mutating func encode(_ value: Int) throws { store(.number(Double(value))) }
    mutating func encode(_ value: Int8) throws { store(.number(Double(value))) }
    mutating func encode(_ value: Int16) throws { store(.number(Double(value))) }
    mutating func encode(_ value: Int32) throws { store(.number(Double(value))) }
    mutating func encode(_ value: Int64) throws { store(.number(Double(value))) }
    mutating func encode(_ value: UInt) throws { store(.number(Double(value))) }
    mutating func encode(_ value: UInt8) throws { store(.number(Double(value))) }
    mutating func encode(_ value: UInt16) throws { store(.number(Double(value))) }
    mutating func encode(_ value: UInt32) throws { store(.number(Double(value))) }
    mutating func encode(_ value: UInt64) throws { store(.number(Double(value))) }
}

private struct UnkeyedTree: UnkeyedEncodingContainer, PrimitiveEncoding {
    let node: Node
    let codingPath: [any CodingKey]

    var count: Int {
        if case .array(let elements) = node.content { return elements.count }
        return 0
    }

    private func append(_ child: Node) {
        guard case .array(var elements) = node.content else { return }
        node.content = .empty
        elements.append(child)
        node.content = .array(elements)
    }

    private func append(_ value: JSONValue) {
        let child = Node()
        child.content = .value(value)
        append(child)
    }

    private var nextPath: [any CodingKey] { codingPath + [AnyKey(intValue: count)] }

    func store(_ value: JSONValue) { append(value) }
    var valuePath: [any CodingKey] { nextPath }

    mutating func encode<T: Encodable>(_ value: T) throws {
        append(try TreeEncoder.encode(value, codingPath: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let child = Node()
        child.content = .object([:])
        let path = nextPath
        append(child)
        return KeyedEncodingContainer(KeyedTree<NestedKey>(node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = Node()
        child.content = .array([])
        let path = nextPath
        append(child)
        return UnkeyedTree(node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = TreeEncoder(codingPath: nextPath)
        append(encoder.node)
        return encoder
    }
}

private struct SingleTree: SingleValueEncodingContainer, PrimitiveEncoding {
    let node: Node
    let codingPath: [any CodingKey]

    func store(_ value: JSONValue) { node.content = .value(value) }
    var valuePath: [any CodingKey] { codingPath }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let child = try TreeEncoder.encode(value, codingPath: codingPath)
        node.content = child.content
    }
}
