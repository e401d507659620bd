import Foundation

/// ISO 8601 in UTC to the whole second (`2026-11-20T21:30:00Z`): how play marks are stored in the index, sent to
/// Jellyfin (its `LegacyDateTimeModelBinder` reads it) and shown in report lines. Whole seconds make a date read back
/// from the server comparable with the one sent.
public enum WholeSecondTime {
    public static func string(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    public static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
