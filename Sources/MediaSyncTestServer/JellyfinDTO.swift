import Foundation
import MediaSyncJSON

#if canImport(Glibc)
    import Glibc
#endif

/// Builds Jellyfin wire-format JSON (BaseItemDto, MediaSourceInfo, UserDto, …) from the test library.
/// Field names, order and shapes follow the recorded responses in `/work/shared/jellyfin-api`.
enum JellyfinDTO {
    /// Fields that Jellyfin only includes when requested via `fields=` (lowercased).
    static let gatedFields: Set<String> = [
        "parentid", "path", "etag", "datecreated", "sortname", "mediasources", "mediastreams", "candownload",
        "childcount", "recursiveitemcount", "itemcounts", "overview", "providerids",
    ]

    /// .NET round-trip ("o") UTC date format as Jellyfin emits it: `2023-04-27T08:44:09.6382614Z`.
    static func date(_ date: Date) -> String {
        let whole = date.timeIntervalSince1970.rounded(.down)
        let ticks = Int((date.timeIntervalSince1970 - whole) * 10_000_000)
        var t = time_t(whole)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T"
            + "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2)).\(pad(ticks, 7))Z"
    }

    static func sortName(_ item: TestItem) -> String {
        if let index = item.indexNumber, item.type == "Season" || item.type == "Episode" {
            return String(repeating: "0", count: max(0, 4 - String(index).count)) + String(index)
        }
        return item.name.lowercased()
    }

    /// A BaseItemDto. `fields` are lowercased requested field names; `allFields` includes every gated field.
    static func item(_ item: TestItem, library: TestLibrary, fields: Set<String>, allFields: Bool = false) -> JSONValue
    {
        func wants(_ field: String) -> Bool { allFields || fields.contains(field) }
        let isVideo = !item.mediaSources.isEmpty
        var m: [JSONMember] = [
            JSONMember("Name", .string(item.name)),
            JSONMember("ServerId", .string(library.serverId)),
            JSONMember("Id", .string(item.id)),
        ]
        if wants("etag") { m.append(JSONMember("Etag", .string(item.etag))) }
        if wants("datecreated") { m.append(JSONMember("DateCreated", .string(date(item.dateCreated)))) }
        // `BaseItem.CanDownload(User)`: the item's own answer and the user's Policy.EnableContentDownloading
        // (BaseItem.cs L859–862 at v10.10.7, L875 at v10.8.13, L885 at v10.11.11; DtoService L240–245 at v10.10.7).
        if wants("candownload") {
            m.append(JSONMember("CanDownload", .bool(isVideo && item.canDownload && library.userMayDownload)))
        }
        if isVideo {
            m.append(JSONMember("HasSubtitles", .bool(true)))
            m.append(JSONMember("Container", .string(item.mediaSources.first?.container ?? "mkv")))
        }
        if wants("sortname") { m.append(JSONMember("SortName", .string(sortName(item)))) }
        if let year = item.productionYear {
            m.append(JSONMember("PremiereDate", .string("\(year)-01-01T00:00:00.0000000Z")))
        }
        if wants("path") { m.append(JSONMember("Path", .string(item.path))) }
        m.append(JSONMember("ChannelId", .null))
        if let ticks = item.runTimeTicks { m.append(JSONMember("RunTimeTicks", .int(ticks))) }
        if let year = item.productionYear { m.append(JSONMember("ProductionYear", .integer(year))) }
        if let index = item.indexNumber { m.append(JSONMember("IndexNumber", .integer(index))) }
        if let parentIndex = item.parentIndexNumber { m.append(JSONMember("ParentIndexNumber", .integer(parentIndex))) }
        if wants("providerids") { m.append(JSONMember("ProviderIds", .object([]))) }
        m.append(JSONMember("IsFolder", .bool(item.isFolder)))
        if wants("parentid"), let parent = item.parentId { m.append(JSONMember("ParentId", .string(parent))) }
        m.append(JSONMember("Type", .string(item.type)))
        if let collectionType = item.collectionType { m.append(JSONMember("CollectionType", .string(collectionType))) }
        if item.type != "CollectionFolder" {
            m.append(JSONMember("UserData", userData(item, library: library)))
        }
        if wants("childcount") || wants("itemcounts") || wants("recursiveitemcount"), item.isFolder {
            let children = library.children(of: item.id).count
            if wants("recursiveitemcount") {
                m.append(JSONMember("RecursiveItemCount", .integer(library.descendants(of: item.id).count)))
            }
            m.append(JSONMember("ChildCount", .integer(children)))
        }
        if let seriesName = item.seriesName { m.append(JSONMember("SeriesName", .string(seriesName))) }
        if let seriesId = item.seriesId { m.append(JSONMember("SeriesId", .string(seriesId))) }
        if let seasonId = item.seasonId { m.append(JSONMember("SeasonId", .string(seasonId))) }
        if let seasonName = item.seasonName { m.append(JSONMember("SeasonName", .string(seasonName))) }
        if isVideo { m.append(JSONMember("VideoType", .string(item.mediaSources.first?.videoType ?? "VideoFile"))) }
        let tags = item.imageTags.sorted { $0.key < $1.key }.map { JSONMember($0.key, .string($0.value)) }
        m.append(JSONMember("ImageTags", .members(tags)))
        m.append(JSONMember("BackdropImageTags", .array(item.backdropImageTags.map { .string($0) })))
        m.append(JSONMember("LocationType", .string(item.locationType)))
        m.append(JSONMember("MediaType", .string(isVideo ? "Video" : "Unknown")))
        if wants("mediasources"), isVideo {
            m.append(JSONMember("MediaSources", .array(item.mediaSources.map { mediaSource($0, item: item) })))
        }
        if wants("mediastreams"), let first = item.mediaSources.first {
            m.append(JSONMember("MediaStreams", mediaStreams(first, item: item)))
        }
        return .members(m)
    }

