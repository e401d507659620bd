import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// ISO 8601 in UTC to the whole second (`2026-11-20T21:30:00Z`): how play marks are stored in the index, sent to
/// Jellyfin (its `LegacyDateTimeModelBinder` reads it) and shown in report lines. Whole seconds make a date read back
/// from the server comparable with the one sent.
public enum WholeSecondTime {
    /// `ISO8601DateFormatter`'s text with `.withInternetDateTime`, put together from `gmtime_r` (making a formatter
    /// loads ICU's calendar each time: a sync dated each of its podcasts' checks so).
    public static func string(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        // Before 1600 (the Gregorian calendar began in 1582) Foundation counts Julian days, as `gmtime_r` does not.
        guard gmtime_r(&seconds, &parts) != nil, parts.tm_year + 1900 >= 1600, parts.tm_year + 1900 <= 9999 else {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: date)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        func digits(_ value: Int32, _ count: Int) {
            var divisor: Int32 = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
