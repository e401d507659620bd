import Foundation
import MediaSyncCore
import MediaSyncJSON

extension HTTPResponse {
    static func bytes(_ bytes: [UInt8], contentType: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", contentType)], body: bytes)
    }
}

/// What the test server does with transcodes: its knobs (set by tests) and the encodings it runs.
public final class TranscodeState: @unchecked Sendable {
    private let lock = NSLock()
    private var _active: Set<String> = []
    private var _segmentDelay: Double = 0
    private var _segmentBytes = 188 * 16
    private var _live = false
    private var _playlistHost: String?
    private var _realSegments: [[UInt8]]?

    /// Play sessions with an encoding running (started by a playlist request, stopped by
    /// `DELETE /Videos/ActiveEncodings`): what a real server would leave behind in its transcode folder.
    public var active: Set<String> { lock.withLock { _active } }
    /// Seconds each segment answer waits (for progress and kills).
    public var segmentDelay: Double {
        get { lock.withLock { _segmentDelay } }
        set { lock.withLock { _segmentDelay = max(0, newValue) } }
    }
    /// Bytes per segment (whole 188-byte MPEG-TS packets).
    public var segmentBytes: Int {
        get { lock.withLock { _segmentBytes } }
        set { lock.withLock { _segmentBytes = max(188, newValue / 188 * 188) } }
    }
    /// A lying server: the media playlist never ends (no `#EXT-X-ENDLIST`).
    public var live: Bool {
        get { lock.withLock { _live } }
        set { lock.withLock { _live = newValue } }
    }
    /// A lying server: segment URIs point to this other origin (`http://host:port`).
    public var playlistHost: String? {
        get { lock.withLock { _playlistHost } }
        set { lock.withLock { _playlistHost = newValue } }
    }

    /// Real MPEG-TS segments to serve (made by ffmpeg in a test) instead of generated ones: segment i is
    /// `realSegments[i % count]`. For tests that hand the transcode to a real program (a remux).
    public var realSegments: [[UInt8]]? {
        get { lock.withLock { _realSegments } }
        set { lock.withLock { _realSegments = newValue } }
    }

    func start(_ session: String) { _ = lock.withLock { _active.insert(session) } }
    func stop(_ session: String) { _ = lock.withLock { _active.remove(session) } }
}

/// Transcoding, modelled from Jellyfin 10.10.7 / 10.11.11 (see `../shared/jellyfin-api/SERVER-FACTS.md`,
/// "Transcoding"): `PlaybackInfo` with a `DeviceProfile` decides direct play or an HLS transcode
/// (`MediaInfoHelper.SetDeviceSpecificData`, `StreamBuilder`), `DynamicHlsController` serves the master and media
/// playlists and MPEG-TS segments, `HlsSegmentController` stops encodings.
extension TestServer {
    /// The source's video stream as the test library describes it (`JellyfinDTO.mediaStreams`): H.264 1920×1080,
    /// AC-3 audio, in the source's container.
    static let sourceVideo = (codec: "h264", height: 1080, width: 1920, audio: "ac3")

    /// Whether `profile` lets the source play as it is (`StreamBuilder`): its bit rate within
    /// `MaxStreamingBitrate` (an unknown one counts as 40 Mbit/s, L1595/L1607), a DirectPlayProfile taking its
    /// container and codecs, and every required CodecProfile condition holding.
    /// ``directPlays(_:bitrate:profile:)`` for a `DeviceProfile` given as JSON bytes (for table tests).
    public static func directPlays(_ source: TestMediaSource, bitrate: Int64, profileJSON: [UInt8]) -> Bool {
        guard let profile = JSONValue.parse(profileJSON) else { return false }
        return directPlays(source, bitrate: bitrate, profile: profile)
    }

