import Foundation
import MediaSyncCore
import MediaSyncJSON

/// The music routes: `GET /Playlists/{id}/Items`, `GET /Playlists/{id}` (10.10+), `GET /Audio/{id}/Lyrics` (10.9+),
/// `GET|HEAD /Audio/{id}/universal` and `GET /Items/{id}/File`, modelled per version from Jellyfin's code at v10.8.13, v10.9.11, v10.10.7
/// and v10.11.11 (`PlaylistsController`, `LyricsController`, `UniversalAudioController`).
extension TestServer {
    /// Answers the music routes; nil when the request is none of them (or the version has no such route: then the
    /// server's 404, as ASP.NET routing answers an unknown path before authentication).
    func musicResponse(_ request: RecordedRequest, ignoreRange: Bool) -> HTTPResponse? {
        let route = RoutePath(request.path)
        let method = request.method
        let profile = self.profile
        if let c = route.match(["playlists", "*", "items"]) {
            // GET, POST (add) and DELETE (remove) on every version (PlaylistsController v10.8.13 L104/L141/L166).
            switch method {
            case "GET": break
            case "POST", "DELETE": return .text("Not modelled by the test server", status: 501)
            default: return methodNotAllowed("DELETE, GET, POST")
            }
            return authorized(request) { self.playlistItems(request, playlistId: c[0], library: $0) }
        }
        if let c = route.match(["playlists", "*"]) {
            switch profile {
            // No `Playlists/{id}` template at all: the path matches no endpoint (PlaylistsController v10.8.13).
            case .v10_8: return nil
            // Only `POST Playlists/{playlistId}` (UpdatePlaylist, v10.9.11 L115): endpoint routing answers a GET with
            // 405 before authorization.
            case .v10_9:
                return method == "POST"
                    ? .text("Not modelled by the test server", status: 501) : methodNotAllowed("POST")
            // `GET Playlists/{playlistId}` (v10.10.7 L162–182, v10.11.11 L162–182) and POST.
            case .v10_10, .v10_11:
                if method == "POST" { return .text("Not modelled by the test server", status: 501) }
                guard method == "GET" else { return methodNotAllowed("GET, POST") }
                return authorized(request) { self.playlist(request, playlistId: c[0], library: $0) }
            }
        }
        if let c = route.match(["audio", "*", "lyrics"]) {
            // 10.8 has no lyrics API: the path matches no endpoint (no `Lyric` in Jellyfin.Api at v10.8.13).
            guard profile != .v10_8 else { return nil }
            // GET, POST (upload) and DELETE (LyricsController v10.9.11 L67/L97/L152).
            switch method {
            case "GET": break
            case "POST", "DELETE": return .text("Not modelled by the test server", status: 501)
            default: return methodNotAllowed("DELETE, GET, POST")
            }
            return authorized(request) { self.lyrics(request, itemId: c[0], library: $0) }
        }
        if let c = route.match(["items", "*", "file"]) {
            guard method == "GET" else { return methodNotAllowed("GET") }
            return authorized(request) {
                self.originalFile(request, itemId: c[0], library: $0, ignoreRange: ignoreRange)
            }
        }
        if let c = route.match(["audio", "*", "universal"]) {
            guard method == "GET" || method == "HEAD" else { return methodNotAllowed("GET, HEAD") }
            return authorized(request) {
                self.universalAudio(request, itemId: c[0], library: $0, ignoreRange: ignoreRange)
            }
        }
        return nil
    }

    /// 401 with an empty body without a valid token, else `answer` for the library served.
    func authorized(_ request: RecordedRequest, _ answer: (TestLibrary) -> HTTPResponse) -> HTTPResponse {
        let library = self.library
        guard caller(request, library: library) != .anonymous else { return .empty(401) }
        return answer(library)
    }

    func methodNotAllowed(_ allow: String) -> HTTPResponse {
        var response = HTTPResponse.empty(405)
        response.headers.append(("Allow", allow))
        return response
    }

