import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// IMF-fixdate formatting and parsing (`Tue, 14 Nov 2023 22:13:20 GMT`), thread-safe and locale-free.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Formats `date` (truncated to whole seconds) as an IMF-fixdate.
    static func format(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return
            "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// Parses an IMF-fixdate (also accepts RFC 850 and asctime forms loosely). Returns nil if it is not a date.
    static func parse(_ text: String) -> Date? {
        let cleaned = text.replacingOccurrences(of: ",", with: " ").replacingOccurrences(of: "-", with: " ")
        let tokens = cleaned.split(separator: " ").map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var clock: [Int]?
        for token in tokens {
            if let m = months.firstIndex(where: { $0.lowercased() == token.lowercased() }) {
                month = m
            } else if token.contains(":") {
                let pieces = token.split(separator: ":").compactMap { Int($0) }
                if pieces.count == 3 { clock = pieces }
            } else if let number = Int(token) {
                if token.count == 4 {
                    year = number
                } else if day == nil {
                    day = number
                } else if token.count == 2 {
                    year = 1900 + number + (number < 70 ? 100 : 0)
                }
            }
        }
        guard let day, let month, let year, let clock else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(clock[0])
        parts.tm_min = Int32(clock[1])
        parts.tm_sec = Int32(clock[2])
        let t = timegm(&parts)
        return Date(timeIntervalSince1970: TimeInterval(t))
    }

    /// Whole seconds since the epoch (HTTP dates have second precision).
    static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
