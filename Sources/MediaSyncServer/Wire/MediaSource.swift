import MediaSyncJSON

/// One version of an item (`MediaSourceInfo`), from `MediaSources` or `PlaybackInfo`.
///
/// On Jellyfin each version is its own item: ``id`` is what `/Items/{id}/Download` takes.
public struct MediaSource: JSONObjectWrapper {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// Wraps an object as received (see ``JSONObjectWrapper``).
    public init(unchecked raw: JSONValue) {
        self.raw = raw
    }

    /// `Id`: the version's id (nil when the server omitted it; callers use the item id then).
    public var id: String? { raw["Id"]?.stringValue }
    /// `Name`, such as `Movie (2000) - 720p`.
    public var name: String? { raw["Name"]?.stringValue }
    /// `Path` on the server's disk.
    public var path: String? { raw["Path"]?.stringValue }
    /// `Container`: one name or a comma-separated list.
    public var container: String? { raw["Container"]?.stringValue }
    /// `Size` in bytes.
    public var size: Int64? { raw["Size"]?.intValue }
    /// `ETag` of the file: a change signals a new version to fetch (never sent as `If-Range`).
    public var etag: String? { raw["ETag"]?.stringValue }
    /// `Protocol`: `File`, `Http`, `Rtmp`, `Rtsp`, `Udp`, `Rtp` or `Ftp`.
    public var `protocol`: String? { raw["Protocol"]?.wireEnum(["File", "Http", "Rtmp", "Rtsp", "Udp", "Rtp", "Ftp"]) }
    /// `Type`: `Default`, `Grouping` or `Placeholder`.
    public var type: String? { raw["Type"]?.wireEnum(["Default", "Grouping", "Placeholder"]) }
    /// `RunTimeTicks` (100 ns units).
    public var runTimeTicks: Int64? { raw["RunTimeTicks"]?.intValue }
    /// `Bitrate` in bits per second.
    public var bitrate: Int64? { raw["Bitrate"]?.intValue }
    /// `MediaStreams`: video, audio and subtitle streams, embedded and external.
    public var mediaStreams: [MediaStream] { raw["MediaStreams"]?.arrayValue?.compactMap(MediaStream.init) ?? [] }
    /// `IsRemote`.
    public var isRemote: Bool? { raw["IsRemote"]?.boolValue }
    /// `SupportsDirectPlay`.
    public var supportsDirectPlay: Bool? { raw["SupportsDirectPlay"]?.boolValue }
    /// `SupportsDirectStream`.
    public var supportsDirectStream: Bool? { raw["SupportsDirectStream"]?.boolValue }
    /// `SupportsTranscoding`.
    public var supportsTranscoding: Bool? { raw["SupportsTranscoding"]?.boolValue }
    /// `DefaultAudioStreamIndex`.
    public var defaultAudioStreamIndex: Int? { raw["DefaultAudioStreamIndex"]?.wireInt }
    /// `DefaultSubtitleStreamIndex`.
    public var defaultSubtitleStreamIndex: Int? { raw["DefaultSubtitleStreamIndex"]?.wireInt }
}
