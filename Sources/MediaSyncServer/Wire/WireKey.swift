import MediaSyncJSON

/// A coding key built from any string: the wire types decode PascalCase keys explicitly by name.
struct WireKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) {
        stringValue = name
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

/// Reads a JSON object as received and checks the members a wire type cannot do without.
enum WireObject {
    /// Decodes the value at the decoder as a JSON object.
    /// - Throws: `DecodingError.typeMismatch` when it is not an object, `.keyNotFound` when a required string
    ///   member is missing, null or empty.
    static func decode(from decoder: Decoder, requiring required: [String] = []) throws -> JSONValue {
        let value = try JSONValue(from: decoder)
        try check(value, codingPath: decoder.codingPath, requiring: required)
        return value
    }
}

/// A wire type kept as the server sent it in `raw`, encoded back unchanged, with typed accessors on top: a value
/// (`Hashable`, `Sendable`) whatever the kind.
public protocol RawWireObject: Codable, Hashable, Sendable {
    /// The object as the server sent it.
    var raw: JSONValue { get }
}

extension RawWireObject {
    /// Encodes ``raw`` unchanged.
    public func encode(to encoder: Encoder) throws {
        try raw.encode(to: encoder)
    }
}

/// A wire type that is a JSON object with a non-empty string `Id` (items, users), kept as received in `raw`.
public protocol IdentifiedWireObject: RawWireObject {
    /// `Id`. Never empty.
    var id: String { get }
    /// Wraps `raw` whose `Id` is `id`, without checking; use ``init(_:)``.
    init(unchecked raw: JSONValue, id: String)
}

extension IdentifiedWireObject {
    /// Wraps an object received earlier (for example, read back from `metadata.json`).
    ///
    /// Returns nil when `raw` is not an object or has no string `Id`.
    public init?(_ raw: JSONValue) {
        guard let id = raw["Id"]?.stringValue, !id.isEmpty else { return nil }
        self.init(unchecked: raw, id: id)
    }

    /// Decodes any JSON object with a non-empty string `Id`.
    /// - Throws: `DecodingError` when the value is not an object or has no `Id`.
    public init(from decoder: Decoder) throws {
        try self.init(wire: JSONValue(from: decoder), codingPath: decoder.codingPath)
    }

    /// Wraps an object parsed earlier, at `codingPath`, with a non-empty string `Id` (see ``WireDecodable``).
    /// - Throws: `DecodingError` when the value is not an object or has no `Id`.
    init(wire value: JSONValue, codingPath: [any CodingKey]) throws {
        try WireObject.check(value, codingPath: codingPath, requiring: ["Id"])
        self.init(unchecked: value, id: value["Id"]?.stringValue ?? "")
    }
}

/// A wire type that is any JSON object, kept as received in `raw`, with typed accessors on top.
public protocol JSONObjectWrapper: RawWireObject {
    /// Wraps `raw` without checking it; use ``init(_:)``.
    init(unchecked raw: JSONValue)
}

extension JSONObjectWrapper {
    /// Wraps an object; nil when `raw` is not a JSON object.
    public init?(_ raw: JSONValue) {
        guard raw.objectValue != nil else { return nil }
        self.init(unchecked: raw)
    }

    /// Decodes any JSON object.
    /// - Throws: `DecodingError` when the value is not an object.
    public init(from decoder: Decoder) throws {
        self.init(unchecked: try WireObject.decode(from: decoder))
    }
}

extension JSONValue {
    /// The number as an `Int`, or nil (also nil for non-whole numbers and out-of-range values).
    var wireInt: Int? {
        guard let value = intValue, value >= Int64(Int.min), value <= Int64(Int.max) else { return nil }
        return Int(value)
    }

    /// The number as a `Double`, or nil.
    var wireDouble: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The elements that are strings (others are skipped), or nil when this is not an array.
    var wireStrings: [String]? {
        arrayValue?.compactMap(\.stringValue)
    }

    /// The members whose values are strings (others are skipped), or nil when this is not an object.
    var wireStringMap: [String: String]? {
        guard let members = objectValue else { return nil }
        var result: [String: String] = [:]
        for (key, value) in members {
            if let text = value.stringValue { result[key] = text }
        }
        return result
    }

    /// A string member, or the name of a numeric .NET enum member looked up in `names` (the live server
    /// sends enum names, hand-written test data sometimes the numbers).
    func wireEnum(_ names: [String]) -> String? {
        if let text = stringValue { return text }
        if let number = wireInt {
            return number >= 0 && number < names.count ? names[number] : String(number)
        }
        return nil
    }
}

/// A coding key for an array position (for messages such as "missing field Id in Items.0").
struct WireIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }

    init(_ index: Int) {
        intValue = index
    }

    init?(stringValue: String) {
        nil
    }

    init?(intValue: Int) {
        self.intValue = intValue
    }
}

/// A wire type built straight from an already parsed ``JSONValue`` (no second pass through Codable).
/// Listings of thousands of items decode this way; other answers go through `JSONDecoder`.
protocol WireDecodable {
    /// - Throws: `DecodingError` naming the place (`codingPath`) of what is wrong.
    init(wire value: JSONValue, codingPath: [any CodingKey]) throws
}

extension WireObject {
    /// The object at `codingPath`, with the string members it cannot do without.
    static func check(_ value: JSONValue, codingPath: [any CodingKey], requiring required: [String]) throws {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self,
                DecodingError.Context(codingPath: codingPath, debugDescription: "expected a JSON object"))
        }
        for key in required {
            guard let text = members[key]?.stringValue, !text.isEmpty else {
                throw DecodingError.keyNotFound(
                    WireKey(key), DecodingError.Context(codingPath: codingPath, debugDescription: "missing \(key)"))
            }
        }
    }
}