    static func userData(_ item: TestItem, library: TestLibrary) -> JSONValue {
        var m: [JSONMember] = []
        if item.isFolder {
            m.append(JSONMember("UnplayedItemCount", .integer(library.unplayedCount(of: item.id))))
        }
        m.append(JSONMember("PlaybackPositionTicks", .int(item.playbackPositionTicks)))
        m.append(JSONMember("PlayCount", .integer(item.playCount)))
        m.append(JSONMember("IsFavorite", .bool(false)))
        if let played = item.lastPlayedDate {
            m.append(JSONMember("LastPlayedDate", .string(date(played))))
        }
        m.append(JSONMember("Played", .bool(item.played)))
        m.append(JSONMember("Key", .string(item.id)))
        return .members(m)
    }

    /// MediaStreams: H.264 video, AC-3 audio, external SRT subtitle (string `Type`s as the live server sends).
    static func mediaStreams(_ source: TestMediaSource, item: TestItem) -> JSONValue {
        let subtitlePath = (source.path as NSString).deletingPathExtension + ".en.srt"
        return .array([
            .object([
                JSONMember("Codec", .string("h264")), JSONMember("Language", .string("eng")),
                JSONMember("TimeBase", .string("1/1000")), JSONMember("VideoRange", .string("SDR")),
                JSONMember("DisplayTitle", .string("1080p H264 SDR")), JSONMember("IsInterlaced", .bool(false)),
                JSONMember("BitRate", .integer(4_000_000)), JSONMember("BitDepth", .integer(8)),
                JSONMember("IsDefault", .bool(true)), JSONMember("IsForced", .bool(false)),
                JSONMember("Height", .integer(1080)), JSONMember("Width", .integer(1920)),
                JSONMember("AverageFrameRate", .double(23.976)), JSONMember("RealFrameRate", .double(23.976)),
                JSONMember("Profile", .string("High")), JSONMember("Type", .string("Video")),
                JSONMember("AspectRatio", .string("16:9")), JSONMember("Index", .integer(0)),
                JSONMember("IsExternal", .bool(false)), JSONMember("IsTextSubtitleStream", .bool(false)),
                JSONMember("SupportsExternalStream", .bool(false)), JSONMember("PixelFormat", .string("yuv420p")),
                JSONMember("Level", .integer(41)),
            ]),
            .object([
                JSONMember("Codec", .string("ac3")), JSONMember("Language", .string("eng")),
                JSONMember("TimeBase", .string("1/1000")),
                JSONMember("DisplayTitle", .string("English - Dolby Digital - 5.1 - Default")),
                JSONMember("ChannelLayout", .string("5.1")), JSONMember("BitRate", .integer(384_000)),
                JSONMember("Channels", .integer(6)), JSONMember("SampleRate", .integer(48_000)),
                JSONMember("IsDefault", .bool(true)), JSONMember("IsForced", .bool(false)),
                JSONMember("Type", .string("Audio")), JSONMember("Index", .integer(1)),
                JSONMember("IsExternal", .bool(false)), JSONMember("IsTextSubtitleStream", .bool(false)),
                JSONMember("SupportsExternalStream", .bool(false)), JSONMember("Level", .integer(0)),
            ]),
            .object([
                JSONMember("Codec", .string("srt")), JSONMember("Language", .string("eng")),
                JSONMember("DisplayTitle", .string("English - SRT - External")),
                JSONMember("IsDefault", .bool(false)), JSONMember("IsForced", .bool(false)),
                JSONMember("Type", .string("Subtitle")), JSONMember("Index", .integer(2)),
                JSONMember("IsExternal", .bool(true)), JSONMember("IsTextSubtitleStream", .bool(true)),
                JSONMember("SupportsExternalStream", .bool(true)), JSONMember("Path", .string(subtitlePath)),
                JSONMember("DeliveryMethod", .string("External")),
                JSONMember("DeliveryUrl", .string("/Videos/\(item.id)/\(source.id)/Subtitles/2/0/Stream.srt")),
            ]),
        ])
    }

