import Foundation

/// The HLS playlists of a Jellyfin transcode (`DynamicHlsController`): a master playlist naming one variant, and
/// its media playlist of MPEG-TS segments. Pure: text in, values or a reason out.
public enum HLSPlaylist {
    /// A variant of the master playlist (`#EXT-X-STREAM-INF`).
    public struct Variant: Sendable, Equatable {
        public var uri: String
        public var bandwidth: Int?
        /// `CODECS`, e.g. `avc1.640028`, `mp4a.40.2`.
        public var codecs: [String]
        /// `RESOLUTION` height.
        public var height: Int?

        public init(uri: String, bandwidth: Int?, codecs: [String], height: Int?) {
            self.uri = uri
            self.bandwidth = bandwidth
            self.codecs = codecs
            self.height = height
        }
    }

    /// One segment of a media playlist.
    public struct Segment: Sendable, Equatable {
        public var uri: String
        public var duration: Double
    }

    /// The most segments a transcode may have (a 10 h film in 3 s segments is 12,000).
    public static let maxSegments = 50_000

    /// The first variant of a master playlist.
    /// - Throws: ``SyncError`` (invalid input) when the text is no playlist or names no variant.
    public static func variant(ofMaster text: String) throws -> Variant {
        let lines = try playlistLines(text, what: "master playlist")
        for (index, line) in lines.enumerated() where line.hasPrefix("#EXT-X-STREAM-INF:") {
            guard let uri = lines[(index + 1)...].first(where: { !$0.hasPrefix("#") }) else { break }
            let attributes = self.attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))
            let height = attributes["RESOLUTION"].flatMap { $0.split(separator: "x").last.flatMap { Int($0) } }
            let codecs = (attributes["CODECS"] ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            return Variant(
                uri: uri, bandwidth: attributes["BANDWIDTH"].flatMap { Int($0) }, codecs: codecs, height: height)
        }
        throw SyncError.invalidInput("the master playlist names no stream (#EXT-X-STREAM-INF)")
    }

    /// The segments of a media playlist.
    /// - Throws: ``SyncError`` (invalid input) for no playlist, no segments, a live playlist (no
    ///   `#EXT-X-ENDLIST`: it would never end), or more than ``maxSegments``.
    public static func segments(ofMedia text: String) throws -> [Segment] {
        let lines = try playlistLines(text, what: "media playlist")
        var segments: [Segment] = []
        var duration: Double?
        var ended = false
        for line in lines {
            if line.hasPrefix("#EXTINF:") {
                let value = line.dropFirst("#EXTINF:".count).split(separator: ",", maxSplits: 1).first ?? ""
                duration = Double(value.trimmingCharacters(in: .whitespaces))
            } else if line == "#EXT-X-ENDLIST" {
                ended = true
            } else if !line.hasPrefix("#") {
                guard let seconds = duration, seconds > 0, seconds.isFinite else {
                    throw SyncError.invalidInput("the media playlist has a segment without a duration (#EXTINF)")
                }
                segments.append(Segment(uri: line, duration: seconds))
                duration = nil
                guard segments.count <= maxSegments else {
                    throw SyncError.invalidInput("the media playlist has more than \(maxSegments) segments")
                }
            }
        }
        guard ended else {
            throw SyncError.invalidInput("the media playlist is live (no #EXT-X-ENDLIST): it would never end")
        }
        guard !segments.isEmpty else { throw SyncError.invalidInput("the media playlist has no segments") }
        return segments
    }

    /// The segment URLs of the stream at `url`: a master playlist (its first variant, which `check` may refuse by
    /// throwing) or, unless `requireMaster`, a media playlist. Every URL stays on the playlist's server.
    /// - Parameter read: reads the text at a URL (`what`: "master playlist", "media playlist").
    /// - Throws: ``SyncError`` for a bad playlist or one that points to another host; what `read` and `check` throw.
    public static func segmentURLs(
        at url: String, requireMaster: Bool, read: (_ url: String, _ what: String) async throws -> String,
        check: (Variant) throws -> Void = { _ in }
    ) async throws -> [String] {
        var mediaURL = url
        var playlist = try await read(url, requireMaster ? "master playlist" : "playlist")
        if requireMaster || playlist.contains("#EXT-X-STREAM-INF") {
            let variant = try variant(ofMaster: playlist)
            try check(variant)
            guard let resolved = resolve(variant.uri, against: url) else {
                throw SyncError.invalidInput("the master playlist points to another host (\(variant.uri.prefix(80)))")
            }
            mediaURL = resolved
            playlist = try await read(mediaURL, "media playlist")
        }
        return try segments(ofMedia: playlist).map { segment in
            guard let resolved = resolve(segment.uri, against: mediaURL) else {
                throw SyncError.invalidInput("the media playlist points to another host (\(segment.uri.prefix(80)))")
            }
            return resolved
        }
    }

    /// `uri` resolved against the playlist's URL, when it stays on the same server (scheme, host and port).
    public static func resolve(_ uri: String, against base: String) -> String? {
        guard let baseURL = URL(string: base), let url = URL(string: uri, relativeTo: baseURL)?.absoluteURL,
            url.scheme?.lowercased() == baseURL.scheme?.lowercased(),
            url.host?.lowercased() == baseURL.host?.lowercased(), url.port == baseURL.port
        else { return nil }
        return url.absoluteString
    }

    /// Why the variant does not honour the quality (its codecs or its height), nil when it does. A server that
    /// may not transcode for this user copies the original instead (`EncodingHelper.TryStreamCopy`).
    public static func refusal(_ variant: Variant, quality: Quality) -> String? {
        let video = quality.videoCodec == "hevc" ? ["hvc1", "hev1"] : ["avc1", "avc3"]
        let videoCodecs = variant.codecs.filter { codec in
            ["avc1", "avc3", "hvc1", "hev1", "vp09", "av01", "dvh1", "dvhe"].contains {
                codec.lowercased().hasPrefix($0)
            }
        }
        if let found = videoCodecs.first, !video.contains(where: { found.lowercased().hasPrefix($0) }) {
            return "the server sends \(found) video, not \(quality.videoCodec)"
        }
        if let maxHeight = quality.maxHeight, let height = variant.height, height > maxHeight {
            return "the server sends \(height) lines, more than \(maxHeight)"
        }
        if let bandwidth = variant.bandwidth, bandwidth > quality.maxBitrate + quality.maxBitrate / 2 {
            return "the server sends \(bandwidth / 1000) kbit/s, more than \(quality.maxBitrate / 1000)"
        }
        return nil
    }

    private static func playlistLines(_ text: String, what: String) throws -> [String] {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard lines.first == "#EXTM3U" else {
            throw SyncError.invalidInput("the \(what) is not an HLS playlist (it does not start with #EXTM3U)")
        }
        return lines
    }

    /// `KEY=value,KEY="quoted, value"` attribute lists.
    static func attributes(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var key = ""
        var value = ""
        var inKey = true
        var quoted = false
        for character in text {
            if inKey {
                if character == "=" { inKey = false } else if character != "," { key.append(character) }
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                result[key.trimmingCharacters(in: .whitespaces)] = value
                (key, value, inKey) = ("", "", true)
            } else {
                value.append(character)
            }
        }
        if !key.isEmpty { result[key.trimmingCharacters(in: .whitespaces)] = value }
        return result
    }
}
