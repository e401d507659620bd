import Foundation
import HTTPTypes
import Hummingbird
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncMirror
import NIOCore

/// A request's context: Hummingbird's, and the event loop of the request's connection (file bodies pace themselves
/// by it).
struct ServeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection: a file is written to it below Hummingbird's codec (``FileStream``).
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}

/// Answers every HTTP request: CORS, the route table, the token check, then the route's handler.
struct ServeResponder: HTTPResponder {
    typealias Context = ServeRequestContext

    let state: ServeState

    /// CORS as Jellyfin sends it: any origin, method and header (`Jellyfin.Server/Configuration/CorsPolicyProvider.cs`
    /// L26-46, used by `Startup.cs` L170; v10.10.7).
    static let corsMethods = "GET, POST, DELETE, HEAD, OPTIONS"
    static let corsHeaders =
        "Accept, Accept-Language, Authorization, Cache-Control, Content-Type, Origin, Range, X-Emby-Authorization, "
        + "X-Emby-Token, X-MediaBrowser-Token, X-Requested-With"

    func respond(to request: Request, context: Context) async throws -> Response {
        // The page has its own rules (and no CORS: only the page itself may use it).
        if WebResponder.handles(request.uri.path) { return await WebResponder(state: state).respond(to: request) }
        var response: Response
        do {
            response = try await answer(request, context: context)
        } catch let failure as ServeFailure {
            response = Self.status(failure.status, text: failure.message)
        }
        Self.setHeader(&response.headers, "Access-Control-Allow-Origin", "*")
        return response
    }

    private func answer(_ request: Request, context: Context) async throws -> Response {
        let method = request.method.rawValue
        if method == "OPTIONS" {
            var response = Response(status: .noContent)
            Self.setHeader(&response.headers, "Access-Control-Allow-Methods", Self.corsMethods)
            let asked = request.headers[.accessControlRequestHeaders]
            Self.setHeader(&response.headers, "Access-Control-Allow-Headers", asked ?? Self.corsHeaders)
            Self.setHeader(&response.headers, "Access-Control-Max-Age", "86400")
            return response
        }
        let route: ServeRoute
        switch RouteTable.match(method: method, path: request.uri.path) {
        case .found(let found): route = found
        case .notFound: return Self.status(.notFound)
        case .methodNotAllowed(let allowed):
            var response = Self.status(.methodNotAllowed)
            Self.setHeader(&response.headers, "Allow", allowed.joined(separator: ", "))
            return response
        }
        let query = RequestQuery(request.uri.query)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let authorization = ClientAuthorization.read(headers: headers, query: query)
        let client = state.client(forToken: authorization.token)
        if !route.isAnonymous && client == nil { return Self.status(.unauthorized) }
        let call = Call(
            request: request, context: context, query: query, authorization: authorization, client: client,
            head: request.method == .head)
        return try await handle(route, call)
    }

    /// One request, as the handlers read it.
    struct Call {
        var request: Request
        let context: Context
        let query: RequestQuery
        let authorization: ClientAuthorization
        let client: ClientAuthorization?
        let head: Bool

        /// The client's key for play tracking: its device id, else its token.
        var clientKey: String { client?.deviceId ?? authorization.deviceId ?? authorization.token ?? "anonymous" }

        /// The JSON body's object (keys compared without case by ``field(_:_:)``), nil when there is none.
        mutating func body() async throws -> JSONObject? {
            let buffer = try await request.collectBody(upTo: 1 << 20)
            let bytes = Array(buffer.readableBytesView)
            guard !bytes.isEmpty else { return nil }
            guard let value = try? JSONValue(parsing: bytes) else { throw ServeFailure(.badRequest, "not JSON") }
            return value.objectValue
        }
    }

