import MediaSyncJSON

/// The signed-in user's state for one item (`UserItemDataDto`).
public struct UserData: JSONObjectWrapper {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// Wraps an object as received (see ``JSONObjectWrapper``).
    public init(unchecked raw: JSONValue) {
        self.raw = raw
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
