/// HTTP dates (RFC 9110 §5.6.7) as seconds since 1970, without DateFormatter.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

    /// Parses IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    public static func parse(_ text: String) -> Double? {
        let separators: Set<Character> = [" ", ",", "-", "\t"]
        let parts = text.split(whereSeparator: { separators.contains($0) }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var time: (Int, Int, Int)?
        for part in parts {
            if part.utf8.contains(UInt8(ascii: ":")) {
                let pieces = part.split(separator: ":").compactMap { Int($0) }
                guard pieces.count == 3 else { return nil }
                time = (pieces[0], pieces[1], pieces[2])
            } else if let index = months.firstIndex(of: String(part.prefix(3)).lowercased()), part.count >= 3,
                Int(part) == nil
            {
                month = index + 1
            } else if let number = Int(part) {
                // In all three forms the first number is the day and the second the year.
                if day == nil {
                    day = number
                } else if year == nil {
                    year = part.count <= 2 ? (number < 70 ? 2000 + number : 1900 + number) : number
                }
            }
        }
        guard let day, let month, let year, let time else { return nil }
        guard (0...23).contains(time.0), (0...59).contains(time.1), (0...60).contains(time.2) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Double(days * 86_400 + time.0 * 3_600 + time.1 * 60 + time.2)
    }

    /// Formats seconds since 1970 as an IMF-fixdate.
    public static func format(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondsOfDay = total - days * 86_400
        let (year, month, day) = civilFromDays(days)
        let weekday = weekdays[((days % 7) + 7) % 7]
        let monthName = months[month - 1].capitalized
        return
            "\(weekday), \(pad(day)) \(monthName) \(year) \(pad(secondsOfDay / 3_600)):\(pad(secondsOfDay / 60 % 60)):\(pad(secondsOfDay % 60)) GMT"
    }

    private static func pad(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension String {
    fileprivate var capitalized: String {
        prefix(1).uppercased() + dropFirst()
    }
}
