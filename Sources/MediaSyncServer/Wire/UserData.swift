import MediaSyncCore

/// The signed-in user's state for one item (`UserItemDataDto`).
public struct UserData: Codable, Hashable, Sendable {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// Wraps a `UserData` object; nil when `raw` is not an object.
    public init?(_ raw: JSONValue) {
        guard raw.objectValue != nil else { return nil }
        self.raw = raw
    }

    /// Decodes any JSON object.
    /// - Throws: `DecodingError` when the value is not an object.
    public init(from decoder: Decoder) throws {
        raw = try WireObject.decode(from: decoder)
    }

    /// Encodes ``raw`` unchanged.
    public func encode(to encoder: Encoder) throws {
        try raw.encode(to: encoder)
    }

    /// `Played`.
    public var played: Bool? { raw["Played"]?.boolValue }
    /// `PlaybackPositionTicks`: where playback stopped (100 ns units).
    public var playbackPositionTicks: Int64? { raw["PlaybackPositionTicks"]?.intValue }
    /// `PlayCount`.
    public var playCount: Int? { raw["PlayCount"]?.wireInt }
    /// `IsFavorite`.
    public var isFavorite: Bool? { raw["IsFavorite"]?.boolValue }
    /// `UnplayedItemCount` of a folder (series, season).
    public var unplayedItemCount: Int? { raw["UnplayedItemCount"]?.wireInt }
    /// `LastPlayedDate` as sent.
    public var lastPlayedDate: String? { raw["LastPlayedDate"]?.stringValue }
    /// `Key`.
    public var key: String? { raw["Key"]?.stringValue }
}
