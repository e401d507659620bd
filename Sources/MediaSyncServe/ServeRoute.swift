/// The routes `serve` answers, matched as ASP.NET matches Jellyfin's attribute routes: path segments compared
/// without regard to case, literal segments before parameters. Each case names the controller method it mirrors
/// (jellyfin/jellyfin `Jellyfin.Api/Controllers`, v10.10.7 and v10.11.11).
public enum ServeRoute: Sendable, Equatable {
    /// `SystemController.GetPublicSystemInfo` (anonymous).
    case systemInfoPublic
    /// `SystemController.GetSystemInfo`.
    case systemInfo
    /// `SystemController.PingSystem` (GET and POST; anonymous).
    case ping
    /// `UserController.AuthenticateUserByName` (anonymous).
    case authenticateByName
    /// `UserController.GetCurrentUser`.
    case currentUser
    /// `UserController.GetPublicUsers` (anonymous).
    case publicUsers
    /// `UserController.GetUserById`.
    case user(id: String)
    /// `QuickConnectController.GetQuickConnectEnabled` (anonymous).
    case quickConnectEnabled
    /// `SessionController.PostCapabilities` / `PostFullCapabilities`.
    case capabilities
    /// `PlaystateController.ReportPlaybackStart`.
    case playing
    /// `PlaystateController.ReportPlaybackProgress`.
    case playingProgress
    /// `PlaystateController.ReportPlaybackStopped`.
    case playingStopped
    /// `PlaystateController.PingPlaybackSession`.
    case playingPing
    /// `SessionController.ReportSessionEnded` (`Sessions/Logout`): the token is forgotten.
    case logout
    /// `DisplayPreferencesController.GetDisplayPreferences` (GET) / `UpdateDisplayPreferences` (POST).
    case displayPreferences(id: String)
    /// `BrandingController.GetBrandingOptions` (anonymous).
    case brandingConfiguration
    /// `BrandingController.GetBrandingCss` (anonymous).
    case brandingCss
    /// `MediaInfoController.GetBitrateTestBytes`.
    case bitrateTest
    /// `UserViewsController.GetUserViews` / `GetUserViewsLegacy` (`/UserViews` and `/Users/{userId}/Views`).
    case views(userId: String?)
    /// `ItemsController.GetItems` / `GetItemsByUserIdLegacy`.
    case items(userId: String?)
    /// `UserLibraryController.GetItem` / `GetItemLegacy`.
    case item(id: String, userId: String?)
    /// `UserLibraryController.GetLatestMedia` / `GetLatestMediaLegacy`.
    case latest(userId: String?)
    /// `ItemsController.GetResumeItems` / `GetResumeItemsLegacy`.
    case resume(userId: String?)
    /// `TvShowsController.GetSeasons`.
    case seasons(seriesId: String)
    /// `TvShowsController.GetEpisodes`.
    case episodes(seriesId: String)
    /// `TvShowsController.GetNextUp`.
    case nextUp
    /// `ImageController.GetItemImage` / `GetItemImageByIndex` (anonymous).
    case image(id: String, type: String, index: Int?)
    /// `MediaInfoController.GetPlaybackInfo` / `GetPostedPlaybackInfo`.
    case playbackInfo(id: String)
    /// `VideosController.GetVideoStream` / `GetVideoStreamByContainer`, `AudioController.GetAudioStream` /
    /// `GetAudioStreamByContainer`, `UniversalAudioController.GetUniversalAudioStream`, `LibraryController.GetDownload`
    /// and `GetFile`: the file as held.
    case stream(id: String, anonymous: Bool)
    /// `LibraryController.GetDownload`: the file of the item, or of the alternate version, with this id, as an
    /// attachment named by `Content-Disposition`.
    case download(id: String)
    /// `ArtistsController.GetArtists` (`/Artists`) and `GetAlbumArtists` (`/Artists/AlbumArtists`).
    case artists(albumArtistsOnly: Bool)
    /// `PlaylistsController.GetPlaylist`: the `PlaylistDto`.
    case playlist(id: String)
    /// `PlaylistsController.GetPlaylistItems`: the entries in order, each with its `PlaylistItemId`.
    case playlistItems(id: String)
    /// `LyricsController.GetLyrics`: the held LRC file as a `LyricDto`.
    case lyrics(id: String)
    /// `TrickplayController.GetTrickplayHlsPlaylist`: `tiles.m3u8` of a width.
    case trickplayPlaylist(id: String, width: Int)
    /// `TrickplayController.GetTrickplayTileImage`: one tile.
    case trickplayTile(id: String, width: Int, index: Int)
    /// `MediaSegmentsController.GetItemSegments`.
    case mediaSegments(id: String)
    /// `SubtitleController.GetSubtitle` / `GetSubtitleWithTicks` (anonymous).
    case subtitle(id: String, mediaSourceId: String, index: Int, format: String)
    /// `PlaystateController.MarkPlayedItem` (POST) / `MarkUnplayedItem` (DELETE), and their legacy routes.
    case playedItem(id: String, userId: String?)
    /// `ItemsController.GetItemUserData` (GET) / `UpdateItemUserData` (POST), and their legacy
    /// `/Users/{userId}/Items/{id}/UserData` forms.
    case userData(id: String, userId: String?)
    /// The WebSocket (`WebSocketManager` at `/socket`); answered by the upgrade, a plain GET is a 400.
    case socket
    /// `PlaystateController.OnPlaybackStart` (POST `PlayingItems/{id}`), `OnPlaybackProgress` (POST
    /// `…/Progress`), `OnPlaybackStopped` (DELETE), and their `/Users/{userId}` forms: the reports of older clients,
    /// with the position in the query.
    case playingItem(id: String, userId: String?, report: PlayReport)