    /// An RFC 7807 answer as ASP.NET Core's `ProblemDetailsClientErrorFactory` writes it for `NotFound()` or a
    /// failed model validation on an `[ApiController]` (no `SuppressMapClientErrors` in Jellyfin): its `type` link
    /// is .NET 6's (10.8) or .NET 8/9's (10.9+), `traceId` a W3C trace id. Inferred from ASP.NET's defaults; no live
    /// server's answer was recorded.
    func problem(_ status: Int, errors: [String: String] = [:]) -> HTTPResponse {
        let net6 = profile == .v10_8
        let (type, title): (String, String)
        switch status {
        case 400:
            type =
                net6
                ? "https://tools.ietf.org/html/rfc7231#section-6.5.1"
                : "https://tools.ietf.org/html/rfc9110#section-15.5.1"
            title = errors.isEmpty ? "Bad Request" : "One or more validation errors occurred."
        default:
            type =
                net6
                ? "https://tools.ietf.org/html/rfc7231#section-6.5.4"
                : "https://tools.ietf.org/html/rfc9110#section-15.5.5"
            title = "Not Found"
        }
        let count = lock.withLock { state.requests.count }
        let seed = lock.withLock { state.library.seed }
        let trace =
            "00-" + SplitMix64.hexID(seed: seed, label: "trace-\(count)") + "-"
            + String(SplitMix64.hexID(seed: seed, label: "span-\(count)").prefix(16)) + "-00"
        var members: [JSONMember] = [
            JSONMember("type", .string(type)), JSONMember("title", .string(title)),
            JSONMember("status", .integer(status)),
        ]
        let errorMembers = errors.sorted { $0.key < $1.key }.map { JSONMember($0.key, .array([.string($0.value)])) }
        // .NET 6 writes the extensions (traceId) before `errors`, .NET 8 after.
        if net6 { members.append(JSONMember("traceId", .string(trace))) }
        if !errors.isEmpty { members.append(JSONMember("errors", .members(errorMembers))) }
        if !net6 { members.append(JSONMember("traceId", .string(trace))) }
        return HTTPResponse(
            status: status, headers: [("Content-Type", "application/problem+json; charset=utf-8")],
            body: JSONValue.members(members).serialized())
    }

    // MARK: Playlists

    /// The playlist `id` names as the user sees it: 10.9+ look it up among the playlists the user may see
    /// (`PlaylistManager.GetPlaylistForUser`, v10.9.11 L62–78); the generated playlists belong to the library's user,
    /// so another user id finds nothing.
    func visiblePlaylist(_ id: String, userId: String?, library: TestLibrary) -> TestItem? {
        if let userId, TestServer.normalizeID(userId) != library.userId { return nil }
        guard let item = library.item(withId: TestServer.normalizeID(id)), item.type == "Playlist" else { return nil }
        return item
    }

    /// `GET /Playlists/{id}/Items`: the playlist's entries in stored order with their `PlaylistItemId`, paged.
    func playlistItems(_ request: RecordedRequest, playlistId: String, library: TestLibrary) -> HTTPResponse {
        let profile = self.profile
        let userId = request.queryValue("userId").flatMap { $0.isEmpty ? nil : $0 }
        let playlist: TestItem
        if profile == .v10_8 {
            // `[FromQuery, Required] Guid userId` (v10.8.13 L169): missing, model validation answers 400.
            guard userId != nil else { return problem(400, errors: ["userId": "The userId field is required."]) }
            // `(Playlist)GetItemById(playlistId)`: null answers `NotFound()`; another type fails the cast
            // (InvalidCastException, 500 by ExceptionMiddleware) (v10.8.13 L180–184). No access check.
            guard let item = library.item(withId: TestServer.normalizeID(playlistId)) else { return problem(404) }
            guard item.type == "Playlist" else { return .text("Error processing request.", status: 500) }
            playlist = item
        } else {
            // `userId ?? token user` (v10.9.11 L470, v10.10.7 L502); a playlist the user cannot see answers
            // `NotFound("Playlist not found")`, a JSON string (v10.10.7 L503–507).
            guard let item = visiblePlaylist(playlistId, userId: userId, library: library) else {
                return .json(.string("Playlist not found"), status: 404)
            }
            playlist = item
        }
        var entries = library.linkedEntries(of: playlist)
        if profile == .v10_10 || profile == .v10_11 {
            // 10.10+ drop the entries the user may not see, before counting (v10.10.7 L519, v10.11.11 L538);
            // 10.8/10.9 list them all (v10.8.13 L186, v10.9.11 L495).
            entries = entries.filter { !library.isInaccessible($0.item) }
        }
        let count = entries.count
        let startIndex = request.queryValue("startIndex").flatMap { Int($0) }
        let start = min(count, max(0, startIndex ?? 0))
        let end = request.queryValue("limit").flatMap { Int($0) }.map { min(count, start + max(0, $0)) } ?? count
        let fields = TestServer.fieldSet(request)
        let page = entries[start..<end]
        if fields.contains("mediasources") { counters.built(page.filter { !$0.item.mediaSources.isEmpty }.count) }
        let dtos = page.map { entry in
            JellyfinDTO.item(
                entry.item, library: library, fields: fields, profile: profile,
                playlistItemId: TestServer.playlistItemId(entry.entry, of: playlist, library: library, profile: profile)
            )
        }
        // `new QueryResult(startIndex, count, dtos)`: `StartIndex` is the one asked for, else 0.
        return .json(JellyfinDTO.queryResult(dtos, total: count, startIndex: startIndex ?? 0))
    }

