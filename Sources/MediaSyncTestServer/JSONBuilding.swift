import MediaSyncJSON

/// Shorthands for building and reading Jellyfin's JSON (the value, parser and writer are MediaSyncJSON's).
extension JSONValue {
    /// A whole number (ticks, counts, sizes).
    static func int(_ value: Int64) -> JSONValue { .number(Double(value)) }

    /// A whole number from an `Int`.
    static func integer(_ value: Int) -> JSONValue { .number(Double(value)) }

    /// A fractional number (frame rates).
    static func double(_ value: Double) -> JSONValue { .number(value) }

    /// An object of `members` in their order.
    static func members(_ members: [JSONMember]) -> JSONValue { .object(JSONObject(members)) }

    /// A request body or a fixture, or nil when it is not JSON. A UTF-8 byte order mark is skipped, as
    /// System.Text.Json skips it.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return try? JSONValue(parsing: Array(bytes.dropFirst(3))) }
        return try? JSONValue(parsing: bytes)
    }

    /// Compact bytes, members in order, as ASP.NET writes them.
    func serialized() -> [UInt8] { JSONWriter.compactBytes(self) }

    /// ``serialized()`` as a string.
    func serializedString() -> String { String(decoding: serialized(), as: UTF8.self) }

    /// A member of a request body, its name matched without case: Jellyfin reads bodies with
    /// `PropertyNameCaseInsensitive = true` (Jellyfin.Extensions/Json/JsonDefaults.cs, v10.8.13 to v10.11.x).
    func field(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        if let exact = members[key] { return exact }
        let lowered = key.lowercased()
        return members.first { $0.key.lowercased() == lowered }?.value
    }

    /// A copy of an object with `key` replaced (or appended when missing).
    func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[key] = value
        return .object(members)
    }
}