    private func handle(_ route: ServeRoute, _ call: Call) async throws -> Response {
        var call = call
        let dto = state.dto
        // Another user's items are refused as Jellyfin refuses them to a user who is not an administrator
        // (`RequestHelpers.GetUserId` throws `SecurityException`, which `ExceptionMiddleware` answers with 403;
        // v10.10.7). The one user here is not an administrator.
        if !route.isAnonymous, let asked = route.userId ?? call.query.nonEmpty("userId"),
            ServeIds.plain(asked) != dto.userId
        {
            return Self.status(.forbidden)
        }
        switch route {
        case .systemInfoPublic:
            return Self.json(dto.publicSystemInfo(localAddress: localAddress))
        case .systemInfo:
            return Self.json(dto.systemInfo(localAddress: localAddress, port: port))
        case .ping:
            return Self.json(.string("Jellyfin Server"))
        case .authenticateByName:
            return try await authenticate(&call)
        case .currentUser:
            return Self.json(dto.user(lastLogin: now))
        case .user(let id):
            guard ServeIds.plain(id) == dto.userId else {
                return Self.status(.notFound)
            }
            return Self.json(dto.user(lastLogin: now))
        case .publicUsers:
            // Jellyfin lists only users that are not hidden (`UserController.GetPublicUsers`); serve's one user is
            // hidden, so a client shows its manual sign-in form and the name is not given away.
            return Self.json(.array([]))
        case .quickConnectEnabled:
            return Self.json(.bool(false))
        case .capabilities, .playingPing:
            return Response(status: .noContent)
        case .logout:
            if let token = call.authorization.token { state.tokens.revoke(token) }
            return Response(status: .noContent)
        case .playing, .playingProgress, .playingStopped:
            return try await playback(route, &call)
        case .playingItem(let id, _, let report):
            return try played(
                report, itemId: id, position: call.query.int64("PositionTicks"),
                session: call.query.nonEmpty("PlaySessionId"), call)
        case .displayPreferences(let id):
            if call.request.method == .post { return Response(status: .noContent) }
            return Self.json(dto.displayPreferences(id: id, client: call.query.string("client") ?? "emby"))
        case .brandingConfiguration:
            return Self.json(JellyfinDTO.branding)
        case .brandingCss:
            return Self.text("", contentType: "text/css")
        case .bitrateTest:
            return bitrateTest(call)
        case .views:
            let catalog = state.catalog()
            let items = catalog.views.map { itemDTO($0, catalog, withMediaSources: false) }
            return Self.json(Self.queryResult(items, total: items.count, start: 0))
        case .items:
            return try items(call)
        case .item(let id, _):
            let catalog = state.catalog()
            // An alternate version's id is an item of its own on Jellyfin.
            let item = try (ServeIds.isAcceptable(id) ? catalog.alternate(id) : nil) ?? lookup(id, catalog)
            return Self.json(itemDTO(item, catalog, withMediaSources: true))
        case .extras(let id, _, let kind):
            _ = try lookup(id, state.catalog())
            return Self.json(kind == .intros ? Self.queryResult([], total: 0, start: 0) : .array([]))
        case .latest:
            return latest(call)
        case .resume:
            return resume(call)
        case .seasons(let seriesId):
            let catalog = state.catalog()
            let series = try lookup(seriesId, catalog)
            let seasons = (catalog.children[series.id] ?? []).compactMap { catalog.items[$0] }
                .sorted { ($0.indexNumber ?? 0, $0.id) < ($1.indexNumber ?? 0, $1.id) }
            let fields = ItemQuery(call.query).fields
            let items = seasons.map {
                itemDTO($0, catalog, withMediaSources: fields.contains("mediasources"), fields: fields)
            }
            return Self.json(Self.queryResult(items, total: items.count, start: 0))
        case .episodes(let seriesId):
            return try episodes(seriesId, call)
        case .nextUp:
            return nextUp(call)
        case .image(let id, let type, let index):
            return try await image(id: id, type: type, index: index, call)
        case .playbackInfo(let id):
            return try await playbackInfo(id, &call)
        case .stream(let id, _):
            return try await stream(id, call)
        case .download(let id):
            return try await stream(id, call, attachment: true)
        case .subtitle(let id, let mediaSourceId, let index, let format):
            return try await subtitle(id, mediaSourceId, index, format, call)
        case .playedItem(let id, _):
            let catalog = state.catalog()
            let item = try lookup(id, catalog)
            let date = call.query.nonEmpty("datePlayed").flatMap(Self.date) ?? Date()
            try mark(item, call.request.method == .delete ? .unplayed : .played, at: date, catalog)
            return Self.json(dto.userData(item, userState(item, catalog)))
        case .userData(let id, _):
            let catalog = state.catalog()
            let item = try lookup(id, catalog)
            if call.request.method == .post {
                let body = try await call.body()
                let date = Self.field(body, "LastPlayedDate")?.stringValue.flatMap(Self.date) ?? Date()
                if let played = Self.field(body, "Played").flatMap(Self.bool) {
                    try mark(item, played ? .played : .unplayed, at: date, catalog)
                } else if let ticks = Self.field(body, "PlaybackPositionTicks").flatMap(Self.int64), item.isPlayable {
                    try state.tracker.mark(item, .position, positionTicks: ticks, at: date)
                }
            }
            return Self.json(dto.userData(item, userState(item, catalog)))
        case .socket:
            return Self.status(.badRequest, text: "a WebSocket upgrade is expected")
        case .artists(let albumArtistsOnly):
            return try artists(call, albumArtistsOnly: albumArtistsOnly)
        case .playlist(let id):
            return try playlist(id)
        case .playlistItems(let id):
            return try playlistItems(id, call)
        case .lyrics(let id):
            return try lyrics(id)
        case .trickplayPlaylist(let id, let width):
            return try trickplayPlaylist(id, width: width, call)
        case .trickplayTile(let id, let width, let index):
            return try await trickplayTile(id, width: width, index: index, call)
        case .mediaSegments(let id):
            return try mediaSegments(id, call)
        }
    }

