import Foundation
import MediaSyncCore
import MediaSyncJSON

/// The quality a selection is kept at: the original file, or the server's transcode within these caps
/// (recorded as Swiftfin does, `VersionInfo.isStatic: false`).
public struct Quality: Codable, Equatable, Hashable, Sendable {
    /// A preset's name (`1080p`, `720p`, `480p`), nil for explicit caps.
    public var preset: String?
    /// The highest total bit rate, bits per second.
    public var maxBitrate: Int
    /// The highest picture height, in lines; nil for no cap.
    public var maxHeight: Int?
    /// The video codec a transcode uses and a direct play must already have (`h264`, `hevc`).
    public var videoCodec: String
    /// The audio codec a transcode uses (`aac`, `mp3`, `ac3`).
    public var audioCodec: String
    /// The container of the file kept: `ts` (the segments joined as they come), or `mp4`/`mkv` (remuxed by ffmpeg).
    public var container: String

    public init(
        preset: String? = nil, maxBitrate: Int, maxHeight: Int? = nil, videoCodec: String = "h264",
        audioCodec: String = "aac", container: String = "ts"
    ) {
        self.preset = preset
        self.maxBitrate = maxBitrate
        self.maxHeight = maxHeight
        self.videoCodec = videoCodec.lowercased()
        self.audioCodec = audioCodec.lowercased()
        self.container = container.lowercased()
    }

    /// The presets: H.264 and AAC within a bit rate and a height (the original: no quality at all).
    public static let presets: [String: Quality] = [
        "1080p": Quality(preset: "1080p", maxBitrate: 8_000_000, maxHeight: 1080),
        "720p": Quality(preset: "720p", maxBitrate: 4_000_000, maxHeight: 720),
        "480p": Quality(preset: "480p", maxBitrate: 1_500_000, maxHeight: 480),
    ]

    /// The video codecs a transcode can ask for, and the audio codecs.
    public static let videoCodecs: Set<String> = ["h264", "hevc"]
    public static let audioCodecs: Set<String> = ["aac", "mp3", "ac3"]

    /// How the index marks a transcoded file (its `validator`: a transcode has no validator of its own).
    public static let transcodeValidatorPrefix = "transcode:"

    /// What the index records and a version's signature carries: a change of it fetches the version again.
    public var signature: String {
        "q:\(maxBitrate)/\(maxHeight.map(String.init) ?? "-")/\(videoCodec)/\(audioCodec)/\(container)"
    }

    /// For people: `720p`, or `3 Mbit/s h264/aac`.
    public var description: String {
        if let preset { return preset }
        let rate = Double(maxBitrate) / 1_000_000
        let height = maxHeight.map { " \($0)p" } ?? ""
        let kept = container == "ts" ? "" : " in \(container)"
        return String(format: "%g Mbit/s", rate) + "\(height) \(videoCodec)/\(audioCodec)\(kept)"
    }

    /// A bit rate people write: `3M`, `1500k`, `2.5M`, `4000000`. Nil for anything else.
    public static func bitrate(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let factors: [Character: Double] = ["k": 1e3, "m": 1e6, "g": 1e9]
        let (number, factor) =
            trimmed.last.flatMap { factors[$0] }.map { (trimmed.dropLast(), $0) } ?? (Substring(trimmed), 1)
        guard let value = Double(number), value > 0, value.isFinite, value * factor < 1e10 else { return nil }
        let bits = Int(value * factor)
        return bits >= 64_000 ? bits : nil
    }

    /// The size a transcode of `runtime` ticks is planned with: bit rate × runtime.
    public func estimatedBytes(runtimeTicks: Int64?) -> Int64? {
        guard let runtimeTicks, runtimeTicks > 0 else { return nil }
        return Int64(Double(maxBitrate) / 8 * Double(runtimeTicks) / 10_000_000)
    }

    /// The `DeviceProfile` Jellyfin's `StreamBuilder` decides with: direct play of a file already within the
    /// caps (its container, codecs, height and bit rate), else an HLS transcode to MPEG-TS segments.
    /// Subtitles are external files, never burned in.
    public var deviceProfile: JSONValue {
        var conditions: [JSONValue] = [
            .object([
                "Condition": .string("LessThanEqual"), "Property": .string("VideoBitrate"),
                "Value": .string(String(maxBitrate)), "IsRequired": .bool(true),
            ])
        ]
        if let maxHeight {
            conditions.append(
                .object([
                    "Condition": .string("LessThanEqual"), "Property": .string("Height"),
                    "Value": .string(String(maxHeight)), "IsRequired": .bool(true),
                ]))
        }
        let subtitles: [JSONValue] = ["srt", "subrip", "vtt", "ass", "ssa"].map {
            .object(["Format": .string($0), "Method": .string("External")])
        }
        return .object([
            "Name": .string("mediasync \(description)"),
            "MaxStreamingBitrate": .number(Double(maxBitrate)),
            "MaxStaticBitrate": .number(Double(maxBitrate)),
            "DirectPlayProfiles": .array([
                .object([
                    "Type": .string("Video"), "Container": .string("mp4,m4v,mkv,ts"),
                    "VideoCodec": .string(videoCodec), "AudioCodec": .string("aac,mp3,ac3"),
                ])
            ]),
            "TranscodingProfiles": .array([
                .object([
                    "Type": .string("Video"), "Container": .string("ts"), "Protocol": .string("hls"),
                    "Context": .string("Streaming"), "VideoCodec": .string(videoCodec),
                    "AudioCodec": .string(audioCodec), "MaxAudioChannels": .string("2"),
                    "BreakOnNonKeyFrames": .bool(false),
                ])
            ]),
            "CodecProfiles": .array([
                .object(["Type": .string("Video"), "Codec": .string(videoCodec), "Conditions": .array(conditions)])
            ]),
            "SubtitleProfiles": .array(subtitles),
        ])
    }
}
