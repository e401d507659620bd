import Foundation
import MediaSyncCore
import MediaSyncJSON
import MediaSyncMirror

/// The JSON `serve` answers with, in the shapes Jellyfin 10.10/10.11 sends (checked against the 10.8.10
/// recordings in `../shared/jellyfin-api`): members in Jellyfin's order, PascalCase keys.
struct JellyfinDTO: Sendable {
    let serverId: String
    let serverName: String
    let version: String
    let userId: String
    let userName: String

    /// The version `serve` says it is: the routes it answers are 10.10's and 10.11's (10.9's new ones included),
    /// with the legacy `/Users/{userId}/…` aliases 10.8 clients use.
    static let jellyfinVersion = "10.10.7"

    static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(JSONObject(members.map { JSONMember($0.0, $0.1) }))
    }

    static func number<T: BinaryInteger>(_ value: T) -> JSONValue { .number(Double(value)) }

    /// `PublicSystemInfo` (`SystemController.GetPublicSystemInfo`).
    func publicSystemInfo(localAddress: String) -> JSONValue {
        Self.object([
            ("LocalAddress", .string(localAddress)), ("ServerName", .string(serverName)),
            ("Version", .string(version)), ("ProductName", .string("Jellyfin Server")),
            ("OperatingSystem", .string("Linux")), ("Id", .string(serverId)),
            ("StartupWizardCompleted", .bool(true)),
        ])
    }

    /// `SystemInfo` (`SystemController.GetSystemInfo`): the public part and what a client reads of the rest.
    func systemInfo(localAddress: String, port: Int) -> JSONValue {
        Self.object([
            ("OperatingSystemDisplayName", .string("Linux")), ("HasPendingRestart", .bool(false)),
            ("IsShuttingDown", .bool(false)), ("SupportsLibraryMonitor", .bool(false)),
            ("WebSocketPortNumber", Self.number(port)), ("CompletedInstallations", .array([])),
            ("CanSelfRestart", .bool(false)), ("CanLaunchWebBrowser", .bool(false)),
            ("HasUpdateAvailable", .bool(false)), ("EncoderLocation", .string("NotFound")),
            ("SystemArchitecture", .string("X64")), ("LocalAddress", .string(localAddress)),
            ("ServerName", .string(serverName)), ("Version", .string(version)),
            ("OperatingSystem", .string("Linux")), ("Id", .string(serverId)),
            ("StartupWizardCompleted", .bool(true)),
        ])
    }

    /// `UserDto`: the one user, no administrator, downloads and playback allowed, no transcoding (there is none).
    func user(lastLogin: String) -> JSONValue {
        Self.object([
            ("Name", .string(userName)), ("ServerId", .string(serverId)), ("Id", .string(userId)),
            ("HasPassword", .bool(true)), ("HasConfiguredPassword", .bool(true)),
            ("HasConfiguredEasyPassword", .bool(false)), ("EnableAutoLogin", .bool(false)),
            ("LastLoginDate", .string(lastLogin)), ("LastActivityDate", .string(lastLogin)),
            (
                "Configuration",
                Self.object([
                    ("AudioLanguagePreference", .string("")), ("PlayDefaultAudioTrack", .bool(true)),
                    ("SubtitleLanguagePreference", .string("")), ("DisplayMissingEpisodes", .bool(false)),
                    ("GroupedFolders", .array([])), ("SubtitleMode", .string("Default")),
                    ("DisplayCollectionsView", .bool(false)), ("EnableLocalPassword", .bool(false)),
                    ("OrderedViews", .array([])), ("LatestItemsExcludes", .array([])),
                    ("MyMediaExcludes", .array([])), ("HidePlayedInLatest", .bool(true)),
                    ("RememberAudioSelections", .bool(true)), ("RememberSubtitleSelections", .bool(true)),
                    ("EnableNextEpisodeAutoPlay", .bool(true)),
                ])
            ),
            (
                "Policy",
                Self.object([
                    ("IsAdministrator", .bool(false)), ("IsHidden", .bool(true)), ("IsDisabled", .bool(false)),
                    ("BlockedTags", .array([])), ("EnableUserPreferenceAccess", .bool(true)),
                    ("AccessSchedules", .array([])), ("BlockUnratedItems", .array([])),
                    ("EnableRemoteControlOfOtherUsers", .bool(false)), ("EnableSharedDeviceControl", .bool(false)),
                    ("EnableRemoteAccess", .bool(true)), ("EnableLiveTvManagement", .bool(false)),
                    ("EnableLiveTvAccess", .bool(false)), ("EnableMediaPlayback", .bool(true)),
                    ("EnableAudioPlaybackTranscoding", .bool(false)),
                    ("EnableVideoPlaybackTranscoding", .bool(false)), ("EnablePlaybackRemuxing", .bool(false)),
                    ("ForceRemoteSourceTranscoding", .bool(false)), ("EnableContentDeletion", .bool(false)),
                    ("EnableContentDeletionFromFolders", .array([])), ("EnableContentDownloading", .bool(true)),
                    ("EnableSyncTranscoding", .bool(false)), ("EnableMediaConversion", .bool(false)),
                    ("EnabledDevices", .array([])), ("EnableAllDevices", .bool(true)),
                    ("EnabledChannels", .array([])), ("EnableAllChannels", .bool(true)),
                    ("EnabledFolders", .array([])), ("EnableAllFolders", .bool(true)),
                    ("InvalidLoginAttemptCount", .number(0)), ("LoginAttemptsBeforeLockout", .number(-1)),
                    ("MaxActiveSessions", .number(0)), ("EnablePublicSharing", .bool(false)),
                    ("BlockedMediaFolders", .array([])), ("BlockedChannels", .array([])),
                    ("RemoteClientBitrateLimit", .number(0)),
                    (
                        "AuthenticationProviderId",
                        .string("Jellyfin.Server.Implementations.Users.DefaultAuthenticationProvider")
                    ),
                    (
                        "PasswordResetProviderId",
                        .string("Jellyfin.Server.Implementations.Users.DefaultPasswordResetProvider")
                    ),
                    ("SyncPlayAccess", .string("None")),
                ])
            ),
        ])
    }

    /// `AuthenticationResult` (`UserController.AuthenticateUserByName`).
    func authenticationResult(token: String, client: ClientAuthorization, now: String) -> JSONValue {
        let session = Self.object([
            (
                "PlayState",
                Self.object([
                    ("CanSeek", .bool(false)), ("IsPaused", .bool(false)), ("IsMuted", .bool(false)),
                    ("RepeatMode", .string("RepeatNone")),
                    // Always sent by Jellyfin (`PlayerStateInfo.PlaybackOrder`, v10.10.7 and v10.11.11); clients
                    // built on jellyfin-sdk-kotlin cannot read a sign-in answer without it.
                    ("PlaybackOrder", .string("Default")),
                ])
            ),
            ("AdditionalUsers", .array([])),
            (
                "Capabilities",
                Self.object([
                    ("PlayableMediaTypes", .array([])), ("SupportedCommands", .array([])),
                    ("SupportsMediaControl", .bool(false)), ("SupportsPersistentIdentifier", .bool(true)),
                ])
            ),
            ("RemoteEndPoint", .string("")), ("PlayableMediaTypes", .array([])),
            ("Id", .string(ServeIds.hex32("session:\(token)"))), ("UserId", .string(userId)),
            ("UserName", .string(userName)), ("Client", .string(client.client ?? "")),
            ("LastActivityDate", .string(now)), ("LastPlaybackCheckIn", .string("0001-01-01T00:00:00.0000000Z")),
            ("DeviceName", .string(client.device ?? "")), ("DeviceId", .string(client.deviceId ?? "")),
            ("ApplicationVersion", .string(client.version ?? "")), ("IsActive", .bool(true)),
            ("SupportsMediaControl", .bool(false)), ("SupportsRemoteControl", .bool(false)),
            ("NowPlayingQueue", .array([])), ("NowPlayingQueueFullItems", .array([])),
            ("HasCustomDeviceName", .bool(false)), ("ServerId", .string(serverId)),
            ("SupportedCommands", .array([])),
        ])
        return Self.object([
            ("User", user(lastLogin: now)), ("SessionInfo", session), ("AccessToken", .string(token)),
            ("ServerId", .string(serverId)),
        ])
    }

    /// `UserItemDataDto`.
    ///
    /// While no mark was made here the home server's own object is answered (its `PlayedPercentage` as it sent it,
    /// or none, and any field it has besides); a mark changes what it changes.
    /// - Parameter raw: the item's upstream object, when the caller has it parsed.
    func userData(
        _ item: CatalogItem, _ state: UserState, unplayedCount: Int? = nil, raw: JSONObject? = nil
    ) -> JSONValue {
        let upstream = (raw.map { $0["UserData"]?.objectValue } ?? item.upstreamUserData) ?? JSONObject()
        let own = upstream.isEmpty || state != UserState.upstream(item)
        var members: [(String, JSONValue)] = []
        if item.isFolder, let unplayedCount { members.append(("UnplayedItemCount", Self.number(unplayedCount))) }
        if item.isPlayable, let runtime = item.runTimeTicks, runtime > 0, state.positionTicks > 0 {
            if own {
                members.append(
                    ("PlayedPercentage", .number(min(100, Double(state.positionTicks) / Double(runtime) * 100))))
            } else if let given = upstream["PlayedPercentage"] {
                members.append(("PlayedPercentage", given))
            }
        }
        members += [
            ("PlaybackPositionTicks", Self.number(state.positionTicks)), ("PlayCount", Self.number(state.playCount)),
            ("IsFavorite", .bool(state.isFavorite)),
        ]
        if let last = state.lastPlayed { members.append(("LastPlayedDate", .string(last))) }
        // The home server's key (a track's is made of its album and number, not its id), else the id.
        let key = upstream["Key"] ?? .string(item.id)
        members += [("Played", .bool(state.played)), ("Key", key), ("ItemId", .string(item.id))]
        let answered = Set(members.map(\.0) + ["PlayedPercentage", "LastPlayedDate"])
        members += upstream.members.filter { !answered.contains($0.key) }.map { ($0.key, $0.value) }
        return Self.object(members)
    }

    /// One `MediaSourceInfo` for a version held: direct play of the file as it is (no transcoding, no path).
    /// - Parameter externalFormats: the subtitle formats the client takes as external files (its device profile's
    ///   `SubtitleProfiles` with `Method` `External`, lowercased); nil when it sent none. A held subtitle is offered
    ///   in its own format when the client takes it, else as WebVTT when that can be made from it, as Jellyfin's
    ///   `StreamBuilder.GetSubtitleProfile` picks a format the server's encoder can convert to.
    /// - Parameter raw: the item's upstream object, when the caller has it parsed.
    func mediaSource(
        _ item: CatalogItem, _ version: HeldVersion, externalFormats: Set<String>? = nil, raw: JSONObject? = nil
    ) -> JSONValue {
        let upstream =
            ((raw ?? item.raw)["MediaSources"]?.arrayValue ?? []).first { $0["Id"]?.stringValue == version.id }?
            .objectValue ?? JSONObject()
        let upstreamStreams = (upstream["MediaStreams"]?.arrayValue ?? []).compactMap(\.objectValue)
        var streams = upstreamStreams.filter { stream in
            // External subtitles the mirror does not hold are left out; embedded streams are in the file. A track's
            // `Lyric` stream (10.9+) stays when its lyrics are held (`/Audio/{id}/Lyrics` answers them), else not.
            if stream["Type"]?.stringValue == "Lyric" { return item.lyrics != nil }
            return !(stream["IsExternal"]?.boolValue ?? false)
        }.map { stream in
            var stream = stream
            stream["Path"] = nil
            return stream
        }
        if let codec = version.transcodeCodec {
            // A transcode the mirror holds: its audio is the codec asked for, at most the bit rate asked for (the
            // upstream stream describes the original file).
            streams = streams.map { stream in
                guard stream["Type"]?.stringValue == "Audio" else { return stream }
                var stream = stream
                stream["Codec"] = .string(codec)
                stream["BitRate"] = version.transcodeBitrate.map { Self.number($0) }
                stream["BitDepth"] = nil
                stream["DisplayTitle"] = nil
                return stream
            }
        }
        for subtitle in version.subtitles {
            // The upstream stream as the home server listed it (its `IsDefault`, `DisplayTitle`, `Title`…), when it
            // did.
            var stream =
                upstreamStreams.first { $0["Index"]?.intValue == Int64(subtitle.index) }
                ?? JSONObject([
                    JSONMember("Codec", .string(subtitle.format)), JSONMember("Language", .string(subtitle.language)),
                    JSONMember("Type", .string("Subtitle")), JSONMember("Index", Self.number(subtitle.index)),
                ])
            streams.removeAll { $0["Index"]?.intValue == Int64(subtitle.index) }
            // Fields a `MediaStream` always carries (`MediaBrowser.Model/Entities/MediaStream.cs`), for a subtitle
            // the upstream object did not list (one it listed is passed on as it was).
            if !upstreamStreams.contains(where: { $0["Index"]?.intValue == Int64(subtitle.index) }) {
                for (key, value) in [
                    ("VideoRange", JSONValue.string("Unknown")), ("VideoRangeType", .string("Unknown")),
                    ("IsInterlaced", .bool(false)), ("IsDefault", .bool(false)), ("IsHearingImpaired", .bool(false)),
                ] where stream[key] == nil {
                    stream[key] = value
                }
            }
            stream["IsExternal"] = .bool(true)
            stream["IsForced"] = .bool(subtitle.forced)
            stream["IsTextSubtitleStream"] = .bool(true)
            stream["SupportsExternalStream"] = .bool(true)
            stream["DeliveryMethod"] = .string("External")
            var format = subtitle.format.lowercased()
            if let taken = externalFormats, !taken.contains(format),
                let other = taken.sorted().first(where: { SubtitleText.canConvert(from: format, to: $0) })
            {
                format = other
            }
            stream["DeliveryUrl"] = .string(
                "/Videos/\(item.id)/\(version.id)/Subtitles/\(subtitle.index)/0/Stream.\(format)")
            stream["Path"] = nil
            streams.append(stream)
        }
        streams.sort { ($0["Index"]?.intValue ?? 0) < ($1["Index"]?.intValue ?? 0) }
        let isAudio = item.type == "Audio" || item.type == "AudioBook"
        // An original's `ETag` is the home server's (what a mirror of this mirror compares to see a change); a
        // transcode's is the held file's own.
        let fileTag = JSONValue.string(version.file.etag.replacingOccurrences(of: "\"", with: ""))
        var members: [(String, JSONValue)] = [
            ("Protocol", .string("File")), ("Id", .string(version.id)), ("Type", .string("Default")),
            ("Container", .string(version.container)), ("Size", Self.number(version.file.size)),
            ("Name", upstream["Name"] ?? .string(item.name)), ("IsRemote", .bool(false)),
            (
                "ETag",
                version.transcodeCodec == nil ? upstream["ETag"] ?? fileTag : fileTag
            ),
        ]
        if let runtime = upstream["RunTimeTicks"] ?? item.runTimeTicks.map({ Self.number($0) }) {
            members.append(("RunTimeTicks", runtime))
        }
        members += [
            ("ReadAtNativeFramerate", .bool(false)), ("IgnoreDts", .bool(false)), ("IgnoreIndex", .bool(false)),
            ("GenPtsInput", .bool(false)), ("SupportsTranscoding", .bool(false)),
            ("SupportsDirectStream", .bool(true)), ("SupportsDirectPlay", .bool(true)),
            ("IsInfiniteStream", .bool(false)), ("UseMostCompatibleTranscodingProfile", .bool(false)),
            ("RequiresOpening", .bool(false)), ("RequiresClosing", .bool(false)), ("RequiresLooping", .bool(false)),
            ("SupportsProbing", .bool(true)),
        ]
        if !isAudio { members.append(("VideoType", .string("VideoFile"))) }
        members += [
            ("MediaStreams", .array(streams.map { .object($0) })), ("MediaAttachments", .array([])),
            ("Formats", .array([])),
        ]
        if let bitrate = version.transcodeCodec == nil ? upstream["Bitrate"] : version.transcodeBitrate.map(Self.number)
        {
            members.append(("Bitrate", bitrate))
        }
        members += [("RequiredHttpHeaders", .object(JSONObject())), ("TranscodingSubProtocol", .string("http"))]
        for key in ["DefaultAudioStreamIndex", "DefaultSubtitleStreamIndex"] {
            if let value = upstream[key] { members.append((key, value)) }
        }
        // True where the mirror holds the version's segments (a client asks for them only then).
        members.append(("HasSegments", .bool(version.segments != nil)))
        // How the file is delivered is `serve`'s own; every other field is the home server's, as the mirror holds
        // it (a mirror of this mirror then records the same source).
        // A field the home server did not send is not added (`serve`'s own defaults stand only for a version with no
        // upstream source, such as a podcast episode's).
        members = members.compactMap { key, value in
            if Self.deliveryFields.contains(key) || upstream.isEmpty { return (key, value) }
            return upstream[key].map { (key, $0) }
        }
        let answered = Set(members.map(\.0))
        for member in upstream.members
        where !answered.contains(member.key) && !Self.withheldSourceFields.contains(member.key) {
            members.append((member.key, member.value))
        }
        return Self.object(members)
    }

    /// The `MediaSourceInfo` fields that say how `serve` delivers a version: its own, whatever the home server said.
    static let deliveryFields: Set<String> = [
        "Protocol", "Id", "Container", "Size", "IsRemote", "ETag", "Bitrate", "SupportsTranscoding",
        "SupportsDirectStream", "SupportsDirectPlay", "MediaStreams", "TranscodingSubProtocol", "HasSegments",
    ]

    /// Fields of the home server's source never passed on: where its file is, and how it transcodes or opens it.
    static let withheldSourceFields: Set<String> = [
        "Path", "TranscodingUrl", "TranscodingContainer", "DirectStreamUrl", "EncoderPath", "EncoderProtocol",
        "OpenToken", "LiveStreamId", "TranscodeReasons",
    ]

    /// A `BaseItemDto`: the upstream object with `serve`'s ids, parent, user data, images and media sources.
    /// - Parameter fields: the `Fields` asked for (lowercased), nil for every field (a single item,
    ///   `UserLibraryController.GetItem`, answers with all of them). `CanDelete`, `CanDownload`, the item's own
    ///   `MediaStreams` and a series' or season's `ChildCount` are sent only when asked, as `DtoService` sets them
    ///   (`ContainsField`, v10.10.7 L233-245, L391-393, L1074); an album's, a playlist's and a collection's count
    ///   always (L377-388: from their children).
    func item(
        _ item: CatalogItem, state: UserState, unplayedCount: Int?, childCount: Int?, withMediaSources: Bool,
        fields: Set<String>? = nil
    ) -> JSONValue {
        func wants(_ field: String) -> Bool { fields?.contains(field) ?? true }
        // The upstream object, parsed once for this answer.
        let raw = item.raw
        var object: JSONObject
        if raw["Id"] != nil {
            object = raw
        } else {
            object = JSONObject([
                JSONMember("Name", .string(item.name)), JSONMember("ServerId", .string(serverId)),
                JSONMember("Id", .string(item.id)),
            ])
            if let created = item.dateCreated { object["DateCreated"] = .string(created) }
            object["SortName"] = .string(item.sortName)
            if let premiere = item.premiereDate { object["PremiereDate"] = .string(premiere) }
            if let runtime = item.runTimeTicks { object["RunTimeTicks"] = Self.number(runtime) }
            object["IsFolder"] = .bool(item.isFolder)
            object["Type"] = .string(item.type)
            object.merge(raw)
            switch item.type {
            case "CollectionFolder", "UserView", "MusicArtist": object["MediaType"] = .string("Unknown")
            case "MusicAlbum":
                // `BaseItemDto.MediaType` is always sent, "Unknown" for a folder.
                object["MediaType"] = .string("Unknown")
                object["Artists"] = .array([raw["AlbumArtist"] ?? .string(item.name)])
            case "Audio", "AudioBook":
                object["MediaType"] = .string("Audio")
                if let version = item.versions.first { object["Container"] = .string(version.container) }
            default: break
            }
        }
        object["ServerId"] = .string(serverId)
        object["Path"] = nil
        object["ParentId"] = item.parentId.map { .string($0) }
        object["LocationType"] = .string("FileSystem")
        object["CanDelete"] = wants("candelete") ? .bool(false) : nil
        object["CanDownload"] = wants("candownload") ? .bool(item.isPlayable) : nil
        let counted = raw["Id"] == nil || !["Series", "Season"].contains(item.type) || wants("childcount")
        if let childCount, counted { object["ChildCount"] = Self.number(childCount) }
        var tags = JSONObject()
        for type in item.images.keys.sorted()
        where type != "Backdrop" && LibraryLayout.chapterIndex(imageType: type) == nil {
            let upstreamTag = raw["ImageTags"]?[type]?.stringValue
            tags[type] = .string(upstreamTag ?? imageTag(item.images[type]))
        }
        object["ImageTags"] = .object(tags)
        if let backdrop = item.images["Backdrop"] {
            let upstreamTag = raw["BackdropImageTags"]?.arrayValue?.first?.stringValue
            object["BackdropImageTags"] = .array([.string(upstreamTag ?? imageTag(backdrop))])
        } else {
            object["BackdropImageTags"] = .array([])
        }
        object["UserData"] = userData(item, state, unplayedCount: unplayedCount, raw: raw)
        object["Chapters"] = wants("chapters") ? chapters(item, raw: raw) : nil
        object["Trickplay"] = wants("trickplay") ? trickplay(item) : nil
        object["MediaSources"] = nil
        object["MediaStreams"] = nil
        // A book has no media sources on Jellyfin (`Book` is not `IHasMediaSources`): its file is its Download.
        if withMediaSources && item.isPlayable && item.type != "Book" {
            let sources = item.versions.map { mediaSource(item, $0, raw: raw) }
            object["MediaSources"] = .array(sources)
            // The item's own streams are its primary version's, the source whose id is the item's
            // (`DtoService.AttachBasicFields`, v10.10.7); the first source's when none is.
            let primary =
                sources.first { ServeIds.plain($0["Id"]?.stringValue ?? "") == ServeIds.plain(item.id) }
                ?? sources.first
            if wants("mediastreams") { object["MediaStreams"] = primary?["MediaStreams"] ?? .array([]) }
        }
        return .object(object)
    }

    func imageTag(_ file: HeldFile?) -> String {
        guard let file else { return "" }
        return ServeIds.hex32("\(file.size):\(file.modified)")
    }

    /// `DisplayPreferencesDto` as Jellyfin makes it for a client that saved none.
    func displayPreferences(id: String, client: String) -> JSONValue {
        Self.object([
            ("Id", .string(id)), ("SortBy", .string("SortName")), ("RememberIndexing", .bool(false)),
            ("PrimaryImageHeight", .number(250)), ("PrimaryImageWidth", .number(250)),
            ("CustomPrefs", .object(JSONObject())), ("ScrollDirection", .string("Horizontal")),
            ("ShowBackdrop", .bool(true)), ("RememberSorting", .bool(false)), ("SortOrder", .string("Ascending")),
            ("ShowSidebar", .bool(false)), ("Client", .string(client)),
        ])
    }

    /// `BrandingOptions`.
    static let branding = object([
        ("LoginDisclaimer", .string("")), ("CustomCss", .string("")), ("SplashscreenEnabled", .bool(false)),
    ])
}