    /// What a ``playingItem(id:userId:report:)`` reports.
    public enum PlayReport: Sendable, Equatable {
        case start, progress, stop
    }

    /// `UserLibraryController.GetIntros` / `GetIntrosLegacy` (a query result), `GetLocalTrailers` and
    /// `GetSpecialFeatures` with their legacy routes (arrays): the mirror holds none of these, so each is empty for an
    /// item that is here.
    case extras(id: String, userId: String?, kind: Extras)

    /// What ``extras(id:userId:kind:)`` asks for.
    public enum Extras: Sendable, Equatable {
        case intros, localTrailers, specialFeatures
    }

    /// The user a legacy `/Users/{userId}/…` route names.
    public var userId: String? {
        switch self {
        case .views(let userId), .items(let userId), .latest(let userId), .resume(let userId): return userId
        case .item(_, let userId), .playedItem(_, let userId), .extras(_, let userId, _),
            .playingItem(_, let userId, _), .userData(_, let userId):
            return userId
        default: return nil
        }
    }

    /// Whether Jellyfin answers it without a token.
    public var isAnonymous: Bool {
        switch self {
        case .systemInfoPublic, .ping, .authenticateByName, .publicUsers, .quickConnectEnabled,
            .brandingConfiguration, .brandingCss, .image, .subtitle, .stream(_, anonymous: true):
            return true
        default:
            return false
        }
    }
}

/// What a method and a path match.
public enum RouteMatch: Sendable, Equatable {
    case found(ServeRoute)
    /// A known path with another method: 405 with `Allow`.
    case methodNotAllowed(allowed: [String])
    case notFound
}

/// The route table: a pure function of the method and the path.
public enum RouteTable {
    private enum Segment {
        case literal(String)
        case parameter
        /// `stream`, `stream.mkv`: the prefix and an optional `.extension`.
        case withExtension(String)
    }

    private struct Entry: Sendable {
        let methods: [String]
        let pattern: [Segment]
        let make: @Sendable ([String]) -> ServeRoute?
    }

    private static func pattern(_ text: String) -> [Segment] {
        text.split(separator: "/").map { part in
            if part == "{}" { return .parameter }
            if part.hasSuffix(".{}") { return .withExtension(part.dropLast(3).lowercased()) }
            return .literal(part.lowercased())
        }
    }

    private static func entry(
        _ methods: [String], _ text: String, _ make: @escaping @Sendable ([String]) -> ServeRoute?
    )
        -> Entry
    {
        Entry(methods: methods, pattern: pattern(text), make: make)
    }

    private static let get = ["GET", "HEAD"]
    private static let file = ["GET", "HEAD"]

