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
        let lowered = name.lowercased()
        return fields.first { $0.name.lowercased() == lowered }?.value
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
        let lowered = name.lowercased()
        fields.removeAll { $0.name.lowercased() == lowered }
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
        guard !name.isEmpty, !name.contains(" ") else { return nil }
        let value = line[line.index(after: colon)...].trimmed(of: " \t\r\n")
        return (String(name), String(value))
    }
}

extension StringProtocol {
    /// The text without the characters of `set`, carriage returns and line feeds at its ends. (Named apart from
    /// Foundation's `trimmingCharacters(in:)`, which a string literal argument would pick as a CharacterSet: that
    /// one cost more than the rest of parsing a response's header lines.)
    func trimmed(of set: String) -> Substring {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) || first == "\r" || first == "\n" {
            slice = slice.dropFirst()
        }
        while let last = slice.last, set.contains(last) || last == "\r" || last == "\n" {
            slice = slice.dropLast()
        }
        return slice
    }
}