    /// An entry's `PlaylistItemId`: 10.8/10.9 the entry's `LinkedChild.Id`, a `Guid.NewGuid()` made each time the
    /// playlist is loaded (v10.8.13 PlaylistsController L210, `LinkedChild` L13–25), here derived from the entry and
    /// ``TestLibrary/playlistLoads``; 10.10+ the item's own id (`LinkedChild.ItemId`, v10.10.7 L538).
    static func playlistItemId(
        _ entry: TestLinkedChild, of playlist: TestItem, library: TestLibrary, profile: JellyfinProfile
    ) -> String {
        switch profile {
        case .v10_8, .v10_9:
            return SplitMix64.hexID(
                seed: library.seed, label: "playlist-entry-\(playlist.id)-\(entry.serial)-load-\(library.playlistLoads)"
            )
        case .v10_10, .v10_11:
            return entry.itemId
        }
    }

    /// `GET /Playlists/{id}` (10.10+): `PlaylistDto` with every stored entry's item id, whether or not the user may see
    /// it (`GetManageableItems().Select(item.Id)`, v10.10.7 L162–182).
    func playlist(_ request: RecordedRequest, playlistId: String, library: TestLibrary) -> HTTPResponse {
        guard let playlist = visiblePlaylist(playlistId, userId: nil, library: library) else {
            return .json(.string("Playlist not found"), status: 404)
        }
        let ids = library.linkedEntries(of: playlist).map { JSONValue.string($0.item.id) }
        return .json(
            .members([
                JSONMember("OpenAccess", .bool(false)), JSONMember("Shares", .array([])),
                JSONMember("ItemIds", .array(ids)),
            ]))
    }

    // MARK: Lyrics

    /// `GET /Audio/{id}/Lyrics` (10.9+): a missing, hidden or non-Audio item, or a track without lyrics, answers
    /// `NotFound()` (LyricsController v10.9.11 L67–86, identical in 10.10.7 and 10.11.11).
    func lyrics(_ request: RecordedRequest, itemId: String, library: TestLibrary) -> HTTPResponse {
        guard let item = library.item(withId: TestServer.normalizeID(itemId)), item.type == "Audio",
            !library.isInaccessible(item), let lyrics = item.lyrics
        else { return problem(404) }
        return .json(TestServer.lyricDto(lyrics, profile: profile))
    }

