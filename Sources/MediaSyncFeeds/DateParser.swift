import Foundation

/// Parses feed dates without a `DateFormatter`: RFC 822/1123 (`pubDate`) with the variants found in the wild,
/// and ISO 8601 / RFC 3339 (Atom, `dc:date`).
///
/// RFC 822 leniencies: optional weekday, full month or weekday names, two-digit years (00–49 → 20xx, 50–99 → 19xx),
/// missing seconds, extra whitespace and commas, zones `GMT`/`UT`/`UTC`/`Z`, North-American zones (`EST`, `PDT`…),
/// a few common others (`CET`, `BST`, `JST`…), `+0000`, `+00:00`, and no zone at all (taken as UTC).
enum DateParser {
    static func date(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters()
        guard let first = trimmed.utf8.first else { return nil }
        if first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"), trimmed.utf8.count >= 10,
            Array(trimmed.utf8)[4] == UInt8(ascii: "-")
        {
            return iso8601(trimmed)
        }
        return rfc822(trimmed)
    }

    /// ``date(_:)`` of UTF-8 bytes.
    static func date(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        let trimmed = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if isDigit(trimmed[0]), trimmed.count >= 10, trimmed[4] == UInt8(ascii: "-") {
            return iso8601(String(decoding: trimmed, as: UTF8.self))
        }
        return rfc822(bytes: trimmed)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// Three lowercased letters packed into an integer, so names compare without allocating.
    private static func key(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt32 {
        var value: UInt32 = 0
        for index in range.prefix(4) { value = value << 8 | UInt32(bytes[index] | 0x20) }
        return value
    }

    private static func key(_ name: StaticString) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<min(name.utf8CodeUnitCount, 4) { value = value << 8 | UInt32(name.utf8Start[index]) }
        return value
    }

    private static let months: [UInt32] = [
        key("jan"), key("feb"), key("mar"), key("apr"), key("may"), key("jun"),
        key("jul"), key("aug"), key("sep"), key("oct"), key("nov"), key("dec"),
    ]
    private static let weekdays: [UInt32] = [
        key("mon"), key("tue"), key("wed"), key("thu"), key("fri"), key("sat"), key("sun"),
    ]
    private static let zones: [UInt32: Int] = [
        key("gmt"): 0, key("ut"): 0, key("utc"): 0, key("z"): 0,
        key("est"): -5, key("edt"): -4, key("cst"): -6, key("cdt"): -5, key("mst"): -7, key("mdt"): -6,
        key("pst"): -8, key("pdt"): -7, key("akst"): -9, key("akdt"): -8, key("hst"): -10, key("ast"): -4,
        key("adt"): -3, key("nst"): -3, key("ndt"): -2, key("wet"): 0, key("west"): 1, key("bst"): 1,
        key("cet"): 1, key("cest"): 2, key("met"): 1, key("mest"): 2, key("eet"): 2, key("eest"): 3,
        key("msk"): 3, key("ist"): 5, key("jst"): 9, key("kst"): 9, key("hkt"): 8, key("awst"): 8,
        key("acst"): 9, key("aest"): 10, key("aedt"): 11, key("nzst"): 12, key("nzdt"): 13,
    ]

    static func rfc822(_ text: String) -> Date? {
        var copy = text
        return copy.withUTF8 { rfc822(bytes: $0) }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    private static func rfc822(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var day: Int?
        var month: Int?
        var year: Int?
        var time: (Int, Int, Int)?
        var offset = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == UInt8(ascii: ",") || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            }
            let start = index
            while index < bytes.count, bytes[index] != 0x20, bytes[index] != UInt8(ascii: ","), bytes[index] != 0x09,
                bytes[index] != 0x0A, bytes[index] != 0x0D
            {
                index += 1
            }
            let token = start..<index
            let first = bytes[start]
            if first == UInt8(ascii: "+") || first == UInt8(ascii: "-"), token.count > 1 {
                if let zone = parseOffset(bytes, (start + 1)..<index, negative: first == UInt8(ascii: "-")) {
                    offset = zone
                }
            } else if token.contains(where: { bytes[$0] == UInt8(ascii: ":") }) {
                if time == nil { time = parseTime(bytes, token) }
            } else if token.allSatisfy({ isDigit(bytes[$0]) }) {
                guard token.count <= 4 else { continue }
                let number = token.reduce(0) { $0 * 10 + Int(bytes[$1] - 0x30) }
                if day == nil, number >= 1, number <= 31, token.count <= 2 {
                    day = number
                } else if year == nil {
                    year = token.count <= 2 ? (number < 50 ? 2000 + number : 1900 + number) : number
                }
            } else if token.allSatisfy({ isLetter(bytes[$0]) }) {
                let prefix = key(bytes, start..<min(start + 3, index))
                if month == nil, token.count >= 3, let found = months.firstIndex(of: prefix) {
                    month = found + 1
                } else if token.count >= 3, weekdays.contains(prefix) {
                    continue
                } else if token.count <= 4, let hours = zones[key(bytes, token)] {
                    offset = hours * 3600
                }
            }
        }
        guard let day, let month, let year else { return nil }
        let (hour, minute, second) = time ?? (0, 0, 0)
        return makeDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// `hh:mm` or `hh:mm:ss`, seconds possibly with a fraction (dropped).
    private static func parseTime(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> (Int, Int, Int)? {
        // Up to three values, kept in locals (no array per date).
        var values = (0, 0, 0)
        var count = 0
        var current: Int?
        var inFraction = false
        for index in range {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") {
                guard let value = current, !inFraction, count < 3 else { return nil }
                switch count {
                case 0: values.0 = value
                case 1: values.1 = value
                default: values.2 = value
                }
                count += 1
                current = nil
            } else if byte == UInt8(ascii: "."), count == 2 {
                inFraction = true
            } else if isDigit(byte) {
                if !inFraction {
                    // `03:4444444444444444444444404:05` overflowed Int (found by libFuzzer); no part is over 60.
                    guard (current ?? 0) < 1_000 else { return nil }
                    current = (current ?? 0) * 10 + Int(byte - 0x30)
                }
            } else {
                return nil
            }
        }
        guard let last = current, count < 3 else { return nil }
        switch count {
        case 0: values.0 = last
        case 1: values.1 = last
        default: values.2 = last
        }
        count += 1
        guard count == 2 || count == 3, values.0 < 24, values.1 < 60 else { return nil }
        let second = count == 3 ? values.2 : 0
        guard second <= 60 else { return nil }
        return (values.0, values.1, second)
    }

    /// `hhmm`, `hh:mm` or `hh` after the sign.
    private static func parseOffset(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, negative: Bool) -> Int? {
        var digits = (0, 0, 0, 0)
        var count = 0
        for index in range where bytes[index] != UInt8(ascii: ":") {
            guard isDigit(bytes[index]), count < 4 else { return nil }
            let digit = Int(bytes[index] - 0x30)
            switch count {
            case 0: digits.0 = digit
            case 1: digits.1 = digit
            case 2: digits.2 = digit
            default: digits.3 = digit
            }
            count += 1
        }
        guard count == 4 || count == 2 else { return nil }
        let hours = digits.0 * 10 + digits.1
        let minutes = count == 4 ? digits.2 * 10 + digits.3 : 0
        guard hours <= 14, minutes < 60 else { return nil }
        return (negative ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    private static func parseOffset(_ text: String) -> Int? {
        guard let sign = text.utf8.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        var copy = text
        return copy.withUTF8 { parseOffset($0, 1..<$0.count, negative: sign == UInt8(ascii: "-")) }
    }

    /// `YYYY-MM-DD`, optionally followed by `T` or a space, `hh:mm[:ss[.fff]]` and `Z`, `±hh:mm`, `±hhmm` or `±hh`.
    static func iso8601(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            bytes[7] == UInt8(ascii: "-")
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var offset = 0
        var index = 10
        if index < bytes.count,
            bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: "t")
                || bytes[index] == UInt8(ascii: " ")
        {
            guard let h = number(index + 1, 2), let m = number(index + 4, 2) else { return nil }
            hour = h
            minute = m
            index += 6
            if index < bytes.count, bytes[index] == UInt8(ascii: ":"), let s = number(index + 1, 2) {
                second = s
                index += 3
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
                index += 1
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                    index += 1
                }
            }
            if index < bytes.count {
                let zone = String(decoding: bytes[index...], as: UTF8.self).trimmingCharacters()
                if zone == "Z" || zone == "z" {
                    offset = 0
                } else if let parsed = parseOffset(zone) {
                    offset = parsed
                } else if !zone.isEmpty {
                    return nil
                }
            }
        }
        return makeDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// Days from civil (Howard Hinnant's algorithm), so no calendar object is needed.
    private static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int)
        -> Date?
    {
        guard (1...12).contains(month), (1...31).contains(day), (1...9999).contains(year) else { return nil }
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
