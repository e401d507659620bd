import Foundation

/// Times people write on the command line.
public enum TimeText {
    /// A grace period: `0`, `90s`, `30m`, `12h`, `1d`, `2w` (a number alone is days). Nil for anything else.
    public static func duration(_ text: String) -> TimeInterval? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let last = trimmed.last else { return nil }
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        let (number, factor) = units[last].map { (trimmed.dropLast(), $0) } ?? (Substring(trimmed), 86_400)
        guard let value = Double(number), value >= 0, value.isFinite, value * factor < 1e10 else { return nil }
        return value * factor
    }

    /// A grace period for people: `1d`, `12h`, `90s`.
    public static func format(duration: TimeInterval) -> String {
        let seconds = Int64(duration)
        for (unit, size) in [("w", Int64(604_800)), ("d", 86_400), ("h", 3600), ("m", 60)]
        where seconds >= size && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    /// A position in a video: `1:02:30`, `62:30`, `90` (seconds), `1:02:30.5`. In 100 ns ticks; nil for anything
    /// else.
    public static func position(_ text: String) -> Int64? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0.0
        for (index, part) in parts.enumerated() {
            guard let value = Double(part), value >= 0, value.isFinite, !part.contains("e"), !part.contains("E")
            else { return nil }
            // Minutes and seconds after the first part stay under 60; a fraction only in the last.
            if index > 0, value >= 60 { return nil }
            if index < parts.count - 1, part.contains(".") { return nil }
            seconds = seconds * 60 + value
        }
        guard seconds < 1e8 else { return nil }
        return Int64((seconds * 10_000_000).rounded())
    }

    /// A position for people: `1:02:30`.
    public static func format(ticks: Int64) -> String {
        let total = max(0, ticks) / 10_000_000
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(hours):\(two(minutes)):\(two(seconds))"
    }
}