    /// A `LyricDto` `{Metadata, Lyrics}` as each version's parser makes it from the file (LRC parser first, then TXT):
    /// - 10.9: timed lines only, sorted by start, trimmed; `Metadata` from the `[ar:]`, `[al:]`, `[ti:]` tags
    ///   (`LrcLyricParser`, v10.9.11 L62–121).
    /// - 10.10+: `Metadata` `{}` (tags no longer read, v10.10.7 L41–76); LrcParser 2024.728+ makes one lyric per start
    ///   time, so a tag line (no start time) is not a line (karaoke-dev/LrcParser `LrcParser.PostProcess`; 10.10.7
    ///   pins 2025.228.1, 10.11.11 2025.623.0, later than the snapshot read, 2024.0728.2: inferred unchanged).
    /// - 10.11: each timed line carries `Cues`, empty for a line without word time tags (v10.11.11 L75–121).
    /// - A TXT file: every line as `Text`, trimmed, no `Start` (`TxtLyricParser`, v10.9.11).
    static func lyricDto(_ lyrics: TestLyrics, profile: JellyfinProfile) -> JSONValue {
        var metadata: [JSONMember] = []
        var lines: [JSONValue] = []
        if lyrics.isSynced {
            if profile == .v10_9 {
                if let artist = lyrics.artist { metadata.append(JSONMember("Artist", .string(artist))) }
                if let album = lyrics.album { metadata.append(JSONMember("Album", .string(album))) }
                if let title = lyrics.title { metadata.append(JSONMember("Title", .string(title))) }
            }
            let timed = lyrics.lines.enumerated().compactMap { line in line.element.start.map { (line.offset, $0) } }
                .sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
            for (index, start) in timed {
                var line: [JSONMember] = [
                    JSONMember("Text", .string(lyrics.lines[index].text.trimmingCharacters(in: .whitespaces))),
                    JSONMember("Start", .int(start)),
                ]
                if profile == .v10_11 { line.append(JSONMember("Cues", .array([]))) }
                lines.append(.members(line))
            }
        } else {
            lines = lyrics.lines.map {
                .members([JSONMember("Text", .string($0.text.trimmingCharacters(in: .whitespaces)))])
            }
        }
        return .members([JSONMember("Metadata", .members(metadata)), JSONMember("Lyrics", .array(lines))])
    }

    // MARK: Original file

    /// `GET /Items/{id}/File`: the item's file with range support and no Download permission needed
    /// (`PhysicalFile(item.Path, mime, true)`); 10.8 looks the item up without the user (LibraryController v10.8.13
    /// L104–118), 10.9+ answer `NotFound()` for an item the user may not see (v10.9.11 L98–111, v10.10.7 L98–112).
    func originalFile(_ request: RecordedRequest, itemId: String, library: TestLibrary, ignoreRange: Bool)
        -> HTTPResponse
    {
        guard let item = library.item(withId: TestServer.normalizeID(itemId)),
            profile == .v10_8 || !library.isInaccessible(item),
            let source = item.mediaSources.first(where: { $0.path == item.path }) ?? item.mediaSources.first
        else { return problem(404) }
        let file = ServedFile(
            contents: mediaBytes(source, library: library), lastModified: source.lastModified,
            contentType: TestServer.mimeType(forPath: source.path), etag: nil, contentDispositionFilename: nil)
        return file.response(method: request.method, headers: request.headers, ignoreRange: ignoreRange)
    }

    // MARK: Universal audio

    /// The most bytes a generated transcode answer carries (a long track at a high bit rate would be hundreds of MB).
    public static let maxTranscodeBytes = 32 * 1024 * 1024