    // MARK: Sign-in

    private func authenticate(_ call: inout Call) async throws -> Response {
        let body = try await call.body()
        let name = Self.field(body, "Username")?.stringValue ?? ""
        let password = Self.field(body, "Pw")?.stringValue ?? Self.field(body, "Password")?.stringValue ?? ""
        guard let stored = state.password, stored.accepts(user: name, password: password) else {
            return Self.status(.unauthorized, text: "Error processing request.")
        }
        let token = state.issueToken(for: call.authorization)
        return Self.json(state.dto.authenticationResult(token: token, client: call.authorization, now: now))
    }

    // MARK: Listings

    func unplayedCount(_ item: CatalogItem, _ catalog: Catalog) -> Int {
        catalog.descendants(of: item.id).filter { $0.isPlayable && !state.tracker.userState($0).played }.count
    }

    /// Marks an item played or unplayed; a series, season or podcast marks every item in it, as Jellyfin's
    /// `Folder.MarkPlayed` / `MarkUnplayed` do (v10.10.7 L1656, v10.11.11 L1730).
    func mark(_ item: CatalogItem, _ kind: PlayEvent.Kind, at date: Date, _ catalog: Catalog) throws {
        let targets = item.isPlayable ? [item] : catalog.descendants(of: item.id).filter(\.isPlayable)
        guard !targets.isEmpty else { throw ServeFailure(.badRequest, "nothing to mark in this item") }
        for target in targets { try state.tracker.mark(target, kind, at: date) }
    }

    /// An item's state; a folder's is played when every item in it is.
    func userState(_ item: CatalogItem, _ catalog: Catalog) -> UserState {
        guard item.isFolder else { return state.tracker.userState(item) }
        let playable = catalog.descendants(of: item.id).filter(\.isPlayable)
        var folder = UserState()
        folder.played = !playable.isEmpty && playable.allSatisfy { state.tracker.userState($0).played }
        return folder
    }

    /// - Parameter fields: the `Fields` a listing asked for (lowercased); nil for every field.
    func itemDTO(_ item: CatalogItem, _ catalog: Catalog, withMediaSources: Bool, fields: Set<String>? = nil)
        -> JSONValue
    {
        let folder = item.isFolder
        return state.dto.item(
            item, state: userState(item, catalog), unplayedCount: folder ? unplayedCount(item, catalog) : nil,
            childCount: folder ? catalog.children[item.id]?.count ?? 0 : nil, withMediaSources: withMediaSources,
            fields: fields)
    }

    private func items(_ call: Call) throws -> Response {
        let catalog = state.catalog()
        let query = ItemQuery(call.query)
        let selected: (items: [CatalogItem], total: Int)
        do {
            selected = try query.selectPage(catalog) { userState($0, catalog) }
        } catch {
            throw ServeFailure(.badRequest, "no item with that ParentId")
        }
        let withSources = query.fields.contains("mediasources")
        let items = selected.items.map {
            itemDTO($0, catalog, withMediaSources: withSources, fields: query.fields)
        }
        return Self.json(Self.queryResult(items, total: selected.total, start: query.startIndex))
    }

    private func episodes(_ seriesId: String, _ call: Call) throws -> Response {
        let catalog = state.catalog()
        let series = try lookup(seriesId, catalog)
        var episodes = catalog.descendants(of: series.id).filter { $0.type == "Episode" }
        if let asked = call.query.nonEmpty("SeasonId") {
            // Ids as clients send them (with dashes, any case) name the catalog's item.
            let seasonId = catalog.item(asked)?.id ?? asked
            episodes = episodes.filter { $0.parentId == seasonId || $0.seasonId == seasonId }
        }
        if let season = call.query.int("Season") {
            episodes = episodes.filter { $0.parentIndexNumber == season }
        }
        if call.query.bool("IsMissing") == true { episodes = [] }
        episodes.sort {
            ($0.parentIndexNumber ?? 0, $0.indexNumber ?? 0, $0.id) < (
                $1.parentIndexNumber ?? 0, $1.indexNumber ?? 0, $1.id
            )
        }
        // `StartItemId`: the episodes from that one on (`TvShowsController.GetEpisodes`, v10.10.7 L282-293).
        if let start = call.query.nonEmpty("StartItemId").flatMap({ catalog.item($0)?.id }),
            let position = episodes.firstIndex(where: { $0.id == start })
        {
            episodes = Array(episodes[position...])
        }
        let start = min(max(0, call.query.int("StartIndex") ?? 0), episodes.count)
        let end = call.query.int("Limit").map { min(episodes.count, start + max(0, $0)) } ?? episodes.count
        let fields = ItemQuery(call.query).fields
        let page = episodes[start..<end].map {
            itemDTO($0, catalog, withMediaSources: fields.contains("mediasources"), fields: fields)
        }
        return Self.json(Self.queryResult(page, total: episodes.count, start: start))
    }

