/// Checks ids and names that come from the server before they go into a URL path.
///
/// A hostile or broken server must not be able to steer requests elsewhere: an id with `/`, `\`, `..`,
/// a control character (NUL included), or more than ``maxLength`` characters is refused.
public enum JellyfinID {
    /// The longest id accepted (Jellyfin ids are 32 hex characters, or 36 with dashes).
    public static let maxLength = 128

    /// Returns `id` when it is safe to use as one URL path segment.
    /// - Parameters:
    ///   - id: the id as received.
    ///   - role: what the id names, for the message (`item id`, `media source id`…).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID``.
    @discardableResult
    public static func validate(_ id: String, role: String = "id") throws -> String {
        if let problem = problem(with: id) {
            throw JellyfinError(.invalidID, "the server sent an unusable \(role) (\(problem)); it was not used")
        }
        return id
    }

    /// `id` as two spellings of one Jellyfin id compare: lower case, without dashes (the server writes Guids in the
    /// "N" form, clients and older answers with dashes, in either case).
    public static func comparable(_ id: String) -> String {
        id.lowercased().filter { $0 != "-" }
    }

    /// Whether `id` is safe to use as one URL path segment (see ``validate(_:role:)``).
    public static func isValid(_ id: String) -> Bool {
        problem(with: id) == nil
    }

    /// The validated id, percent-encoded as one path segment.
    static func pathSegment(_ id: String, role: String) throws -> String {
        PercentEncoding.encode(try validate(id, role: role))
    }

    private static func problem(with id: String) -> String? {
        // Most ids are hex or GUID text: one pass over the bytes says they are fine.
        var plainCount = 0
        for byte in id.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                plainCount += 1
            default:
                plainCount = -1
            }
            if plainCount < 0 { break }
        }
        if plainCount > 0 && plainCount <= maxLength { return nil }
        if id.isEmpty { return "empty" }
        if id.unicodeScalars.count > maxLength { return "longer than \(maxLength) characters" }
        // Byte scans: `String.contains(String)` goes through Foundation's locale-aware search.
        if id.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) {
            return "contains a slash"
        }
        let dot = UInt8(ascii: ".")
        if zip(id.utf8, id.utf8.dropFirst()).contains(where: { $0 == dot && $1 == dot }) { return "contains \"..\"" }
        if id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "contains a control character"
        }
        return nil
    }
}
