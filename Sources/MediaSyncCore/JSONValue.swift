/// Any JSON value, kept as received: unknown fields of a server's objects survive a decode/encode round trip.
public enum JSONValue: Codable, Equatable, Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            // Whole numbers stay integers in the output (ids, ticks and sizes must not turn into 1.0e9).
            if value.rounded() == value, abs(value) < 9.0e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member `key` of an object, or nil.
    /// The value with, in every object at any depth, only the members named in `keys` (what
    /// ``init(parsing:keepingKeys:)`` builds from the same document's bytes).
    public func keeping(_ keys: Set<String>) -> JSONValue {
        switch self {
        case .object(let members):
            var kept: [String: JSONValue] = [:]
            for (key, value) in members where keys.contains(key) { kept[key] = value.keeping(keys) }
            return .object(kept)
        case .array(let elements): return .array(elements.map { $0.keeping(keys) })
        default: return self
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string value, or nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The numeric value as an integer, or nil.
    public var intValue: Int64? {
        if case .number(let value) = self, value.rounded() == value, abs(value) < 9.2e18 { return Int64(value) }
        return nil
    }

    /// The boolean value, or nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements of an array, or nil.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members of an object, or nil.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }
}
