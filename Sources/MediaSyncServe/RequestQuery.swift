/// A request's query as ASP.NET model binding reads it: keys case-insensitive, a list given as `ids=a,b` or as
/// `ids=a&ids=b` (or both), values percent-decoded, `+` a space.
public struct RequestQuery: Sendable, Equatable {
    /// Values by lowercased key, in the order given.
    private var values: [String: [String]] = [:]

    public init(_ query: String?) {
        guard let query, !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = PercentDecoding.decode(String(parts[0]), plusIsSpace: true).lowercased()
            guard !key.isEmpty else { continue }
            let value = parts.count > 1 ? PercentDecoding.decode(String(parts[1]), plusIsSpace: true) : ""
            values[key, default: []].append(value)
        }
    }

    /// The first value of `key` (any case), nil when absent.
    public func string(_ key: String) -> String? {
        values[key.lowercased()]?.first
    }

    /// The first non-empty value of `key`, nil when absent or empty.
    public func nonEmpty(_ key: String) -> String? {
        guard let value = string(key)?.trimmed, !value.isEmpty else { return nil }
        return value
    }

    /// Every element of the list `key`: each value split at commas, empty elements dropped.
    public func list(_ key: String) -> [String] {
        (values[key.lowercased()] ?? []).flatMap { $0.split(separator: ",").map { String($0).trimmed } }
            .filter { !$0.isEmpty }
    }

    /// An integer, nil when absent or not a number.
    public func int(_ key: String) -> Int? {
        nonEmpty(key).flatMap { Int($0) }
    }

    /// A 64-bit integer (ticks), nil when absent or not a number.
    public func int64(_ key: String) -> Int64? {
        nonEmpty(key).flatMap { Int64($0) }
    }

    /// A boolean as ASP.NET binds it (`true`/`false`, any case), nil when absent or neither.
    public func bool(_ key: String) -> Bool? {
        switch nonEmpty(key)?.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: return nil
        }
    }
}

/// Percent-decoding of URL parts (`%2F`, and `+` as a space in a query).
enum PercentDecoding {
    static func decode(_ text: String, plusIsSpace: Bool) -> String {
        guard text.contains("%") || (plusIsSpace && text.contains("+")) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]),
                let low = hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else if byte == UInt8(ascii: "+") && plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension String {
    var trimmed: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
