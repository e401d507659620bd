/// Any JSON value, kept as received: unknown fields of a server's objects survive a decode/encode round trip.
///
/// The library reads servers' documents into it and writes metadata files from it; the test server builds its
/// Jellyfin answers with it, members in the order Jellyfin writes them.
public enum JSONValue: Codable, Equatable, Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

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
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
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
        case .object(let value): try container.encode(value.dictionary)
        }
    }

    /// The value with, in every object at any depth, only the members named in `keys` (what
    /// ``init(parsing:keepingKeys:)`` builds from the same document's bytes).
    public func keeping(_ keys: Set<String>) -> JSONValue {
        switch self {
        case .object(let members):
            var kept = JSONObject()
            for (key, value) in members where keys.contains(key) { kept.append(key, value.keeping(keys)) }
            return .object(kept)
        case .array(let elements): return .array(elements.map { $0.keeping(keys) })
        default: return self
        }
    }

    /// The member `key` of an object, or nil.
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
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Hashable, Sendable {
    public var key: String
    public var value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// The members of a JSON object, in the order they were read or added, each key once.
///
/// Looked up by key like a dictionary, by a linear search (Jellyfin's objects have tens of members): kept as an
/// array so that the test server can answer with members in Jellyfin's order, and no larger than the dictionary it
/// replaced (a no-op sync's peak memory measured the same). Two objects are equal when they have the same members in
/// any order, as JSON objects are.
public struct JSONObject: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    /// The members in order.
    public private(set) var members: [JSONMember]

    public init() {
        members = []
    }

    /// An object of `members` in their order; of a key given twice, the last value is kept at the first place (as
    /// a dictionary filled in that order would).
    public init(_ members: [JSONMember]) {
        guard JSONObject.repeatsAKey(members) else {
            self.members = members
            return
        }
        self.members = []
        for member in members { self[member.key] = member.value }
    }

    /// An object of `members` in their order, which the caller knows repeat no key (an object's members split and
    /// joined again): not checked.
    public init(distinctMembers members: [JSONMember]) {
        self.members = members
    }

    /// Whether two members share a key: small objects are checked pair by pair, larger ones through a set.
    static func repeatsAKey(_ members: [JSONMember]) -> Bool {
        if members.count <= 16 {
            for later in members.indices.dropFirst() {
                for earlier in 0..<later where members[earlier].key == members[later].key { return true }
            }
            return false
        }
        var seen = Set<String>(minimumCapacity: members.count)
        return members.contains { !seen.insert($0.key).inserted }
    }

    /// An object of a dictionary's members, sorted by key (a dictionary has no order to keep).
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { JSONMember($0.key, $0.value) }.sorted { JSONMember.keyPrecedes($0.key, $1.key) }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { JSONMember($0.0, $0.1) })
    }

    public init(arrayLiteral elements: JSONMember...) {
        self.init(elements)
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    /// The members as a dictionary.
    public var dictionary: [String: JSONValue] {
        Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The value of `key`; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            let position = members.firstIndex { $0.key == key }
            switch (position, newValue) {
            case (let position?, let value?): members[position].value = value
            case (let position?, nil): members.remove(at: position)
            case (nil, let value?): members.append(JSONMember(key, value))
            case (nil, nil): break
            }
        }
    }

    /// Appends a member whose key the caller knows is not there yet.
    mutating func append(_ key: String, _ value: JSONValue) {
        members.append(JSONMember(key, value))
    }

    /// Sets each member of `other` here: a key already here takes `other`'s value in its place, a new one is
    /// appended. Sized for one merge: many small merges into one object are better made into one first.
    public mutating func merge(_ other: JSONObject) {
        // Room for them first: appended one by one to an object read at its exact size, the first would double its
        // room (a listing's 8,000 items, each merged with its cached media sources, held 7 MB of empty room).
        members.reserveCapacity(members.count + other.members.count)
        for member in other.members { self[member.key] = member.value }
    }

    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[JSONMember]>

        public mutating func next() -> (key: String, value: JSONValue)? {
            base.next().map { ($0.key, $0.value) }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(base: members.makeIterator())
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        if lhs.members == rhs.members { return true }
        for member in lhs.members where rhs[member.key] != member.value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-free, as equality is: the members' own hashes summed.
        var sum = 0
        for member in members {
            var one = Hasher()
            one.combine(member)
            sum &+= one.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }
}

extension JSONMember {
    /// Whether `left` sorts before `right` by their UTF-8 bytes (the order the writer gives an object's members).
    /// Compared over the strings' contiguous bytes: the generic comparison of two `UTF8View`s was most of the cost of
    /// sorting a server's item, whose 60 members come in the server's order.
    @inlinable
    public static func keyPrecedes(_ left: String, _ right: String) -> Bool {
        var left = left
        var right = right
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                let common = min(leftBytes.count, rightBytes.count)
                var position = 0
                while position < common {
                    let (a, b) = (leftBytes[position], rightBytes[position])
                    if a != b { return a < b }
                    position += 1
                }
                return leftBytes.count < rightBytes.count
            }
        }
    }
}
