import Foundation

/// The `mediasync podcast parse --json` output.
public enum FeedJSON {
    /// Encodes a feed as pretty-printed JSON with sorted keys, absent values omitted, and dates in ISO 8601 UTC
    /// (`"2024-01-02T03:04:05Z"`). Empty `transcripts`, `funding` and `duplicateGUIDs` arrays are omitted;
    /// `episodes` is always present.
    /// - Throws: `EncodingError` (not expected for values produced by ``FeedParser``).
    public static func encode(_ feed: Feed) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(feed), as: UTF8.self)
    }
}