    /// `GET|HEAD /Audio/{id}/universal` (UniversalAudioController v10.8.13 L93–373, v10.10.7 L92–363): the file as
    /// it is when a `Container` entry takes it and its bit rate is within `MaxStreamingBitrate` (default 8 Mbit/s,
    /// `DeviceProfile.MaxStreamingBitrate`), else a progressive transcode into `TranscodingContainer` (default mp3)
    /// with `AudioCodec`, or with `TranscodingProtocol=hls` an HLS master playlist.
    func universalAudio(_ request: RecordedRequest, itemId: String, library: TestLibrary, ignoreRange: Bool)
        -> HTTPResponse
    {
        let profile = self.profile
        let item = library.item(withId: TestServer.normalizeID(itemId))
        // 10.9+ look the item up for the user: missing or hidden answers `NotFound()` (v10.9.11 L121–125). 10.8 does
        // not check: a missing item reaches `GetStaticMediaSources(null)`, an ArgumentNullException answered 400
        // (MediaSourceManager v10.8.13 L323–328, inferred).
        guard let item, profile == .v10_8 || !library.isInaccessible(item) else {
            return profile == .v10_8 ? .text("Error processing request.", status: 400) : problem(404)
        }
        let protocolName = (request.queryValue("transcodingProtocol") ?? "").lowercased()
        // 10.9+ bind `MediaStreamProtocol` (`http`, `hls`, or their numbers): another value fails validation.
        // 10.8 takes any string and only tells `hls` apart (v10.8.13 L112, L199).
        if profile != .v10_8, !["", "http", "hls", "0", "1"].contains(protocolName) {
            return problem(400, errors: ["transcodingProtocol": "The value '\(protocolName)' is not valid."])
        }
        let wantsHLS = protocolName == "hls" || (profile != .v10_8 && protocolName == "1")
        // No source (a folder), or an unknown `MediaSourceId`: `info.MediaSources[0]` fails, 500 (inferred).
        let wanted = request.queryValue("mediaSourceId").map(TestServer.normalizeID).flatMap { $0.isEmpty ? nil : $0 }
        guard let source = wanted.map({ id in item.mediaSources.first { $0.id == id } }) ?? item.mediaSources.first
        else { return .text("Error processing request.", status: 500) }
        let audio = source.audio ?? TestAudioStream(codec: TestServer.sourceVideo.audio, channels: 6, bitRate: 384_000)
        let sourceBitrate = audio.bitRate
        let maxBitrate = request.queryValue("maxStreamingBitrate").flatMap { Int($0) }
        if TestServer.universalDirectPlays(
            container: source.container, codec: audio.codec, bitrate: sourceBitrate,
            containers: TestServer.list(request.queryValue("container")), maxStreamingBitrate: maxBitrate ?? 8_000_000)
        {
            // Static: `PhysicalFileResult` with range processing: `Accept-Ranges`, `Content-Length`, `Last-Modified`,
            // no ETag, no Content-Disposition (AudioHelper v10.10.7 L130–145, FileStreamResponseHelpers L59).
            let file = ServedFile(
                contents: mediaBytes(source, library: library), lastModified: source.lastModified,
                contentType: TestServer.mimeType(forPath: source.path), etag: nil, contentDispositionFilename: nil)
            return file.response(method: request.method, headers: request.headers, ignoreRange: ignoreRange)
        }
        let container = (request.queryValue("transcodingContainer").flatMap { $0.isEmpty ? nil : $0 } ?? "mp3")
            .lowercased()
        let codec =
            (request.queryValue("audioCodec").flatMap { $0.isEmpty ? nil : $0 }?.lowercased())
            ?? TestServer.defaultCodec(forContainer: container)
        let bitrate = TestServer.transcodeBitrate(
            codec: codec, requested: request.queryValue("audioBitRate").flatMap { Int($0) } ?? maxBitrate,
            sourceBitrate: sourceBitrate, inputChannels: audio.channels,
            maxChannels: request.queryValue("maxAudioChannels").flatMap { Int($0) }, profile: profile)
        if wantsHLS {
            // `DynamicHlsHelper.GetMasterHlsPlaylist`: an m3u8 master playlist, not audio (v10.10.7 L183–231). Its
            // variant is not served by the test server.
            let query = request.query.filter { $0.key.lowercased() != "api_key" && $0.key.lowercased() != "apikey" }
                .sorted { $0.key < $1.key }.map { "\($0.key)=\(TestServer.percentEncode($0.value))" }
                .joined(separator: "&")
            return .text(
                "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\(bitrate),AVERAGE-BANDWIDTH=\(bitrate),CODECS=\"mp4a.40.2\"\n"
                    + "main.m3u8?\(query)\n", status: 200, contentType: "application/vnd.apple.mpegurl")
        }
        // Progressive: 200, `Accept-Ranges: none`, the output file's type, a body of unknown length (chunked);
        // a Range header is not looked at (FileStreamResponseHelpers v10.8.13 L73–118, v10.10.7 L85/L116).
        let headers = [
            ("Content-Type", TestServer.mimeType(forPath: "output.\(container)")), ("Accept-Ranges", "none"),
        ]
        if request.method == "HEAD" {
            // HEAD starts no encoder (v10.8.13 L89–94); Kestrel sends `Content-Length: 0` for a response that ended
            // without a body (inferred).
            return HTTPResponse(status: 200, headers: headers)
        }
        let startTicks = max(0, request.queryValue("startTimeTicks").flatMap { Int64($0) } ?? 0)
        let ticks = max(0, source.runTimeTicks - startTicks)
        let length = min(TestServer.maxTranscodeBytes, Int(Int64(bitrate) * ticks / 80_000_000))
        var response = HTTPResponse(
            status: 200, headers: headers,
            body: TestServer.transcodedAudio(
                sourceId: source.id, codec: codec, container: container, bitrate: bitrate, startTicks: startTicks,
                count: length))
        response.chunked = true
        return response
    }

