/// An ordered list of HTTP header fields with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    /// The fields in order, names as given.
    public private(set) var fields: [(name: String, value: String)]

    public init() { fields = [] }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value for `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        fields.first { HTTPHeaders.sameName($0.name, name) }?.value
    }

    /// Adds a field, keeping any existing ones of the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field of that name with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        fields.append((name: name, value: value))
    }

    /// Removes every field of that name.
    public mutating func remove(name: String) {
        fields.removeAll { HTTPHeaders.sameName($0.name, name) }
    }

    /// Whether two field names are equal, ASCII letters compared without case (RFC 9110 §5.1), by bytes: a
    /// lowercased copy of every name at every lookup was a few per cent of a first sync.
    static func sameName(_ one: String, _ other: String) -> Bool {
        var one = one
        var other = other
        return one.withUTF8 { left in
            other.withUTF8 { right in
                guard left.count == right.count else { return false }
                for index in 0..<left.count where left[index] != right[index] {
                    let a = left[index] | 0x20
                    guard a == right[index] | 0x20, a >= UInt8(ascii: "a"), a <= UInt8(ascii: "z") else { return false }
                }
                return true
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Parses one raw header line (`Name: value\r\n`); nil for status lines and blank lines.
    static func parseLine(_ line: String) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].trimmed(of: " \t")
        // By bytes: `contains(" ")` on a string is Foundation's substring search.
        guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: " ")) else { return nil }
        let value = line[line.index(after: colon)...].trimmed(of: " \t\r\n")
        return (String(name), String(value))
    }
}

extension StringProtocol {
    /// The text without the characters of `set`, carriage returns and line feeds at its ends. (Named apart from
    /// Foundation's `trimmingCharacters(in:)`, which a string literal argument would pick as a CharacterSet: that
    /// one cost more than the rest of parsing a response's header lines.)
    func trimmed(of set: String) -> Substring {
        // By bytes (the sets are ASCII): a Character walk of `set` for each end character was a per cent of a
        // first sync's header parsing.
        let slice = Substring(self)
        func kept(_ byte: UInt8) -> Bool { byte != 0x0D && byte != 0x0A && !set.utf8.contains(byte) }
        guard let first = slice.utf8.firstIndex(where: kept), let last = slice.utf8.lastIndex(where: kept)
        else { return slice[slice.endIndex...] }
        return slice[first..<slice.utf8.index(after: last)]
    }
}