    /// A MediaSourceInfo (one element of `MediaSources`).
    static func mediaSource(_ source: TestMediaSource, item: TestItem) -> JSONValue {
        let bitrate =
            source.runTimeTicks > 0 ? Int64(Double(source.size) * 8 / (Double(source.runTimeTicks) / 10_000_000)) : 0
        if let url = source.strmURL {
            return .object([
                JSONMember("Protocol", .string("Http")), JSONMember("Id", .string(source.id)),
                JSONMember("Path", .string(url)), JSONMember("Type", .string("Default")),
                JSONMember("Container", .string("strm")), JSONMember("Name", .string(source.name)),
                JSONMember("IsRemote", .bool(true)), JSONMember("ETag", .string(source.etag)),
                JSONMember("SupportsTranscoding", .bool(true)), JSONMember("SupportsDirectStream", .bool(true)),
                JSONMember("SupportsDirectPlay", .bool(true)), JSONMember("VideoType", .string(source.videoType)),
                JSONMember("MediaStreams", .array([])), JSONMember("MediaAttachments", .array([])),
                JSONMember("Formats", .array([])), JSONMember("RequiredHttpHeaders", .object([])),
            ])
        }
        return .object([
            JSONMember("Protocol", .string("File")),
            JSONMember("Id", .string(source.id)),
            JSONMember("Path", .string(source.path)),
            JSONMember("Type", .string("Default")),
            JSONMember("Container", .string(source.container)),
            JSONMember("Size", .integer(source.size)),
            JSONMember("Name", .string(source.name)),
            JSONMember("IsRemote", .bool(false)),
            JSONMember("ETag", .string(source.etag)),
            JSONMember("RunTimeTicks", .int(source.runTimeTicks)),
            JSONMember("ReadAtNativeFramerate", .bool(false)),
            JSONMember("IgnoreDts", .bool(false)),
            JSONMember("IgnoreIndex", .bool(false)),
            JSONMember("GenPtsInput", .bool(false)),
            JSONMember("SupportsTranscoding", .bool(true)),
            JSONMember("SupportsDirectStream", .bool(true)),
            JSONMember("SupportsDirectPlay", .bool(true)),
            JSONMember("IsInfiniteStream", .bool(false)),
            JSONMember("RequiresOpening", .bool(false)),
            JSONMember("RequiresClosing", .bool(false)),
            JSONMember("RequiresLooping", .bool(false)),
            JSONMember("SupportsProbing", .bool(true)),
            JSONMember("VideoType", .string(source.videoType)),
            JSONMember("MediaStreams", mediaStreams(source, item: item)),
            JSONMember("MediaAttachments", .array([])),
            JSONMember("Formats", .array([])),
            JSONMember("Bitrate", .int(bitrate)),
            JSONMember("RequiredHttpHeaders", .object([])),
            JSONMember("TranscodingSubProtocol", .string("http")),
            JSONMember("DefaultAudioStreamIndex", .integer(1)),
        ])
    }

    /// A `{"Items":[...],"TotalRecordCount":N,"StartIndex":S}` result.
    static func queryResult(_ items: [JSONValue], total: Int, startIndex: Int) -> JSONValue {
        .object([
            JSONMember("Items", .array(items)),
            JSONMember("TotalRecordCount", .integer(total)),
            JSONMember("StartIndex", .integer(startIndex)),
        ])
    }

    /// A minimal UserDto (used when no fixture template is available).
    static func user(library: TestLibrary) -> JSONValue {
        .object([
            JSONMember("Name", .string(library.userName)),
            JSONMember("ServerId", .string(library.serverId)),
            JSONMember("Id", .string(library.userId)),
            JSONMember("HasPassword", .bool(!library.password.isEmpty)),
            JSONMember("HasConfiguredPassword", .bool(!library.password.isEmpty)),
            JSONMember("HasConfiguredEasyPassword", .bool(false)),
            JSONMember("EnableAutoLogin", .bool(false)),
            JSONMember("Configuration", .object([])),
            JSONMember(
                "Policy",
                .object([
                    JSONMember("IsAdministrator", .bool(false)),
                    JSONMember("EnableContentDownloading", .bool(library.userMayDownload)),
                    JSONMember("EnableVideoPlaybackTranscoding", .bool(library.userMayTranscode)),
                ])),
        ])
    }
}