    /// Items under `ParentId` (or all), narrowed by `IncludeItemTypes` and `MediaTypes`.
    private func playable(_ call: Call, _ catalog: Catalog) -> [CatalogItem] {
        var items: [CatalogItem]
        if let parent = call.query.nonEmpty("ParentId") {
            items = catalog.item(parent).map { catalog.descendants(of: $0.id) } ?? []
        } else {
            items = Array(catalog.items.values)
        }
        items = items.filter(\.isPlayable)
        let types = Set(call.query.list("IncludeItemTypes").map { $0.lowercased() })
        if !types.isEmpty { items = items.filter { types.contains($0.type.lowercased()) } }
        let media = Set(call.query.list("MediaTypes").map { $0.lowercased() })
        if !media.isEmpty { items = items.filter { media.contains($0.type == "Audio" ? "audio" : "video") } }
        return items
    }

    /// `UserLibraryController.GetLatestMedia`: newest first, played ones left out (`IsPlayed` default false, as the
    /// user's `HidePlayedInLatest`; not in a music library, where `GetItemsForLatestItems` drops the filter), grouped
    /// by series and album unless `GroupItems=false`, a bare array.
    private func latest(_ call: Call) -> Response {
        let catalog = state.catalog()
        let isPlayed = call.query.bool("IsPlayed")
        let parent = call.query.nonEmpty("ParentId").flatMap { catalog.item($0) }
        let inMusic = parent?.upstream("CollectionType")?.stringValue == "music"
        let items = playable(call, catalog).filter { item in
            guard !inMusic else { return true }
            let played = state.tracker.userState(item).played
            return isPlayed.map { played == $0 } ?? !played
        }.sorted { ($0.dateCreated ?? "", $0.id) > ($1.dateCreated ?? "", $1.id) }
        let limit = max(0, call.query.int("Limit") ?? 20)
        let withSources = ItemQuery(call.query).fields.contains("mediasources")
        let groups = LatestItems.group(
            items.map(\.id), groupItems: call.query.bool("GroupItems") ?? true, limit: limit
        ) { id in
            guard let item = catalog.items[id] else { return nil }
            switch item.type {
            case "Episode": return item.seriesId.flatMap { catalog.items[$0] }?.id
            // A song joins its album's group; one without an album stands alone (`LatestItemsIndexContainer`).
            case "Audio":
                return item.parentId.flatMap { catalog.items[$0] }.flatMap { $0.type == "MusicAlbum" ? $0.id : nil }
            default: return nil
            }
        }
        let answers: [JSONValue] = groups.compactMap { group in
            let album = group.container.flatMap { catalog.items[$0] }?.type == "MusicAlbum"
            let answer = LatestItems.answered(group, containerIsAlbum: album)
            guard let item = catalog.items[answer.id] else { return nil }
            var dto = itemDTO(item, catalog, withMediaSources: withSources && item.isPlayable)
            if case .object(var members) = dto {
                members["ChildCount"] = JellyfinDTO.number(answer.childCount)
                dto = .object(members)
            }
            return dto
        }
        return Self.json(.array(answers))
    }

    /// `ItemsController.GetResumeItems`: started and not finished, the latest played first.
    private func resume(_ call: Call) -> Response {
        let catalog = state.catalog()
        let items = playable(call, catalog).filter { state.tracker.userState($0).isResumable }.sorted {
            (state.tracker.userState($0).lastPlayed ?? "", $0.id) > (
                state.tracker.userState($1).lastPlayed ?? "", $1.id
            )
        }
        return paged(items, call, catalog)
    }

