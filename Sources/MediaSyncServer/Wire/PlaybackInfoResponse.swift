import MediaSyncJSON

/// The answer of `/Items/{id}/PlaybackInfo` (`PlaybackInfoResponse`).
public struct PlaybackInfoResponse: Decodable, Sendable {
    /// `MediaSources`: every version with its streams (external subtitles included).
    public let mediaSources: [MediaSource]
    /// `PlaySessionId`.
    public let playSessionId: String?
    /// `ErrorCode`: `NotAllowed`, `NoCompatibleStream` or `RateLimitExceeded` when playback is refused.
    public let errorCode: String?

    /// Decodes `MediaSources`, `PlaySessionId` and `ErrorCode`.
    /// - Throws: `DecodingError` when the value is not an object or a media source is not an object.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: WireKey.self)
        mediaSources = try container.decodeIfPresent([MediaSource].self, forKey: WireKey("MediaSources")) ?? []
        playSessionId = try? container.decodeIfPresent(String.self, forKey: WireKey("PlaySessionId"))
        errorCode = (try? container.decodeIfPresent(JSONValue.self, forKey: WireKey("ErrorCode")))?
            .wireEnum(["NotAllowed", "NoCompatibleStream", "RateLimitExceeded"])
    }
}