    /// Whether a universal request's `Container` list takes the source as it is: an entry `name|codec|codec` (codecs
    /// optional) whose name is one of the source's container names and whose codecs, if any, include the source's
    /// audio codec, both without case (`UniversalAudioController.GetDeviceProfile`, `ContainerProfile`,
    /// `DirectPlayProfile`, v10.8.13), and the source's bit rate within `maxStreamingBitrate`
    /// (`StreamBuilder.IsAudioEligibleForDirectPlay`, v10.11.11 L1595–1619).
    public static func universalDirectPlays(
        container: String, codec: String, bitrate: Int, containers: [String], maxStreamingBitrate: Int
    ) -> Bool {
        guard bitrate <= maxStreamingBitrate else { return false }
        let names = Set(container.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return containers.contains { entry in
            let parts = entry.lowercased().split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first, names.contains(name) else { return false }
            let codecs = parts.dropFirst().flatMap { $0.split(separator: ",").map(String.init) }
            return codecs.isEmpty || codecs.contains(codec.lowercased())
        }
    }

    /// The codec a container is encoded with when no `AudioCodec` is sent. Jellyfin then infers one from the URL
    /// (10.8/10.9 `copy`, 10.10+ the path fragment, `EncodingHelper.InferAudioCodec`): not modelled, always send it.
    static func defaultCodec(forContainer container: String) -> String {
        switch container {
        case "aac", "m4a", "mp4", "m4b": return "aac"
        case "ogg", "oga", "opus", "webm": return "opus"
        case "flac": return "flac"
        default: return "mp3"
        }
    }

    /// The transcode's bit rate (`EncodingHelper.GetAudioBitrateParam`, identical at v10.8.13 L2121–2165 and
    /// v10.11.11 L2718–2762): for aac, mp3, opus, vorbis, ac3, eac3 `min(requested, cap)`, the cap 640 kbit/s for 6+
    /// channels in and out, else 128 kbit/s per output channel (10.8 counts the input's channels: it computes the bit
    /// rate before the output channels, StreamingHelpers v10.8.13 L186–197); lossless codecs keep the source's rate;
    /// other codecs 128 kbit/s per channel.
    public static func transcodeBitrate(
        codec: String, requested: Int?, sourceBitrate: Int, inputChannels: Int, maxChannels: Int?,
        profile: JellyfinProfile
    ) -> Int {
        let outputChannels = max(1, maxChannels.map { min($0, inputChannels) } ?? inputChannels)
        let channels = profile == .v10_8 ? inputChannels : outputChannels
        switch codec {
        case "aac", "mp3", "opus", "vorbis", "ac3", "eac3", "":
            let cap = inputChannels >= 6 && channels >= 6 ? 640_000 : 128_000 * channels
            return min(requested ?? Int.max, cap)
        case "alac", "ape", "flac", "mlp", "truehd", "wavpack":
            return sourceBitrate
        default:
            return 128_000 * channels
        }
    }

    /// Deterministic bytes of a transcode: the same request always gives the same file.
    public static func transcodedAudio(
        sourceId: String, codec: String, container: String, bitrate: Int, startTicks: Int64, count: Int
    ) -> [UInt8] {
        SplitMix64.bytes(
            seed: SplitMix64.hash("transcode|\(sourceId)|\(codec)|\(container)|\(bitrate)|\(startTicks)"), count: count)
    }
}