    private func paged(_ items: [CatalogItem], _ call: Call, _ catalog: Catalog) -> Response {
        let start = min(max(0, call.query.int("StartIndex") ?? 0), items.count)
        let end = call.query.int("Limit").map { min(items.count, start + max(0, $0)) } ?? items.count
        let withSources = ItemQuery(call.query).fields.contains("mediasources")
        let page = items[start..<end].map { itemDTO($0, catalog, withMediaSources: withSources) }
        return Self.json(Self.queryResult(page, total: items.count, start: start))
    }

    /// `TvShowsController.GetNextUp` (`TVSeriesManager`, v10.10.7): for each series with a played episode, the first
    /// unplayed episode after the last played one (specials, season 0, are not looked at for the last played); the
    /// series watched most recently first. Asked for one series, one nothing of which was played answers its first
    /// episode. `ParentId` keeps the series under that folder (a parent that is not here: none);
    /// `EnableResumable=false` leaves out a series whose next episode was started.
    private func nextUp(_ call: Call) -> Response {
        let catalog = state.catalog()
        let only = call.query.nonEmpty("SeriesId").map { catalog.item($0)?.id ?? $0 }
        let under = call.query.nonEmpty("ParentId").map { catalog.item($0)?.id ?? "" }
        let resumable = call.query.bool("EnableResumable") ?? true
        var found: [(item: CatalogItem, last: String)] = []
        for series in catalog.items.values where series.type == "Series" && (only == nil || series.id == only) {
            if let under, series.id != under && series.parentId != under && series.viewId != under { continue }
            let episodes = catalog.descendants(of: series.id).filter { $0.type == "Episode" }.sorted {
                ($0.parentIndexNumber ?? 0, $0.indexNumber ?? 0, $0.id)
                    < ($1.parentIndexNumber ?? 0, $1.indexNumber ?? 0, $1.id)
            }
            let states = episodes.map { state.tracker.userState($0) }
            let regular = episodes.indices.filter { episodes[$0].parentIndexNumber != 0 }
            guard let lastPlayed = regular.last(where: { states[$0].played }) else {
                if only != nil, let first = regular.first(where: { !states[$0].played }) {
                    found.append((episodes[first], ""))
                }
                continue
            }
            guard let next = episodes.indices.first(where: { $0 > lastPlayed && !states[$0].played }),
                resumable || states[next].positionTicks == 0
            else { continue }
            let latest = states.compactMap(\.lastPlayed).max() ?? ""
            found.append((episodes[next], latest))
        }
        let items = found.sorted { ($0.last, $0.item.id) > ($1.last, $1.item.id) }.map(\.item)
        return paged(items, call, catalog)
    }

    // MARK: Playback

    /// An alternate version's id answers as that version's item does on Jellyfin: its own source first, then the
    /// others of its movie (`Video.GetAllItemsForMediaSources` lists the item, then its primary version and the
    /// primary's other versions, v10.10.7).
    private func playbackInfo(_ id: String, _ call: inout Call) async throws -> Response {
        let catalog = state.catalog()
        let item: CatalogItem
        var ordered: [HeldVersion]
        if ServeIds.isAcceptable(id), catalog.item(id) == nil, let found = catalog.version(id) {
            item = found.item
            ordered = [found.version] + found.item.versions.filter { $0.id != found.version.id }
        } else {
            item = try lookup(id, catalog)
            ordered = item.versions
        }
        let body = call.request.method == .post ? try await call.body() : nil
        let wanted = call.query.nonEmpty("MediaSourceId") ?? Self.field(body, "MediaSourceId")?.stringValue
        let versions = ordered.filter { wanted == nil || $0.id.lowercased() == wanted?.lowercased() }
        let profiles = Self.field(Self.field(body, "DeviceProfile")?.objectValue, "SubtitleProfiles")?.arrayValue
        let external = profiles.map { list in
            Set(
                list.compactMap { profile -> String? in
                    guard let object = profile.objectValue,
                        Self.field(object, "Method")?.stringValue?.lowercased() == "external"
                    else { return nil }
                    return Self.field(object, "Format")?.stringValue?.lowercased()
                })
        }
        let sources = versions.map { state.dto.mediaSource(item, $0, externalFormats: external) }
        // No source to play: empty sources and `NoCompatibleStream`, no session (`MediaInfoHelper`, v10.10.7 L117).
        guard !sources.isEmpty else {
            return Self.json(
                JellyfinDTO.object([("MediaSources", .array([])), ("ErrorCode", .string("NoCompatibleStream"))]))
        }
        return Self.json(
            JellyfinDTO.object([("MediaSources", .array(sources)), ("PlaySessionId", .string(ServeIds.random32()))]))
    }