    static func directPlays(_ source: TestMediaSource, bitrate: Int64, profile: JSONValue) -> Bool {
        if case .number(let limit)? = profile.field("MaxStreamingBitrate"), Double(bitrate) > limit { return false }
        func list(_ value: JSONValue?) -> [String] {
            (value?.stringValue ?? "").lowercased().split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
        guard case .array(let directPlay)? = profile.field("DirectPlayProfiles") else { return false }
        let container = source.container.lowercased()
        let taken = directPlay.contains { entry in
            let containers = list(entry.field("Container"))
            let videos = list(entry.field("VideoCodec"))
            let audios = list(entry.field("AudioCodec"))
            return (entry.field("Type")?.stringValue ?? "Video") == "Video"
                && (containers.isEmpty
                    || containers.contains { container.split(separator: ",").map(String.init).contains($0) })
                && (videos.isEmpty || videos.contains(sourceVideo.codec))
                && (audios.isEmpty || audios.contains(sourceVideo.audio))
        }
        guard taken else { return false }
        guard case .array(let codecProfiles)? = profile.field("CodecProfiles") else { return true }
        for codecProfile in codecProfiles where codecProfile.field("Type")?.stringValue == "Video" {
            let codecs = list(codecProfile.field("Codec"))
            guard codecs.isEmpty || codecs.contains(sourceVideo.codec) else { continue }
            guard case .array(let conditions)? = codecProfile.field("Conditions") else { continue }
            for condition in conditions {
                let value = Int64(condition.field("Value")?.stringValue ?? "") ?? Int64.max
                let actual: Int64
                switch condition.field("Property")?.stringValue {
                case "Height": actual = Int64(sourceVideo.height)
                case "Width": actual = Int64(sourceVideo.width)
                case "VideoBitrate": actual = bitrate
                default: continue
                }
                let holds: Bool
                switch condition.field("Condition")?.stringValue {
                case "LessThanEqual": holds = actual <= value
                case "GreaterThanEqual": holds = actual >= value
                case "Equals": holds = actual == value
                default: holds = true
                }
                if !holds, condition.field("IsRequired") != .bool(false) { return false }
            }
        }
        return true
    }

    /// The `MediaSources` entry of a PlaybackInfo answer to a `DeviceProfile`: `SupportsDirectPlay`, and when it
    /// is false the HLS `TranscodingUrl` (`MediaInfoHelper` L313; the token as `api_key=` in 10.10, `ApiKey=` with
    /// a query starting `?&` in 10.11, `StreamInfo.ToUrl`).
    func applyingProfile(
        _ dto: JSONValue, source: TestMediaSource, item: TestItem, profile: JSONValue, playSession: String,
        request: RecordedRequest
    ) -> JSONValue {
        let bitrate: Int64 =
            source.runTimeTicks > 0 ? Int64(Double(source.size) * 8 / (Double(source.runTimeTicks) / 10_000_000)) : 0
        // The test library's sources are small; their stated bit rate is what a 1080p remux would have.
        let stated = max(bitrate, 20_000_000)
        if TestServer.directPlays(source, bitrate: stated, profile: profile) {
            return dto.setting("SupportsDirectPlay", .bool(true)).setting("SupportsTranscoding", .bool(true))
        }
        var transcoding: [String: String] = [:]
        if case .array(let profiles)? = profile.field("TranscodingProfiles"),
            let video = profiles.first(where: { $0["Type"]?.stringValue == "Video" })
        {
            transcoding["VideoCodec"] = video.field("VideoCodec")?.stringValue?.split(separator: ",").first.map(
                String.init)
            transcoding["AudioCodec"] = video.field("AudioCodec")?.stringValue?.split(separator: ",").first.map(
                String.init)
        }
        var maxHeight: String?
        if case .array(let codecProfiles)? = profile.field("CodecProfiles") {
            for codecProfile in codecProfiles {
                guard case .array(let conditions)? = codecProfile.field("Conditions") else { continue }
                for condition in conditions where condition.field("Property")?.stringValue == "Height" {
                    maxHeight = condition.field("Value")?.stringValue
                }
            }
        }
        var limit = "8000000"
        if let value = profile.field("MaxStreamingBitrate")?.intValue { limit = String(value) }
        var query: [(String, String)] = [
            ("DeviceId", TestServer.authorizationParameters(request.headers["authorization"])?["deviceid"] ?? ""),
            ("MediaSourceId", source.id), ("VideoCodec", transcoding["VideoCodec"] ?? "h264"),
            ("AudioCodec", transcoding["AudioCodec"] ?? "aac"), ("AudioStreamIndex", "1"),
            ("VideoBitrate", String((Int64(limit) ?? 8_000_000) - 192_000)), ("AudioBitrate", "192000"),
            ("PlaySessionId", playSession), ("SegmentContainer", "ts"), ("TranscodingMaxAudioChannels", "2"),
        ]
        if let maxHeight { query.append(("MaxHeight", maxHeight)) }
        let token = library.accessToken
        let encoded = query.map { "\($0.0)=\(TestServer.percentEncode($0.1))" }.joined(separator: "&")
        let url: String
        switch self.profile {
        case .v10_11: url = "/videos/\(item.id)/master.m3u8?&\(encoded)&ApiKey=\(token)"
        default: url = "/videos/\(item.id)/master.m3u8?\(encoded)&api_key=\(token)"
        }
        return dto.setting("SupportsDirectPlay", .bool(false)).setting("SupportsDirectStream", .bool(false))
            .setting("SupportsTranscoding", .bool(true)).setting("TranscodingUrl", .string(url))
            .setting("TranscodingSubProtocol", .string("hls")).setting("TranscodingContainer", .string("ts"))
    }

    static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }

