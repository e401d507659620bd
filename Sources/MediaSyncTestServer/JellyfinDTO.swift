import Foundation
import MediaSyncCore
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
        "childcount", "recursiveitemcount", "itemcounts", "overview", "providerids", "chapters", "trickplay", "people",
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
        func four(_ value: Int) -> String {
            String(repeating: "0", count: max(0, 4 - String(value).count)) + String(value)
        }
        if let index = item.indexNumber, item.type == "Season" || item.type == "Episode" {
            return four(index)
        }
        if item.type == "Audio" || item.type == "AudioBook" {
            // An `AudioBook` is an `Audio` and sorts the same way. `"0000 - "` disc, `"0000 - "` track, then the name as it is (`Audio.CreateSortName`, v10.10.7 L93–97).
            return (item.parentIndexNumber.map { four($0) + " - " } ?? "")
                + (item.indexNumber.map { four($0) + " - " } ?? "")
                + item.name
        }
        return item.name.lowercased()
    }

    /// A BaseItemDto. `fields` are lowercased requested field names; `allFields` includes every gated field.
    /// `playlistItemId` is set for an entry of `/Playlists/{id}/Items`.
    static func item(
        _ item: TestItem, library: TestLibrary, fields: Set<String>, allFields: Bool = false,
        profile: JellyfinProfile = .newest, playlistItemId: String? = nil
    ) -> JSONValue {
        func wants(_ field: String) -> Bool { allFields || fields.contains(field) }
        // An `AudioBook` is an `Audio` (`AudioBook : Audio`, v10.10.7): media sources, streams and music fields alike.
        let isAudio = item.type == "Audio" || item.type == "AudioBook"
        // A `Book` has a file (Download serves it) but no media sources: it is not `IHasMediaSources` (`Book.cs`).
        let isBook = item.type == "Book"
        let isVideo = !item.mediaSources.isEmpty && !isAudio && !isBook
        var m: [JSONMember] = [
            JSONMember("Name", .string(item.name)),
            JSONMember("ServerId", .string(library.serverId)),
            JSONMember("Id", .string(item.id)),
        ]
        if wants("etag") { m.append(JSONMember("Etag", .string(item.etag))) }
        if let playlistItemId { m.append(JSONMember("PlaylistItemId", .string(playlistItemId))) }
        if wants("datecreated") { m.append(JSONMember("DateCreated", .string(date(item.dateCreated)))) }
        // `BaseItem.CanDownload(User)`: the item's own answer and the user's Policy.EnableContentDownloading
        // (BaseItem.cs L859–862 at v10.10.7, L875 at v10.8.13, L885 at v10.11.11; DtoService L240–245 at v10.10.7).
        // A track can when its file is local (`Audio.CanDownload`, v10.10.7 L84–87), an audiobook or a book too
        // (`AudioBook.CanDownload`, `Book.CanDownload`: `IsFileProtocol`).
        if wants("candownload") {
            m.append(
                JSONMember(
                    "CanDownload",
                    .bool((isVideo || isAudio || isBook) && item.canDownload && library.userMayDownload)))
        }
        // `HasLyrics` exists from 10.9 and is set on every Audio DTO, not gated by `Fields` (DtoService v10.9.11
        // L270–273, v10.10.7 L268–271, v10.11.11 L308–311; absent from 10.8.13's BaseItemDto).
        if isAudio, profile != .v10_8 { m.append(JSONMember("HasLyrics", .bool(item.lyrics != nil))) }
        if isVideo {
            m.append(JSONMember("HasSubtitles", .bool(true)))
            m.append(JSONMember("Container", .string(item.mediaSources.first?.container ?? "mkv")))
        }
        if isAudio, let container = item.mediaSources.first?.container {
            m.append(JSONMember("Container", .string(container)))
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
            // A playlist's or box set's children are its linked children the user may see (`Folder.GetChildCount`,
            // `FilterLinkedChildrenPerUser`, Playlist.cs L63 and BoxSet.cs L27, v10.8.13).
            let linked = item.linkedChildren.isEmpty ? nil : library.visibleLinkedItems(of: item).count
            let children = linked ?? library.children(of: item.id).count
            if wants("recursiveitemcount") {
                m.append(
                    JSONMember("RecursiveItemCount", .integer(linked ?? library.descendants(of: item.id).count)))
            }
            m.append(JSONMember("ChildCount", .integer(children)))
        }
        if let seriesName = item.seriesName { m.append(JSONMember("SeriesName", .string(seriesName))) }
        if let seriesId = item.seriesId { m.append(JSONMember("SeriesId", .string(seriesId))) }
        if let seasonId = item.seasonId { m.append(JSONMember("SeasonId", .string(seasonId))) }
        if isAudio || item.type == "MusicAlbum" { m += musicFields(item, library: library, profile: profile) }
        if wants("people"), !item.people.isEmpty {
            // `BaseItemPerson {Name, Id, Type}` (`DtoService` L190–192 and `AttachPeople` L510, v10.10.7).
            m.append(
                JSONMember(
                    "People",
                    .array(
                        item.people.map { person in
                            .object([
                                JSONMember("Name", .string(person.name)),
                                JSONMember(
                                    "Id",
                                    .string(
                                        SplitMix64.hexID(
                                            seed: library.seed, label: "person-\(TestLibrary.cleanName(person.name))"))),
                                JSONMember("Type", .string(person.type)),
                            ])
                        })))
        }
        if let seasonName = item.seasonName { m.append(JSONMember("SeasonName", .string(seasonName))) }
        if isAudio, wants("mediastreams"), let first = item.mediaSources.first {
            m.append(JSONMember("MediaStreams", audioStreams(first, item: item, profile: profile)))
        }
        if isVideo { m.append(JSONMember("VideoType", .string(item.mediaSources.first?.videoType ?? "VideoFile"))) }
        if isVideo, wants("chapters") { m.append(JSONMember("Chapters", chapters(item, library: library))) }
        // `Trickplay` exists from 10.9 (`DtoService` L1066–1069, v10.10.7; absent from 10.8.13's BaseItemDto).
        if isVideo, wants("trickplay"), profile != .v10_8 { m.append(JSONMember("Trickplay", trickplay(item))) }
        let tags = item.imageTags.sorted { $0.key < $1.key }.map { JSONMember($0.key, .string($0.value)) }
        m.append(JSONMember("ImageTags", .members(tags)))
        m.append(JSONMember("BackdropImageTags", .array(item.backdropImageTags.map { .string($0) })))
        m.append(JSONMember("LocationType", .string(item.locationType)))
        m.append(JSONMember("MediaType", .string(item.mediaType ?? (isVideo ? "Video" : "Unknown"))))
        if wants("mediasources"), isVideo || isAudio {
            m.append(
                JSONMember(
                    "MediaSources",
                    .array(item.mediaSources.map { mediaSource($0, item: item, profile: profile) })))
        }
        if wants("mediastreams"), isVideo, let first = item.mediaSources.first {
            m.append(JSONMember("MediaStreams", mediaStreams(first, item: item)))
        }
        return .members(m)
    }

    /// `Artists`, `ArtistItems`, `Album`, `AlbumId`, `AlbumPrimaryImageTag`, `AlbumArtist`, `AlbumArtists` of a track
    /// or album, in BaseItemDto's order (DtoService v10.8.13 L902–1020, v10.11.11 L1013–1099).
    static func musicFields(_ item: TestItem, library: TestLibrary, profile: JellyfinProfile) -> [JSONMember] {
        var artists = item.artists
        var albumArtists = item.albumArtists
        if profile == .v10_8, item.type == "MusicAlbum" {
            // 10.8 lists an album's artists alphabetically (`AlbumMetadataService` L71–107, v10.8.13).
            artists.sort { $0.lowercased() < $1.lowercased() }
            albumArtists.sort { $0.lowercased() < $1.lowercased() }
        }
        func pairs(_ names: [String]) -> JSONValue {
            .array(
                artistItems(names, library: library, profile: profile).map {
                    .object([JSONMember("Name", .string($0.name)), JSONMember("Id", .string($0.id))])
                })
        }
        var m: [JSONMember] = [
            JSONMember("Artists", .array(artists.map { .string($0) })),
            JSONMember("ArtistItems", pairs(artists)),
        ]
        if let album = item.album { m.append(JSONMember("Album", .string(album))) }
        if let albumId = item.albumId, let album = library.item(withId: albumId) {
            m.append(JSONMember("AlbumId", .string(album.id)))
            if let tag = album.imageTags["Primary"] { m.append(JSONMember("AlbumPrimaryImageTag", .string(tag))) }
        }
        if let first = albumArtists.first { m.append(JSONMember("AlbumArtist", .string(first))) }
        m.append(JSONMember("AlbumArtists", pairs(albumArtists)))
        return m
    }

    /// The `{Name, Id}` of each artist name. 10.8–10.10 find the artist item by name, a folder artist first, and make a
    /// by-name artist for a name without one (`LibraryManager.GetArtist`, v10.8.13 L960–999; here its id is derived
    /// from the name); 10.11 looks the names up exactly, drops names without an artist and duplicates
    /// (`DtoService` v10.11.11 L1030–1065, `BaseItemRepository` L2683–2707).
    static func artistItems(_ names: [String], library: TestLibrary, profile: JellyfinProfile) -> [(
        name: String, id: String
    )] {
        var result: [(name: String, id: String)] = []
        var seen = Set<String>()
        for name in names {
            let found = library.artist(named: name)
            if profile == .v10_11 {
                guard let found, found.name == name, seen.insert(found.id).inserted else { continue }
                result.append((name, found.id))
            } else {
                result.append(
                    (
                        name,
                        found?.id
                            ?? SplitMix64.hexID(seed: library.seed, label: "artist-name-\(TestLibrary.cleanName(name))")
                    ))
            }
        }
        return result
    }

    /// A track's MediaStreams: its audio stream, and on 10.9+ a `Lyric` stream for its lyrics file
    /// (`MediaInfoResolver.GetExternalStreams` for audio, v10.10.7 L163–196; `AudioFileProber` L139–150).
    static func audioStreams(_ source: TestMediaSource, item: TestItem, profile: JellyfinProfile) -> JSONValue {
        let audio = source.audio ?? TestAudioStream(codec: source.container, bitRate: 320_000)
        let since109 = profile != .v10_8
        let layout = audio.channels == 1 ? "mono" : audio.channels == 2 ? "stereo" : "\(audio.channels) ch"
        let title = "\(audio.codec.uppercased()) - \(layout.prefix(1).uppercased() + layout.dropFirst())"
        var stream: [JSONMember] = [
            JSONMember("Codec", .string(audio.codec)), JSONMember("TimeBase", .string("1/\(audio.sampleRate)")),
        ]
        if since109 { stream.append(JSONMember("AudioSpatialFormat", .string("None"))) }
        stream += [
            JSONMember("DisplayTitle", .string(title)), JSONMember("IsInterlaced", .bool(false)),
            JSONMember("ChannelLayout", .string(layout)), JSONMember("BitRate", .integer(audio.bitRate)),
        ]
        if let depth = audio.bitDepth { stream.append(JSONMember("BitDepth", .integer(depth))) }
        stream += [
            JSONMember("Channels", .integer(audio.channels)), JSONMember("SampleRate", .integer(audio.sampleRate)),
            JSONMember("IsDefault", .bool(false)), JSONMember("IsForced", .bool(false)),
        ]
        if since109 { stream.append(JSONMember("IsHearingImpaired", .bool(false))) }
        stream += [
            JSONMember("Type", .string("Audio")), JSONMember("Index", .integer(0)),
            JSONMember("IsExternal", .bool(false)), JSONMember("IsTextSubtitleStream", .bool(false)),
            JSONMember("SupportsExternalStream", .bool(false)), JSONMember("Level", .integer(0)),
        ]
        var streams: [JSONValue] = [.members(stream)]
        if since109, let lyrics = item.lyrics {
            var lyric: [JSONMember] = [
                JSONMember("AudioSpatialFormat", .string("None")), JSONMember("IsInterlaced", .bool(false)),
                JSONMember("IsDefault", .bool(false)), JSONMember("IsForced", .bool(false)),
                JSONMember("IsHearingImpaired", .bool(false)), JSONMember("Type", .string("Lyric")),
                JSONMember("Index", .integer(1)), JSONMember("IsExternal", .bool(false)),
                JSONMember("IsTextSubtitleStream", .bool(false)), JSONMember("SupportsExternalStream", .bool(false)),
            ]
            lyric.append(JSONMember("Path", .string(lyricsPath(source.path, lyrics: lyrics))))
            lyric.append(JSONMember("Level", .integer(0)))
            streams.append(.members(lyric))
        }
        return .array(streams)
    }

    /// The lyrics file next to a track: its path with the `.lrc` or `.txt` extension.
    static func lyricsPath(_ path: String, lyrics: TestLyrics) -> String {
        (path as NSString).deletingPathExtension + "." + lyrics.fileExtension
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
        // A series or a season is played when nothing in it is unplayed (`Folder.FillUserDataDtoValues`,
        // v10.10.7 L1745-1772: `Played = UnplayedItemCount == 0`).
        let folderPlayed =
            (item.type == "Series" || item.type == "Season") && library.unplayedCount(of: item.id) == 0
            && !library.children(of: item.id).isEmpty
        m.append(JSONMember("Played", .bool(item.played || folderPlayed)))
        m.append(JSONMember("Key", .string(userDataKey(item))))
        return .members(m)
    }

    /// `UserData.Key`: the item id, or for a track its song key, `AlbumArtist-Album-DDDD-TTTTName`
    /// (`Audio.GetUserDataKeys`, v10.10.7 L99–124; recorded as `0000-000011 Thrown Away`).
    static func userDataKey(_ item: TestItem) -> String {
        guard item.type == "Audio" else { return item.id }
        func four(_ value: Int) -> String {
            String(repeating: "0", count: max(0, 4 - String(value).count)) + String(value)
        }
        var key = item.indexNumber.map(four) ?? ""
        if let disc = item.parentIndexNumber { key = four(disc) + "-" + key }
        key += item.name
        if let album = item.album, !album.isEmpty { key = album + "-" + key }
        if let artist = item.albumArtists.first, !artist.isEmpty { key = artist + "-" + key }
        return key
    }

    /// MediaStreams: H.264 video, AC-3 audio, external SRT subtitle (string `Type`s as the live server sends).
    static func mediaStreams(_ source: TestMediaSource, item: TestItem) -> JSONValue {
        let subtitlePath = (source.path as NSString).deletingPathExtension + ".en.srt"
        let embedded: [JSONValue] =
            source.embeddedSubtitle
            ? [
                .object([
                    JSONMember("Codec", .string("subrip")), JSONMember("Language", .string("fre")),
                    JSONMember("TimeBase", .string("1/1000")), JSONMember("Title", .string("Français")),
                    JSONMember("LocalizedDefault", .string("Default")),
                    JSONMember("LocalizedExternal", .string("External")),
                    JSONMember("DisplayTitle", .string("Français - French - Default - SUBRIP")),
                    JSONMember("IsInterlaced", .bool(false)), JSONMember("IsDefault", .bool(true)),
                    JSONMember("IsForced", .bool(false)), JSONMember("IsHearingImpaired", .bool(false)),
                    JSONMember("Type", .string("Subtitle")), JSONMember("Index", .integer(3)),
                    JSONMember("IsExternal", .bool(false)), JSONMember("IsTextSubtitleStream", .bool(true)),
                    JSONMember("SupportsExternalStream", .bool(true)), JSONMember("Level", .integer(0)),
                ])
            ] : []
        return .array(
            [
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
            ] + embedded)
    }

    /// A MediaSourceInfo (one element of `MediaSources`), with `HasSegments` from 10.10.
    static func mediaSource(_ source: TestMediaSource, item: TestItem, profile: JellyfinProfile = .newest) -> JSONValue
    {
        let plain = sourceFields(source, item: item, profile: profile)
        guard let segments = hasSegments(source, profile: profile).first else { return plain }
        return plain.setting(segments.key, segments.value)
    }

    static func sourceFields(_ source: TestMediaSource, item: TestItem, profile: JellyfinProfile) -> JSONValue {
        if let audio = source.audio {
            // As the recorded track (music-assistant/thrown_away.json): no VideoType, the audio stream at index 0.
            return .object([
                JSONMember("Protocol", .string("File")), JSONMember("Id", .string(source.id)),
                JSONMember("Path", .string(source.path)), JSONMember("Type", .string("Default")),
                JSONMember("Container", .string(source.container)), JSONMember("Size", .integer(source.size)),
                JSONMember("Name", .string(source.name)), JSONMember("IsRemote", .bool(false)),
                JSONMember("ETag", .string(source.etag)), JSONMember("RunTimeTicks", .int(source.runTimeTicks)),
                JSONMember("ReadAtNativeFramerate", .bool(false)), JSONMember("IgnoreDts", .bool(false)),
                JSONMember("IgnoreIndex", .bool(false)), JSONMember("GenPtsInput", .bool(false)),
                JSONMember("SupportsTranscoding", .bool(true)), JSONMember("SupportsDirectStream", .bool(true)),
                JSONMember("SupportsDirectPlay", .bool(true)), JSONMember("IsInfiniteStream", .bool(false)),
                JSONMember("RequiresOpening", .bool(false)), JSONMember("RequiresClosing", .bool(false)),
                JSONMember("RequiresLooping", .bool(false)), JSONMember("SupportsProbing", .bool(true)),
                JSONMember("MediaStreams", audioStreams(source, item: item, profile: profile)),
                JSONMember("MediaAttachments", .array([])), JSONMember("Formats", .array([])),
                JSONMember("Bitrate", .integer(audio.bitRate)), JSONMember("RequiredHttpHeaders", .object([])),
                JSONMember("TranscodingSubProtocol", .string("http")),
                JSONMember("DefaultAudioStreamIndex", .integer(0)),
            ])
        }
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

    /// `HasSegments` (10.10+, `MediaSourceInfo.cs` L127): whether the version's item has any media segment
    /// (`BaseItem.GetVersionInfo` L1117–1119, v10.10.7; 10.11.11 L1152).
    static func hasSegments(_ source: TestMediaSource, profile: JellyfinProfile) -> [JSONMember] {
        guard profile == .v10_10 || profile == .v10_11 else { return [] }
        return [JSONMember("HasSegments", .bool(!source.segments.isEmpty))]
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