    /// A version's file, as held: `/Videos/{id}/stream`, `/Audio/{id}/stream`, `/Items/{id}/Download` and `/File`, and
    /// `/Audio/{id}/universal`. The mirror cannot transcode (there is no encoder, and `SupportsTranscoding` is false
    /// in every source), so whatever a client asks of the universal route (`Container`, `AudioCodec`,
    /// `MaxStreamingBitrate`, `TranscodingContainer`…), it gets the held file as it is, where Jellyfin would redirect
    /// to a direct stream or start a transcode (`UniversalAudioController.GetUniversalAudioStream`, v10.10.7).
    ///
    /// The id may be an alternate version's: Jellyfin keeps each alternate version as an item of its own, and
    /// `LibraryController.GetDownload` answers the file of whatever item the id names (v10.10.7 L667-702), which is
    /// how a mirror fetches every version (`/Items/{mediaSourceId}/Download`).
    /// - Parameter attachment: `/Items/{id}/Download`: named by `Content-Disposition`, as `PhysicalFile` with a
    ///   download name answers (`Path.GetFileName(item.Path)`, quotes taken out, L700-702).
    private func stream(_ id: String, _ call: Call, attachment: Bool = false) async throws -> Response {
        let catalog = state.catalog()
        guard ServeIds.isAcceptable(id) else { throw ServeFailure(.badRequest, "not an item id") }
        guard let found = catalog.version(id) else { throw ServeFailure(.notFound, "no such item") }
        var version = found.version
        if let wanted = call.query.nonEmpty("MediaSourceId").map(ServeIds.plain), ServeIds.plain(version.id) != wanted {
            guard let other = found.item.versions.first(where: { ServeIds.plain($0.id) == wanted }) else {
                throw ServeFailure(.notFound, "no such media source")
            }
            version = other
        }
        let name = attachment ? Self.downloadName(found.item, version) : nil
        return try await file(
            version.file, contentType: ContentTypes.forPath(version.file.path), call, downloadName: name)
    }

    /// The name a download is offered under: the home server's file name of the version (its `Path` as the mirror
    /// recorded it), when the held file has its extension; else the held file's own name.
    static func downloadName(_ item: CatalogItem, _ version: HeldVersion) -> String {
        let held = String(version.file.path.split(separator: "/").last ?? "")
        let upstream =
            (item.raw["MediaSources"]?.arrayValue ?? []).first {
                ServeIds.plain($0["Id"]?.stringValue ?? "") == ServeIds.plain(version.id)
            }?["Path"]?.stringValue ?? (version.id == item.id ? item.raw["Path"]?.stringValue : nil)
        let name = upstream.map { String($0.split(separator: "/").last ?? "") } ?? ""
        let heldExtension = held.split(separator: ".").last.map { $0.lowercased() }
        let nameExtension = name.split(separator: ".").last.map { $0.lowercased() }
        let chosen = !name.isEmpty && name.contains(".") && nameExtension == heldExtension ? name : held
        return chosen.replacingOccurrences(of: "\"", with: "")
    }