    /// The HLS routes and `DELETE /Videos/ActiveEncodings`; nil when the request is none of them.
    func transcodeResponse(_ request: RecordedRequest) -> HTTPResponse? {
        let lower = request.path.lowercased().split(separator: "/").map(String.init)
        if lower == ["videos", "activeencodings"] {
            guard request.method == "DELETE" else { return .empty(405) }
            // `HlsSegmentController.StopEncodingProcess` (L108–117): 204, the session's jobs killed.
            if let session = request.queryValue("playSessionId") { transcodes.stop(session) }
            return .empty(204)
        }
        let isPlaylist = lower.count == 3 && (lower[2] == "master.m3u8" || lower[2] == "main.m3u8")
        let isSegment = lower.count == 5 && lower[2] == "hls1"
        guard lower.first == "videos", isPlaylist || isSegment else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else { return .empty(405) }
        let library = self.library
        guard caller(request, library: library) != .anonymous else { return .empty(401) }
        let itemId = TestServer.normalizeID(lower[1])
        guard let item = library.item(withId: itemId),
            let source = item.mediaSources.first(where: {
                $0.id == TestServer.normalizeID(request.queryValue("MediaSourceId") ?? "")
            }) ?? item.mediaSources.first
        else { return .empty(404) }
        let session = request.queryValue("PlaySessionId") ?? ""
        // The user may not transcode: the stream copies the original video (`EncodingHelper.TryStreamCopy`,
        // 10.11.11 L7129), and its playlist says so.
        let copies = !library.userMayTranscode
        let codec =
            copies ? "avc1.640028" : (request.queryValue("VideoCodec") == "hevc" ? "hvc1.1.6.L120.90" : "avc1.64001f")
        let height =
            copies ? TestServer.sourceVideo.height : min(Int(request.queryValue("MaxHeight") ?? "") ?? 1080, 1080)
        let width = height * 16 / 9
        // Segments are 3 s for an encode, 6 s for a copy (`DynamicHlsPlaylistGenerator`, `StreamState` L74–104).
        let segmentSeconds = copies ? 6.0 : 3.0
        let runtime = Double(source.runTimeTicks) / 10_000_000
        let count = max(1, Int((runtime / segmentSeconds).rounded(.up)))
        let query = request.query.filter { $0.key.lowercased() != "api_key" && $0.key.lowercased() != "apikey" }
            .sorted { $0.key < $1.key }.map { "\($0.key)=\(TestServer.percentEncode($0.value))" }.joined(separator: "&")
        switch lower.count == 3 ? lower[2] : "" {
        case "master.m3u8":
            guard request.queryValue("MediaSourceId") != nil else {
                return .text("MediaSourceId is required", status: 400)
            }
            transcodes.start(session)
            let bandwidth = copies ? 20_000_000 : Int(request.queryValue("VideoBitrate") ?? "") ?? 4_000_000
            return .text(
                """
                #EXTM3U
                #EXT-X-STREAM-INF:BANDWIDTH=\(bandwidth + 192_000),AVERAGE-BANDWIDTH=\(bandwidth),CODECS="\(codec),mp4a.40.2",RESOLUTION=\(width)x\(height),FRAME-RATE=23.976
                main.m3u8?\(query)

                """, status: 200, contentType: "application/vnd.apple.mpegurl")
        case "main.m3u8":
            transcodes.start(session)
            var lines = [
                "#EXTM3U", "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-VERSION:3",
                "#EXT-X-TARGETDURATION:\(Int(segmentSeconds))", "#EXT-X-MEDIA-SEQUENCE:0",
            ]
            let host = transcodes.playlistHost
            for index in 0..<count {
                let length = min(segmentSeconds, runtime - Double(index) * segmentSeconds)
                lines.append(String(format: "#EXTINF:%.6f, nodesc", max(0.04, length)))
                let uri =
                    "hls1/main/\(index).ts?\(query)&runtimeTicks=\(Int64(Double(index) * segmentSeconds * 1e7))"
                    + "&actualSegmentLengthTicks=\(Int64(max(0.04, length) * 1e7))"
                lines.append(host.map { "\($0)/videos/\(item.id)/\(uri)" } ?? uri)
            }
            if !transcodes.live { lines.append("#EXT-X-ENDLIST") }
            return .text(
                lines.joined(separator: "\n") + "\n", status: 200, contentType: "application/vnd.apple.mpegurl")
        default:
            guard lower.count == 5, lower[2] == "hls1", lower[3] == "main", lower[4].hasSuffix(".ts"),
                let index = Int(lower[4].dropLast(3)), index >= 0, index < count
            else { return .empty(404) }
            transcodes.start(session)
            let delay = transcodes.segmentDelay
            if delay > 0 { usleep(UInt32(min(delay, 30) * 1_000_000)) }
            if let real = transcodes.realSegments, !real.isEmpty {
                return .bytes(real[index % real.count], contentType: "video/mp2t")
            }
            return .bytes(
                TestServer.segment(
                    source: source.id, profile: "\(codec)/\(height)/\(request.queryValue("VideoBitrate") ?? "")",
                    index: index, bytes: transcodes.segmentBytes),
                contentType: "video/mp2t")
        }
    }

    /// A segment's bytes: 188-byte MPEG-TS packets (sync byte 0x47) of bytes derived from the source, the profile
    /// and the index, so the same transcode always gives the same file.
    public static func segment(source: String, profile: String, index: Int, bytes: Int) -> [UInt8] {
        var out = SplitMix64.bytes(
            seed: SplitMix64.hash("\(source)|\(profile)|\(index)"), count: max(188, bytes / 188 * 188))
        var offset = 0
        while offset < out.count {
            out[offset] = 0x47
            offset += 188
        }
        return out
    }
}
