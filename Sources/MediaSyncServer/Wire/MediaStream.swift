import MediaSyncJSON

/// One stream of a version (`MediaStream`): video, audio, subtitle…
public struct MediaStream: JSONObjectWrapper {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// The names of `MediaStreamType`, in the order of their numeric values.
    static let typeNames = ["Audio", "Video", "Subtitle", "EmbeddedImage", "Data", "Lyric"]
    /// The names of `SubtitleDeliveryMethod`, in the order of their numeric values.
    static let deliveryMethodNames = ["Encode", "Embed", "External", "Hls", "Drop"]

    /// Wraps an object as received (see ``JSONObjectWrapper``).
    public init(unchecked raw: JSONValue) {
        self.raw = raw
    }

    /// `Type` as a name: `Audio`, `Video`, `Subtitle`, `EmbeddedImage`, `Data` or `Lyric`.
    ///
    /// The live server sends the name; Jellyfin's own test data sends the number (0 Audio, 1 Video,
    /// 2 Subtitle, 3 EmbeddedImage, 4 Data, 5 Lyric), which is mapped to the name here.
    public var type: String? { raw["Type"]?.wireEnum(MediaStream.typeNames) }
    /// `Index` within the version.
    public var index: Int? { raw["Index"]?.wireInt }
    /// `Codec`, such as `h264` or `srt`.
    public var codec: String? { raw["Codec"]?.stringValue }
    /// `Language` (ISO 639-2, such as `eng`).
    public var language: String? { raw["Language"]?.stringValue }
    /// `Title`.
    public var title: String? { raw["Title"]?.stringValue }
    /// `DisplayTitle`, such as `En - Default`.
    public var displayTitle: String? { raw["DisplayTitle"]?.stringValue }
    /// `IsExternal`: a separate file beside the media (an external subtitle).
    public var isExternal: Bool? { raw["IsExternal"]?.boolValue }
    /// `IsDefault`.
    public var isDefault: Bool? { raw["IsDefault"]?.boolValue }
    /// `IsForced`.
    public var isForced: Bool? { raw["IsForced"]?.boolValue }
    /// `IsTextSubtitleStream`.
    public var isTextSubtitleStream: Bool? { raw["IsTextSubtitleStream"]?.boolValue }
    /// `SupportsExternalStream`: the server can serve it on its own (`/Videos/…/Subtitles/…`).
    public var supportsExternalStream: Bool? { raw["SupportsExternalStream"]?.boolValue }
    /// `DeliveryMethod`: `Encode`, `Embed`, `External`, `Hls` or `Drop`.
    public var deliveryMethod: String? { raw["DeliveryMethod"]?.wireEnum(MediaStream.deliveryMethodNames) }
    /// `DeliveryUrl`, a server-relative URL.
    public var deliveryURL: String? { raw["DeliveryUrl"]?.stringValue }
    /// `Path` of an external stream on the server's disk.
    public var path: String? { raw["Path"]?.stringValue }
    /// Whether this is a subtitle stream.
    public var isSubtitle: Bool { type == "Subtitle" }
}