    /// `Content-Disposition` as ASP.NET writes it for a download name (`ContentDispositionHeaderValue
    /// .SetHttpFileName`): `filename` in ASCII (other characters as `_`), quoted, and `filename*` in UTF-8.
    static func contentDisposition(_ name: String) -> String {
        let ascii = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7f ? $0 : "_" }))
        var encoded = ""
        for byte in name.utf8 {
            let unreserved =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~")].contains(byte)
            encoded += unreserved ? String(UnicodeScalar(byte)) : "%" + HexText.lowercase([byte]).uppercased()
        }
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    private func subtitle(_ id: String, _ sourceId: String, _ index: Int, _ format: String, _ call: Call) async throws
        -> Response
    {
        let item = try lookup(id, state.catalog())
        guard let version = item.versions.first(where: { $0.id == sourceId }),
            let subtitle = version.subtitles.first(where: { $0.index == index }),
            SubtitleText.canConvert(from: subtitle.format, to: format)
        else { throw ServeFailure(.notFound, "no such subtitle") }
        if subtitle.format.lowercased() == format.lowercased() {
            return try await file(subtitle.file, contentType: ContentTypes.forExtension(subtitle.format), call)
        }
        // Made from the held SubRip file on each request (subtitles are small; a larger file is not one).
        guard subtitle.file.size <= Self.largestSubtitle, let bytes = FileBytes.read(subtitle.file.path) else {
            throw ServeFailure(.notFound, "no such subtitle")
        }
        let text = SubtitleText.webVTT(fromSubRip: String(decoding: bytes, as: UTF8.self))
        var headers = HTTPFields()
        headers[.contentType] = "text/vtt; charset=utf-8"
        headers[.contentLength] = String(text.utf8.count)
        if call.head { return Response(status: .ok, headers: headers) }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The largest subtitle file converted for a client (a film's SubRip is well under 1 MB).
    static let largestSubtitle: Int64 = 16 << 20

    private func image(id: String, type: String, index: Int?, _ call: Call) async throws -> Response {
        let item = try lookup(id, state.catalog())
        if type.lowercased() == "chapter" {
            // `ImageController.GetItemImageByIndex` (L623) with the chapter at that index; none, or one whose image is
            // not held, is 404 with the JSON string Jellyfin sends (`BaseItem.GetImageInfo`, L1948, v10.10.7).
            guard let index, let held = item.images[LibraryLayout.chapterImageType(index)] else {
                return Self.json(.string("\(item.name) does not have an image of type Chapter"), status: .notFound)
            }
            return try await file(held, contentType: "image/jpeg", call)
        }
        guard index == nil || index == 0,
            let held = item.images.first(where: { $0.key.lowercased() == type.lowercased() })?.value
        else { throw ServeFailure(.notFound, "no such image") }
        return try await file(held, contentType: ContentTypes.forPath(held.path), call)
    }

    private func playback(_ route: ServeRoute, _ call: inout Call) async throws -> Response {
        let body = try await call.body()
        let report: ServeRoute.PlayReport =
            switch route {
            case .playing: .start
            case .playingProgress: .progress
            default: .stop
            }
        return try played(
            report, itemId: Self.field(body, "ItemId")?.stringValue,
            position: Self.field(body, "PositionTicks").flatMap(Self.int64),
            session: Self.field(body, "PlaySessionId")?.stringValue, call)
    }

    /// A start, progress or stop report, from a body or (older clients) a route and its query; 204 whatever the item,
    /// as Jellyfin answers.
    private func played(
        _ report: ServeRoute.PlayReport, itemId: String?, position: Int64?, session: String?, _ call: Call
    ) throws -> Response {
        let catalog = state.catalog()
        guard let id = itemId, ServeIds.isAcceptable(id), let item = catalog.item(id), item.isPlayable else {
            return Response(status: .noContent)
        }
        switch report {
        case .start:
            try state.tracker.started(
                client: call.clientKey, item: item, positionTicks: position ?? 0, playSessionId: session,
                catalog: catalog)
        case .progress:
            try state.tracker.progressed(
                client: call.clientKey, item: item, positionTicks: position, playSessionId: session, catalog: catalog)
        case .stop:
            try state.tracker.stopped(client: call.clientKey, item: item, positionTicks: position)
        }
        return Response(status: .noContent)
    }

    /// `MediaInfoController.GetBitrateTestBytes`: `size` bytes (default 100 KB, at most 100 MB).
    private func bitrateTest(_ call: Call) -> Response {
        let size = min(max(1, call.query.int("size") ?? 102_400), 100_000_000)
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.contentLength] = String(size)
        if call.head { return Response(status: .ok, headers: headers) }
        let body = ResponseBody(contentLength: size) { writer in
            var generator = SystemRandomNumberGenerator()
            let chunk = ByteBuffer(bytes: (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) })
            var left = size
            while left > 0 {
                let count = min(left, chunk.readableBytes)
                try await writer.write(chunk.getSlice(at: chunk.readerIndex, length: count) ?? chunk)
                left -= count
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// A held file, whole or one range of it, streamed from the disk (never read into memory whole). The file is
    /// opened first and the headers describe the open file, so a file a `sync` replaced since the catalog was read
    /// is answered as it is now.
    ///
    /// A `Range` with an `If-Range` that no longer names these bytes is answered with the whole file, as ASP.NET's
    /// `FileResultExecutorBase.IfRangeValid` decides: a date earlier than the file's `Last-Modified`, or an entity tag
    /// other than its `ETag` (strong comparison), so a resumed download never joins two versions of a file.
    func file(_ catalogued: HeldFile, contentType: String, _ call: Call, downloadName: String? = nil)
        async throws -> Response
    {
        guard let open = OpenFile(path: catalogued.path) else { throw ServeFailure(.notFound, "not held") }
        let held = open.held(path: catalogued.path)
        var headers = HTTPFields()
        headers[.contentType] = contentType
        headers[.acceptRanges] = "bytes"
        headers[.lastModified] = HTTPDateText.format(held.modified)
        headers[.eTag] = held.etag
        if let downloadName, !downloadName.isEmpty {
            headers[.contentDisposition] = Self.contentDisposition(downloadName)
        }
        if let match = call.request.headers[.ifNoneMatch], match == held.etag || match == "*" {
            return Response(status: .notModified, headers: headers)
        }
        let range = Self.ifRangeHolds(call.request.headers[.ifRange], held) ? call.request.headers[.range] : nil
        switch ByteRange.parse(range, size: held.size) {
        case .whole:
            headers[.contentLength] = String(held.size)
            if call.head || held.size == 0 { return Response(status: .ok, headers: headers) }
            let body = FileStream.body(open, range: 0...(held.size - 1), channel: call.context.channel)
            return Response(status: .ok, headers: headers, body: body)
        case .partial(let first, let last):
            headers[.contentLength] = String(last - first + 1)
            headers[.contentRange] = "bytes \(first)-\(last)/\(held.size)"
            if call.head { return Response(status: .partialContent, headers: headers) }
            let body = FileStream.body(open, range: first...last, channel: call.context.channel)
            return Response(status: .partialContent, headers: headers, body: body)
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(held.size)"
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
    }

    /// Whether an `If-Range` lets a range be answered (`FileResultExecutorBase.IfRangeValid`, ASP.NET Core 8): no
    /// header; a date not before the file's last modification (whole seconds, as `Last-Modified` says it); the
    /// file's own entity tag, compared strongly (a weak tag never matches).
    static func ifRangeHolds(_ header: String?, _ held: HeldFile) -> Bool {
        guard let value = header?.trimmed, !value.isEmpty else { return true }
        if value.hasPrefix("\"") || value.hasPrefix("W/") { return value == held.etag }
        guard let date = HTTPDate.parse(value) else { return false }
        return Double(held.modified) <= date
    }

    // MARK: Helpers

    func lookup(_ id: String, _ catalog: Catalog) throws -> CatalogItem {
        guard ServeIds.isAcceptable(id) else { throw ServeFailure(.badRequest, "not an item id") }
        guard let item = catalog.item(id) else { throw ServeFailure(.notFound, "no such item") }
        return item
    }

    private var now: String { WholeSecondTime.string(Date()) }
    private var localAddress: String { "http://" + state.advertisedAddress.withLock { $0 } }
    private var port: Int {
        Int(state.advertisedAddress.withLock { $0 }.split(separator: ":").last ?? "8096") ?? 8096
    }

    static func queryResult(_ items: [JSONValue], total: Int, start: Int) -> JSONValue {
        JellyfinDTO.object([
            ("Items", .array(items)), ("TotalRecordCount", JellyfinDTO.number(total)),
            ("StartIndex", JellyfinDTO.number(start)),
        ])
    }

    /// A member of a JSON body, its key compared without case (as ASP.NET's `System.Text.Json` options bind it).
    static func field(_ body: JSONObject?, _ key: String) -> JSONValue? {
        guard let body else { return nil }
        let lower = key.lowercased()
        return body.members.first { $0.key.lowercased() == lower }?.value
    }

    /// A number, or a number sent as a string (Jellyfin's `JsonNumberHandling.AllowReadingFromString`).
    static func int64(_ value: JSONValue) -> Int64? {
        value.intValue ?? value.stringValue.flatMap { Int64($0) }
    }

    static func bool(_ value: JSONValue) -> Bool? {
        value.boolValue ?? value.stringValue.flatMap { Bool($0.lowercased()) }
    }

    /// `datePlayed` / `LastPlayedDate`: ISO 8601, or `yyyyMMddHHmmss` (UTC).
    static func date(_ text: String) -> Date? {
        if let date = WholeSecondTime.date(text) { return date }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let digits = Array(text.utf8)
        guard digits.count == 14, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            return ISO8601DateFormatter().date(from: text)
        }
        func part(_ from: Int, _ count: Int) -> Int {
            Int(String(decoding: digits[from..<from + count], as: UTF8.self)) ?? 0
        }
        var components = DateComponents()
        components.timeZone = TimeZone(identifier: "UTC")
        (components.year, components.month, components.day) = (part(0, 4), part(4, 2), part(6, 2))
        (components.hour, components.minute, components.second) = (part(8, 2), part(10, 2), part(12, 2))
        return Calendar(identifier: .gregorian).date(from: components)
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONWriter.compactBytes(value))))
    }

    static func text(_ text: String, contentType: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func status(_ status: HTTPResponse.Status, text: String = "") -> Response {
        guard !text.isEmpty else { return Response(status: status) }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func setHeader(_ headers: inout HTTPFields, _ name: String, _ value: String) {
        guard let field = HTTPField.Name(name) else { return }
        headers[field] = value
    }
}

/// A request `serve` refuses: its status and a short text.
struct ServeFailure: Error {
    let status: HTTPResponse.Status
    let message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }
}