    private static let entries: [Entry] = [
        entry(get, "System/Info/Public") { _ in .systemInfoPublic },
        entry(get, "System/Info") { _ in .systemInfo },
        entry(["GET", "HEAD", "POST"], "System/Ping") { _ in .ping },
        entry(["POST"], "Users/AuthenticateByName") { _ in .authenticateByName },
        entry(get, "Users/Me") { _ in .currentUser },
        entry(get, "Users/Public") { _ in .publicUsers },
        entry(get, "Users/{}/Views") { .views(userId: $0[0]) },
        entry(get, "Users/{}/Items") { .items(userId: $0[0]) },
        entry(get, "Users/{}/Items/Latest") { .latest(userId: $0[0]) },
        entry(get, "Users/{}/Items/Resume") { .resume(userId: $0[0]) },
        entry(get, "Users/{}/Items/{}") { .item(id: $0[1], userId: $0[0]) },
        entry(get, "Users/{}/Items/{}/Intros") { .extras(id: $0[1], userId: $0[0], kind: .intros) },
        entry(get, "Users/{}/Items/{}/LocalTrailers") { .extras(id: $0[1], userId: $0[0], kind: .localTrailers) },
        entry(get, "Users/{}/Items/{}/SpecialFeatures") { .extras(id: $0[1], userId: $0[0], kind: .specialFeatures) },
        entry(["POST", "DELETE"], "Users/{}/PlayedItems/{}") { .playedItem(id: $0[1], userId: $0[0]) },
        entry(get, "Users/{}") { .user(id: $0[0]) },
        entry(get, "QuickConnect/Enabled") { _ in .quickConnectEnabled },
        entry(["POST"], "Sessions/Capabilities") { _ in .capabilities },
        entry(["POST"], "Sessions/Capabilities/Full") { _ in .capabilities },
        entry(["POST"], "Sessions/Playing") { _ in .playing },
        entry(["POST"], "Sessions/Playing/Progress") { _ in .playingProgress },
        entry(["POST"], "Sessions/Playing/Stopped") { _ in .playingStopped },
        entry(["POST"], "PlayingItems/{}") { .playingItem(id: $0[0], userId: nil, report: .start) },
        entry(["DELETE"], "PlayingItems/{}") { .playingItem(id: $0[0], userId: nil, report: .stop) },
        entry(["POST"], "PlayingItems/{}/Progress") { .playingItem(id: $0[0], userId: nil, report: .progress) },
        entry(["POST"], "Users/{}/PlayingItems/{}") { .playingItem(id: $0[1], userId: $0[0], report: .start) },
        entry(["DELETE"], "Users/{}/PlayingItems/{}") { .playingItem(id: $0[1], userId: $0[0], report: .stop) },
        entry(["POST"], "Users/{}/PlayingItems/{}/Progress") {
            .playingItem(id: $0[1], userId: $0[0], report: .progress)
        },
        entry(["POST"], "Sessions/Playing/Ping") { _ in .playingPing },
        entry(["POST"], "Sessions/Logout") { _ in .logout },
        entry(["GET", "HEAD", "POST"], "DisplayPreferences/{}") { .displayPreferences(id: $0[0]) },
        entry(get, "Branding/Configuration") { _ in .brandingConfiguration },
        entry(get, "Branding/Css") { _ in .brandingCss },
        entry(get, "Branding/Css.css") { _ in .brandingCss },
        entry(get, "Playback/BitrateTest") { _ in .bitrateTest },
        entry(get, "UserViews") { _ in .views(userId: nil) },
        entry(get, "Items") { _ in .items(userId: nil) },
        entry(get, "Items/Latest") { _ in .latest(userId: nil) },
        entry(get, "UserItems/Resume") { _ in .resume(userId: nil) },
        entry(get, "Items/{}") { .item(id: $0[0], userId: nil) },
        entry(get, "Items/{}/Intros") { .extras(id: $0[0], userId: nil, kind: .intros) },
        entry(get, "Items/{}/LocalTrailers") { .extras(id: $0[0], userId: nil, kind: .localTrailers) },
        entry(get, "Items/{}/SpecialFeatures") { .extras(id: $0[0], userId: nil, kind: .specialFeatures) },
        entry(["GET", "POST"], "Items/{}/PlaybackInfo") { .playbackInfo(id: $0[0]) },
        entry(file, "Items/{}/Download") { .download(id: $0[0]) },
        // `LibraryController.GetFile` (`[Authorize]`, v10.10.7 L98): the item's file.
        entry(file, "Items/{}/File") { .stream(id: $0[0], anonymous: false) },
        entry(get, "Artists") { _ in .artists(albumArtistsOnly: false) },
        entry(get, "Artists/AlbumArtists") { _ in .artists(albumArtistsOnly: true) },
        entry(get, "Playlists/{}") { .playlist(id: $0[0]) },
        entry(get, "Playlists/{}/Items") { .playlistItems(id: $0[0]) },
        entry(get, "Audio/{}/Lyrics") { .lyrics(id: $0[0]) },
        // `TrickplayController` (`[Authorize]`, L50 and L79, v10.10.7): the playlist's literal name wins over a tile.
        entry(get, "Videos/{}/Trickplay/{}/tiles.m3u8") { parts in
            Int(parts[1]).map { .trickplayPlaylist(id: parts[0], width: $0) }
        },
        entry(file, "Videos/{}/Trickplay/{}/{}") { parts in
            guard let width = Int(parts[1]), parts[2].lowercased().hasSuffix(".jpg"),
                let index = Int(parts[2].dropLast(4)), index >= 0
            else { return nil }
            return .trickplayTile(id: parts[0], width: width, index: index)
        },
        // `MediaSegmentsController.GetItemSegments` (`[Authorize]`, L45, v10.10.7).
        entry(get, "MediaSegments/{}") { .mediaSegments(id: $0[0]) },
        entry(file, "Items/{}/Images/{}") { .image(id: $0[0], type: $0[1], index: nil) },
        entry(file, "Items/{}/Images/{}/{}") { parts in
            Int(parts[2]).map { .image(id: parts[0], type: parts[1], index: $0) }
        },
        entry(["POST", "DELETE"], "UserPlayedItems/{}") { .playedItem(id: $0[0], userId: nil) },
        entry(["GET", "POST"], "UserItems/{}/UserData") { .userData(id: $0[0], userId: nil) },
        entry(["GET", "POST"], "Users/{}/Items/{}/UserData") { .userData(id: $0[1], userId: $0[0]) },
        entry(get, "Shows/NextUp") { _ in .nextUp },
        entry(get, "Shows/{}/Seasons") { .seasons(seriesId: $0[0]) },
        entry(get, "Shows/{}/Episodes") { .episodes(seriesId: $0[0]) },
        // `VideosController.GetVideoStream` and `AudioController.GetAudioStream` carry no `[Authorize]` (v10.10.7 L312,
        // L89; v10.11.11 the same): players fetch them without a token. `GetUniversalAudioStream` and
        // `LibraryController.GetDownload` do need one.
        entry(file, "Videos/{}/stream.{}") { .stream(id: $0[0], anonymous: true) },
        entry(file, "Audio/{}/stream.{}") { .stream(id: $0[0], anonymous: true) },
        entry(file, "Audio/{}/universal") { .stream(id: $0[0], anonymous: false) },
        entry(file, "Videos/{}/{}/Subtitles/{}/Stream.{}") { parts in
            guard let index = Int(parts[2]), !parts[3].isEmpty else { return nil }
            return .subtitle(id: parts[0], mediaSourceId: parts[1], index: index, format: parts[3])
        },
        entry(file, "Videos/{}/{}/Subtitles/{}/{}/Stream.{}") { parts in
            guard let index = Int(parts[2]), Int64(parts[3]) != nil, !parts[4].isEmpty else { return nil }
            return .subtitle(id: parts[0], mediaSourceId: parts[1], index: index, format: parts[4])
        },
        entry(["GET"], "socket") { _ in .socket },
    ]

