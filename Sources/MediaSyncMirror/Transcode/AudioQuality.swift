import MediaSyncServer

/// The quality a selection's tracks are kept at: the original file when it already fits (its codec is the one asked
/// and its bit rate within the cap), else the server's transcode through its universal audio endpoint
/// (`UniversalAudioController`), recorded as `isStatic: false`.
///
/// The server caps lossy output at 128 kbit/s per channel (`EncodingHelper.GetAudioBitrateParam`, the same at every
/// tag from v10.8.13 L2121 to v10.11.11 L2718) and may encode VBR, so the bit rate is an upper bound, and a file's
/// size is known only once received.
public struct AudioQuality: Codable, Equatable, Hashable, Sendable {
    /// `aac`, `mp3` or `opus`.
    public var codec: String
    /// The highest bit rate, bits per second.
    public var maxBitrate: Int

    public init(codec: String, maxBitrate: Int) {
        self.codec = codec.lowercased()
        self.maxBitrate = maxBitrate
    }

    /// The codecs a transcode can ask for.
    public static let codecs: Set<String> = ["aac", "mp3", "opus"]

    /// The container the transcode is written in, which is also the file's extension: ffmpeg picks its muxer from it
    /// (the universal endpoint gives ffmpeg no `-f`), so it must suit the codec: ADTS for AAC, Ogg for Opus.
    public var container: String {
        switch codec {
        case "aac": return "aac"
        case "opus": return "ogg"
        default: return "mp3"
        }
    }

    /// What a track's signature carries: a change of it fetches the track again; an unchanged one costs no request.
    public var signature: String { "aq:\(codec)/\(maxBitrate)" }

    /// For people: `opus 128 kbit/s`.
    public var description: String { "\(codec) \(maxBitrate / 1000) kbit/s" }

    /// The containers a source of the asked codec comes in, as Jellyfin names them.
    static let containers: [String: Set<String>] = [
        "aac": ["aac", "m4a", "mp4", "m4b", "mov"], "mp3": ["mp3"], "opus": ["ogg", "opus", "webm", "oga"],
    ]

    /// Whether a version is kept as it is: its audio is the codec asked for, in a container of that codec, and its
    /// bit rate (the version's, else its audio stream's) is known and within the cap.
    public func fits(_ version: MediaSource) -> Bool {
        let audio = version.mediaStreams.first { $0.type == "Audio" }
        guard let codec = audio?.codec?.lowercased(), codec == self.codec,
            let container = version.container?.lowercased()
        else { return false }
        let names = container.split(separator: ",").map(String.init)
        guard names.contains(where: { AudioQuality.containers[self.codec]?.contains($0) ?? false }) else {
            return false
        }
        guard let bitrate = version.bitrate ?? audio?.raw["BitRate"]?.intValue else { return false }
        return bitrate <= Int64(maxBitrate)
    }

    /// The bytes a transcode of `ticks` is planned with: the cap the server applies (128 kbit/s per channel) or the
    /// asked rate, whichever is lower, times the length.
    public func estimatedBytes(runtimeTicks: Int64?, channels: Int?) -> Int64? {
        guard let runtimeTicks, runtimeTicks > 0 else { return nil }
        let rate = min(maxBitrate, 128_000 * max(1, channels ?? 2))
        return Int64(Double(rate) / 8 * Double(runtimeTicks) / 10_000_000)
    }
}
