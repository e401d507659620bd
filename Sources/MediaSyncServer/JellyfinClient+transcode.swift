import Foundation
import MediaSyncJSON

/// What the server offers for one version under a `DeviceProfile` (`PlaybackInfo`).
public struct TranscodeOffer: Sendable, Equatable {
    /// The original already fits: download it as it is.
    public var directPlay: Bool
    /// The HLS master playlist's URL (absolute, the token taken out: it goes in the header).
    public var transcodingURL: String?
    /// `TranscodingContainer` (`ts`).
    public var container: String?
    /// `PlaySessionId`: what `DELETE /Videos/ActiveEncodings` stops.
    public var playSessionId: String?

    public init(directPlay: Bool, transcodingURL: String?, container: String?, playSessionId: String?) {
        self.directPlay = directPlay
        self.transcodingURL = transcodingURL
        self.container = container
        self.playSessionId = playSessionId
    }
}

extension JellyfinClient {
    /// Asks the server what it would send of a version under `profile` (`POST /Items/{id}/PlaybackInfo`, the
    /// profile as `DeviceProfile` in the body; default subtitles are never burned in: `SubtitleStreamIndex=-1`).
    /// - Throws: ``JellyfinError`` (``JellyfinError/Kind/forbidden`` for `NotAllowed`, ``JellyfinError/Kind/
    ///   requestRejected`` for `NoCompatibleStream` or an answer with neither direct play nor a transcode).
    public func playbackOffer(itemId: String, mediaSourceId: String, profile: JSONValue, maxBitrate: Int)
        async throws -> TranscodeOffer
    {
        let userId = try requireUserId()
        let segment = try JellyfinID.pathSegment(itemId, role: "item id")
        var body: [UInt8] = []
        JSONWriter.write(.object(["DeviceProfile": profile]), indent: 0, into: &body)
        let call = Call(
            method: "POST", path: "/Items/\(segment)/PlaybackInfo",
            query: [
                ("userId", userId), ("mediaSourceId", try JellyfinID.validate(mediaSourceId, role: "media source id")),
                ("maxStreamingBitrate", String(maxBitrate)), ("enableDirectPlay", "true"),
                ("enableDirectStream", "false"), ("enableTranscoding", "true"), ("allowVideoStreamCopy", "true"),
                ("allowAudioStreamCopy", "true"), ("subtitleStreamIndex", "-1"), ("autoOpenLiveStream", "false"),
            ],
            body: body, action: "ask the server for a transcode", resource: "item \(itemId)")
        let info = try await fetch(PlaybackInfoResponse.self, call)
        if let code = info.errorCode {
            if code == "NotAllowed" {
                throw JellyfinError(.forbidden, "this user may not play item \(itemId) (PlaybackInfo: NotAllowed)")
            }
            throw JellyfinError(.requestRejected, "the server offers no stream of item \(itemId) (\(code))")
        }
        let wanted = JellyfinID.comparable(mediaSourceId)
        guard
            let source = info.mediaSources.first(where: { $0.id.map(JellyfinID.comparable) == wanted })
                ?? info.mediaSources.first
        else {
            throw JellyfinError(.requestRejected, "the server's PlaybackInfo for item \(itemId) names no version")
        }
        if source.supportsDirectPlay == true {
            return TranscodeOffer(
                directPlay: true, transcodingURL: nil, container: source.container, playSessionId: info.playSessionId)
        }
        guard let relative = source.raw["TranscodingUrl"]?.stringValue, !relative.isEmpty else {
            throw JellyfinError(
                .requestRejected, "the server offers neither the original nor a transcode of item \(itemId)")
        }
        return TranscodeOffer(
            directPlay: false, transcodingURL: JellyfinClient.withoutToken(url(relative)),
            container: source.raw["TranscodingContainer"]?.stringValue, playSessionId: info.playSessionId)
    }

    /// `url` without the `api_key`/`ApiKey` parameters Jellyfin puts in a `TranscodingUrl` (the token goes in the
    /// `Authorization` header only, never in a URL).
    public static func withoutToken(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let kept = url[url.index(after: question)...].split(separator: "&").filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            return !name.isEmpty && name != "api_key" && name != "apikey"
        }
        return String(url[..<question]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// Reads a playlist (or any small answer) of the server at an absolute URL, with the auth header.
    /// - Throws: ``JellyfinError``.
    public func read(url absolute: String, what: String) async throws -> [UInt8] {
        guard absolute.hasPrefix(serverURL + "/") else {
            throw JellyfinError(.invalidResponse, "the \(what) is not on the server (\(absolute.prefix(80)))")
        }
        let path = String(absolute.dropFirst(serverURL.count))
        let (pathOnly, query) = JellyfinClient.split(path)
        return try await send(Call(path: pathOnly, query: query, action: "read the \(what)")).body
    }

    /// Stops the server's encoding of a play session, so it leaves no transcode files behind
    /// (`DELETE /Videos/ActiveEncodings?deviceId=&playSessionId=`, `HlsSegmentController` L108–117).
    public func stopEncoding(playSessionId: String) async throws {
        _ = try await send(
            Call(
                method: "DELETE", path: "/Videos/ActiveEncodings",
                query: [("deviceId", identity.deviceId), ("playSessionId", playSessionId)],
                action: "stop the server's encoding"))
    }

    /// Whether the signed-in user may have video transcoded (`Policy.EnableVideoPlaybackTranscoding`); nil when
    /// unknown (an API key).
    public func userMayTranscode() async -> Bool? {
        (try? await currentUser())?.policy?.raw["EnableVideoPlaybackTranscoding"]?.boolValue
    }

    /// A path with its query split into decoded pairs (the query is encoded again when sent).
    static func split(_ path: String) -> (String, [(name: String, value: String)]) {
        guard let question = path.firstIndex(of: "?") else { return (path, []) }
        let pairs = path[path.index(after: question)...].split(separator: "&").compactMap {
            pair -> (name: String, value: String)? in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.flatMap({ String($0).removingPercentEncoding }), !name.isEmpty else {
                return nil
            }
            let value = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : ""
            return (name, value)
        }
        return (String(path[..<question]), pairs)
    }
}