    /// The path's segments, percent-decoded (empty segments dropped, as ASP.NET's matcher does).
    public static func segments(_ path: String) -> [String] {
        path.split(separator: "/").map { PercentDecoding.decode(String($0), plusIsSpace: false) }
    }

    /// Matches `method` and `path` (without its query). Among the patterns a path fits, those with the most literal
    /// segments decide (ASP.NET's route precedence: `Users/AuthenticateByName` before `Users/{userId}`, whose
    /// parameter is a `Guid` there); a path they fit with another method is a 405.
    public static func match(method: String, path: String) -> RouteMatch {
        let parts = segments(path)
        var best = -1
        var found: ServeRoute?
        var allowed: Set<String> = []
        for entry in entries {
            guard let captured = capture(entry.pattern, parts), let route = entry.make(captured) else { continue }
            let literals = entry.pattern.filter { if case .parameter = $0 { return false } else { return true } }.count
            if literals > best {
                best = literals
                found = nil
                allowed = []
            }
            guard literals == best else { continue }
            if found == nil && entry.methods.contains(method.uppercased()) { found = route }
            allowed.formUnion(entry.methods)
        }
        if let found { return .found(found) }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed.sorted())
    }

    private static func capture(_ pattern: [Segment], _ parts: [String]) -> [String]? {
        guard pattern.count == parts.count else { return nil }
        var captured: [String] = []
        for (segment, part) in zip(pattern, parts) {
            switch segment {
            case .literal(let literal):
                guard part.lowercased() == literal else { return nil }
            case .parameter:
                captured.append(part)
            case .withExtension(let prefix):
                let lower = part.lowercased()
                if lower == prefix {
                    captured.append("")
                } else if lower.hasPrefix(prefix + "."), lower.count > prefix.count + 1 {
                    captured.append(String(part.dropFirst(prefix.count + 1)))
                } else {
                    return nil
                }
            }
        }
        return captured
    }
}
