import Foundation
import MediaSyncCore
import MediaSyncJSON

/// The Jellyfin-compatible API routes of the test server.
extension TestServer {
    /// Who the request authenticated as.
    enum Caller {
        case anonymous
        case user
        case apiKey
    }

    /// Normalises a Jellyfin id (dashed or "N" Guid format, any case) to 32 lowercase hex chars.
    static func normalizeID(_ id: String) -> String {
        id.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// Parses `Authorization: MediaBrowser Client="..", Token=".."` (values percent-decoded).
    /// Only the `Authorization` header counts (legacy `X-Emby-Token`, `X-Emby-Authorization` and the
    /// `api_key` query are rejected, like Jellyfin 10.11+/12).
    static func authorizationParameters(_ headerValue: String?) -> [String: String]? {
        guard let raw = headerValue?.trimmingCharacters(in: .whitespaces) else { return nil }
        guard let space = raw.firstIndex(of: " ") else { return nil }
        let scheme = raw[..<space].lowercased()
        guard scheme == "mediabrowser" else { return nil }
        var result: [String: String] = [:]
        for part in raw[raw.index(after: space)...].split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            result[key] = value.removingPercentEncoding ?? value
        }
        return result
    }

    func caller(_ request: RecordedRequest, library: TestLibrary) -> Caller {
        guard let token = TestServer.authorizationParameters(request.headers["authorization"])?["token"], !token.isEmpty
        else {
            return .anonymous
        }
        if token == library.apiKey { return .apiKey }
        if token == library.accessToken { return .user }
        return .anonymous
    }

    /// Loads a fixture JSON template by file name, if a fixtures directory is configured and has it.
    func fixture(_ name: String) -> JSONValue? {
        guard let directory = fixturesDirectory,
            let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        else {
            return nil
        }
        return JSONValue.parse(Array(data))
    }

    /// Routes a request to the Jellyfin API; nil when no Jellyfin route matches.
    func jellyfinResponse(_ request: RecordedRequest, ignoreRange: Bool) -> HTTPResponse? {
        let route = RoutePath(request.path)
        let method = request.method
        let library = self.library
        func match(_ pattern: [String]) -> [String]? { route.match(pattern) }
        let isGet = method == "GET" || method == "HEAD"
        let profile = self.profile

        // Anonymous routes.
        if match(["system", "info", "public"]) != nil, isGet {
            return .json(publicSystemInfo(library))
        }
        if match(["system", "ping"]) != nil {
            return .json(.string("Jellyfin Server"))
        }
        if match(["quickconnect", "enabled"]) != nil, isGet {
            return .json(.bool(true))
        }
        if match(["quickconnect", "initiate"]) != nil {
            // 10.8: GET only; 10.9+: POST, GET kept as obsolete (QuickConnectController L53, 10.9.11 L74).
            guard isGet || (method == "POST" && profile.hasUnifiedRoutes) else { return .empty(405) }
            return quickConnectInitiate(request)
        }
        if match(["quickconnect", "connect"]) != nil, isGet {
            return quickConnectPoll(request, library: library)
        }
        if match(["users", "authenticatebyname"]) != nil {
            guard method == "POST" else { return .empty(405) }
            return authenticateByName(request, library: library)
        }
        if match(["users", "authenticatewithquickconnect"]) != nil {
            guard method == "POST" else { return .empty(405) }
            return authenticateWithQuickConnect(request, library: library)
        }
        if let response = richMediaResponse(request) { return response }
        // Images are served anonymously by Jellyfin.
        if isGet, let c = match(["items", "*", "images", "*"]) ?? match(["items", "*", "images", "*", "*"]) {
            return imageResponse(
                request, itemId: c[0], type: c[1], index: c.count > 2 ? Int(c[2]) : nil, library: library)
        }

        if let response = userDataResponse(request) { return response }
        if let response = transcodeResponse(request) { return response }
        if let response = musicResponse(request, ignoreRange: ignoreRange) { return response }

        // Everything below requires a token.
        let known: [[String]] = [
            ["system", "info"], ["users"], ["users", "me"], ["users", "*"], ["userviews"], ["users", "*", "views"],
            ["items"], ["users", "*", "items"], ["items", "*"], ["users", "*", "items", "*"],
            ["shows", "*", "seasons"], ["shows", "*", "episodes"], ["items", "*", "playbackinfo"],
            ["items", "*", "download"], ["videos", "*", "*", "subtitles", "*", "*"],
            ["videos", "*", "*", "subtitles", "*", "*", "*"],
        ]
        guard known.contains(where: { match($0) != nil }) else { return nil }
        let who = caller(request, library: library)
        guard who != .anonymous else { return .empty(401) }

        if match(["system", "info"]) != nil, isGet {
            var info = fixture("system-info.json") ?? .object([])
            info = info.setting("LocalAddress", .string(baseURL)).setting("ServerName", .string(library.serverName))
                .setting("Version", .string(profile.version)).setting("Id", .string(library.serverId))
            return .json(info)
        }
        if match(["users"]) != nil, isGet {
            // Listing users is for administrators: the API key here (the demo user is not an admin).
            guard who == .apiKey else { return .empty(403) }
            return .json(.array([userDTO(library)]))
        }
        if match(["users", "me"]) != nil, isGet {
            guard who == .user else { return .empty(400) }
            return .json(userDTO(library))
        }
        if let c = match(["users", "*"]), isGet {
            guard TestServer.normalizeID(c[0]) == library.userId else { return .empty(404) }
            return .json(userDTO(library))
        }
        if match(["userviews"]) != nil, !profile.hasUnifiedRoutes {
            return .empty(404)
        }
        if match(["items", "*"]) != nil, isGet, !profile.hasUnifiedRoutes {
            // Other controllers own `/Items/{id}` in 10.8 (DELETE, POST): the router answers 405.
            var response = HTTPResponse.empty(405)
            response.headers.append(("Allow", "DELETE, POST"))
            return response
        }
        if match(["userviews"]) != nil || match(["users", "*", "views"]) != nil, isGet {
            let views = library.views.filter { !library.inaccessibleViews.contains($0.id) }.map {
                JellyfinDTO.item($0, library: library, fields: [], allFields: false, profile: profile)
            }
            return .json(JellyfinDTO.queryResult(views, total: views.count, startIndex: 0))
        }
        if match(["items"]) != nil, isGet {
            if request.queryValue("userId") == nil, who == .user {
                return .empty(400)
            }
            return itemsQuery(request, userId: request.queryValue("userId"), library: library)
        }
        if let c = match(["users", "*", "items"]), isGet {
            return itemsQuery(request, userId: c[0], library: library)
        }
        if let c = match(["items", "*"]) ?? match(["users", "*", "items", "*"]).map({ [$0[1]] }), isGet {
            guard let item = library.item(withId: TestServer.normalizeID(c[0])), !library.isInaccessible(item) else {
                return .empty(404)
            }
            if !item.isFolder && !item.mediaSources.isEmpty { counters.built(1) }
            return .json(JellyfinDTO.item(item, library: library, fields: [], allFields: true, profile: profile))
        }
        if let c = match(["shows", "*", "seasons"]), isGet {
            return seasons(request, seriesId: c[0], library: library)
        }
        if let c = match(["shows", "*", "episodes"]), isGet {
            return episodes(request, seriesId: c[0], library: library)
        }
        if let c = match(["items", "*", "playbackinfo"]), isGet || method == "POST" {
            if profile == .v10_8, request.queryValue("userId") == nil { return .empty(400) }
            guard let item = library.item(withId: TestServer.normalizeID(c[0])), !item.mediaSources.isEmpty else {
                return .empty(404)
            }
            var sources = item.mediaSources
            if let wanted = request.queryValue("mediaSourceId").map(TestServer.normalizeID), !wanted.isEmpty {
                sources = sources.filter { $0.id == wanted }
            }
            let playSession = SplitMix64.hexID(seed: library.seed, label: "playsession-\(item.id)-\(allRequests.count)")
            // A `DeviceProfile` in the body decides direct play or a transcode (`MediaInfoController` L116–216).
            let deviceProfile = method == "POST" ? JSONValue.parse(request.body)?.field("DeviceProfile") : nil
            return .json(
                .object([
                    JSONMember(
                        "MediaSources",
                        .array(
                            sources.map { source in
                                let dto = JellyfinDTO.mediaSource(source, item: item, profile: profile)
                                // A track's source is answered as it is: the profile logic models video only.
                                guard let deviceProfile, source.audio == nil else { return dto }
                                return applyingProfile(
                                    dto, source: source, item: item, profile: deviceProfile,
                                    playSession: playSession, request: request)
                            })),
                    JSONMember("PlaySessionId", .string(playSession)),
                ]))
        }
        if let c = match(["items", "*", "download"]), isGet {
            return download(request, id: c[0], library: library, ignoreRange: ignoreRange)
        }
        if let c = match(["videos", "*", "*", "subtitles", "*", "*"])
            ?? match(["videos", "*", "*", "subtitles", "*", "*", "*"]), isGet
        {
            return subtitle(itemId: c[0], mediaSourceId: c[1], index: c[2], file: c[c.count - 1], library: library)
        }
        return .empty(405)
    }

    // MARK: - Route handlers

    func publicSystemInfo(_ library: TestLibrary) -> JSONValue {
        let profile = self.profile
        let base =
            fixture("system-info-public.json")
            ?? .object([
                JSONMember("LocalAddress", .string(baseURL)), JSONMember("ServerName", .string(library.serverName)),
                JSONMember("Version", .string(profile.version)), JSONMember("ProductName", .string("Jellyfin Server")),
                JSONMember("OperatingSystem", .string("")), JSONMember("Id", .string(library.serverId)),
                JSONMember("StartupWizardCompleted", .bool(true)),
            ])
        return base.setting("LocalAddress", .string(baseURL)).setting("ServerName", .string(library.serverName))
            .setting("Version", .string(profile.version)).setting("Id", .string(library.serverId))
    }

    func userDTO(_ library: TestLibrary) -> JSONValue {
        guard let template = fixture("users-authenticatebyname.json")?["User"] else {
            return JellyfinDTO.user(library: library)
        }
        return template.setting("Name", .string(library.userName)).setting("ServerId", .string(library.serverId))
            .setting("Id", .string(library.userId)).setting("HasPassword", .bool(!library.password.isEmpty))
            .setting("HasConfiguredPassword", .bool(!library.password.isEmpty))
    }

    func authenticationResult(_ request: RecordedRequest, library: TestLibrary) -> JSONValue {
        let auth = TestServer.authorizationParameters(request.headers["authorization"]) ?? [:]
        let now = JellyfinDTO.date(Date())
        var session = fixture("users-authenticatebyname.json")?["SessionInfo"] ?? .object([])
        session = session.setting("Id", .string(SplitMix64.hexID(seed: library.seed, label: "session")))
            .setting("UserId", .string(library.userId)).setting("UserName", .string(library.userName))
            .setting("Client", .string(auth["client"] ?? "")).setting("LastActivityDate", .string(now))
            .setting("DeviceName", .string(auth["device"] ?? "")).setting("DeviceId", .string(auth["deviceid"] ?? ""))
            .setting("ApplicationVersion", .string(auth["version"] ?? "")).setting(
                "ServerId", .string(library.serverId)
            )
            .setting("RemoteEndPoint", .string("127.0.0.1"))
        return .object([
            JSONMember("User", userDTO(library)),
            JSONMember("SessionInfo", session),
            JSONMember("AccessToken", .string(library.accessToken)),
            JSONMember("ServerId", .string(library.serverId)),
        ])
    }

    func authenticateByName(_ request: RecordedRequest, library: TestLibrary) -> HTTPResponse {
        guard let body = JSONValue.parse(request.body) else { return .empty(400) }
        let name = body.field("Username")?.stringValue ?? ""
        let password = body.field("Pw")?.stringValue ?? ""
        guard name.lowercased() == library.userName.lowercased(), password == library.password else {
            return .empty(401)
        }
        return .json(authenticationResult(request, library: library))
    }

    func quickConnectState(secret: String, authenticated: Bool, code: String, request: RecordedRequest) -> JSONValue {
        let auth = TestServer.authorizationParameters(request.headers["authorization"]) ?? [:]
        return .object([
            JSONMember("Authenticated", .bool(authenticated)),
            JSONMember("Secret", .string(secret)),
            JSONMember("Code", .string(code)),
            JSONMember("DeviceId", .string(auth["deviceid"] ?? "")),
            JSONMember("DeviceName", .string(auth["device"] ?? "")),
            JSONMember("AppName", .string(auth["client"] ?? "")),
            JSONMember("AppVersion", .string(auth["version"] ?? "")),
            JSONMember("DateAdded", .string(JellyfinDTO.date(Date()))),
        ])
    }

    static func quickConnectCode(_ secret: String) -> String {
        let value = SplitMix64.hash(secret) % 1_000_000
        let s = String(value)
        return String(repeating: "0", count: 6 - s.count) + s
    }

    func quickConnectInitiate(_ request: RecordedRequest) -> HTTPResponse {
        let secret: String = lock.withLock {
            state.quickConnectCounter += 1
            let secret =
                SplitMix64.hexID(seed: state.library.seed, label: "qc-\(state.quickConnectCounter)")
                + SplitMix64.hexID(seed: state.library.seed, label: "qc2-\(state.quickConnectCounter)")
            state.quickConnectPolls[secret] = 0
            return secret
        }
        return .json(
            quickConnectState(
                secret: secret, authenticated: false, code: TestServer.quickConnectCode(secret), request: request))
    }

    func quickConnectPoll(_ request: RecordedRequest, library: TestLibrary) -> HTTPResponse {
        let secret = request.queryValue("secret") ?? ""
        let polls: Int? = lock.withLock {
            guard let count = state.quickConnectPolls[secret] else { return nil }
            state.quickConnectPolls[secret] = count + 1
            return count + 1
        }
        guard let polls else { return .empty(404) }
        let authenticated = polls > library.quickConnectPollsBeforeAuthorized
        return .json(
            quickConnectState(
                secret: secret, authenticated: authenticated,
                code: TestServer.quickConnectCode(secret), request: request))
    }

    func authenticateWithQuickConnect(_ request: RecordedRequest, library: TestLibrary) -> HTTPResponse {
        guard let body = JSONValue.parse(request.body), let secret = body.field("Secret")?.stringValue else {
            return .empty(400)
        }
        let polls = lock.withLock { state.quickConnectPolls[secret] }
        guard let polls else { return .empty(404) }
        guard polls > library.quickConnectPollsBeforeAuthorized else { return .empty(401) }
        return .json(authenticationResult(request, library: library))
    }

    static func fieldSet(_ request: RecordedRequest) -> Set<String> {
        Set(
            (request.queryValue("fields") ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            })
    }

    static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func flag(_ value: String?) -> Bool? {
        guard let value else { return nil }
        return value.lowercased() == "true"
    }

    /// Paging + serialisation shared by the listing routes.
    func page(_ items: [TestItem], request: RecordedRequest, library: TestLibrary) -> HTTPResponse {
        page(count: items.count, request: request, library: library) { Array(items[$0]) }
    }

    /// One page of `count` items: `slice` gives the items of the range asked for (`startIndex`, `limit`).
    func page(
        count: Int, request: RecordedRequest, library: TestLibrary, slice: (Range<Int>) -> [TestItem]
    ) -> HTTPResponse {
        let start = max(0, Int(request.queryValue("startIndex") ?? "") ?? 0)
        let limit = Int(request.queryValue("limit") ?? "").map { max(0, $0) }
        let fields = TestServer.fieldSet(request)
        let lower = min(start, count)
        let upper = limit.map { min(count, lower + $0) } ?? count
        let items = slice(lower..<upper)
        let profile = self.profile
        let dtos = items.map { JellyfinDTO.item($0, library: library, fields: fields, profile: profile) }
        if fields.contains("mediasources") {
            // A book's file is no media source: none is built for it.
            counters.built(items.filter { !$0.isFolder && !$0.mediaSources.isEmpty && $0.type != "Book" }.count)
        }
        return .json(JellyfinDTO.queryResult(dtos, total: count, startIndex: start))
    }

    func itemsQuery(_ request: RecordedRequest, userId: String?, library: TestLibrary) -> HTTPResponse {
        if let userId, TestServer.normalizeID(userId) != library.userId { return .empty(404) }
        if let parent = effectiveQuery(request, library: library).parentId {
            // An unknown parent: `GetParentItem` throws ArgumentException, which ExceptionMiddleware answers with
            // 400 and its generic text (LibraryManager.GetParentItem L2456–2460, ExceptionMiddleware L96–98, v10.10.7).
            guard let folder = library.item(withId: parent) else {
                return .text("Error processing request.", status: 400)
            }
            // A library the user may no longer access: 401 with the reason as a JSON string (ItemsController L298–306).
            if library.inaccessibleViews.contains(folder.id) {
                return .json(
                    .string("\(library.userName) is not permitted to access Library \(folder.name)."), status: 401)
            }
        }
        // The query without its paging: every page of one listing shares its filtered and ordered candidates.
        let paging: Set<String> = ["startindex", "limit"]
        let key =
            profile.rawValue + "?"
            + request.query.filter { !paging.contains($0.key.lowercased()) }
            .map { "\($0.key.lowercased())=\($0.value)" }.sorted().joined(separator: "&")
        let listing = library.lookup.listing(key) { listingCandidates(request, library: library) }
        let views = library.views
        let items = library.items
        var candidates = listing.candidates
        let count = candidates.count
        let start = min(count, max(0, Int(request.queryValue("startIndex") ?? "") ?? 0))
        let end = Int(request.queryValue("limit") ?? "").map { min(count, start + max(0, $0)) } ?? count
        if profile == .v10_11, !listing.tieRuns.isEmpty, start < end {
            // 10.11 leaves ties in any order, and a request's order is its own: the runs of equal keys this page
            // touches are shuffled with a seed per request (the runs wholly before or after it cannot change it).
            let shuffleSeed = lock.withLock { UInt64(state.requests.count) } ^ library.seed
            let runs = listing.tieRuns
            var run = max(0, (runs.lastIndex { $0 <= start }) ?? 0)
            while run < runs.count, runs[run] < end {
                let lower = runs[run]
                let upper = run + 1 < runs.count ? runs[run + 1] : count
                if upper - lower > 1 {
                    let id = { (ref: Int) in ref < views.count ? views[ref].id : items[ref - views.count].id }
                    let shuffled = candidates[lower..<upper].enumerated().sorted { a, b in
                        let x = SplitMix64.hash("\(shuffleSeed)-\(id(a.element))")
                        let y = SplitMix64.hash("\(shuffleSeed)-\(id(b.element))")
                        return x != y ? x < y : a.offset < b.offset
                    }
                    candidates.replaceSubrange(lower..<upper, with: shuffled.map(\.element))
                }
                run += 1
            }
        }
        let response = page(count: count, request: request, library: library) { range in
            candidates[range].map { $0 < views.count ? views[$0] : items[$0 - views.count] }
        }
        if request.queryValue("startIndex") != nil { listingPageAnswered() }
        return response
    }

    /// What an `/Items` query asks for once `ItemsController.GetItems` has rewritten it: a query for exactly
    /// `BoxSet` (and on 10.8 exactly `Playlist`) drops its parent (v10.8.13 L246–251; v10.9.11 L270–274, v10.10.7
    /// L272–276, v10.11.11 L274–278), and a parent whose `CollectionType` is `playlists` makes it recursive for
    /// playlists (v10.8.13 L267, v10.10.7 L292).
    struct EffectiveQuery {
        var parentId: String?
        var recursive: Bool
        var includeTypes: [String]
    }

    func effectiveQuery(_ request: RecordedRequest, library: TestLibrary) -> EffectiveQuery {
        var query = EffectiveQuery(
            parentId: request.queryValue("parentId").map(TestServer.normalizeID).flatMap { $0.isEmpty ? nil : $0 },
            recursive: TestServer.flag(request.queryValue("recursive")) ?? false,
            includeTypes: TestServer.list(request.queryValue("includeItemTypes")).map { $0.lowercased() })
        if query.includeTypes == ["boxset"] || (profile == .v10_8 && query.includeTypes == ["playlist"]) {
            query.parentId = nil
        }
        if let parent = query.parentId, library.item(withId: parent)?.collectionType == "playlists" {
            query.recursive = true
            query.includeTypes = ["playlist"]
        }
        return query
    }

    /// The candidates of an `/Items` query, filtered and ordered, without paging (see ``LibraryLookup/Listing``).
    func listingCandidates(_ request: RecordedRequest, library: TestLibrary) -> LibraryLookup.Listing {
        let effective = effectiveQuery(request, library: library)
        let recursive = effective.recursive
        let profile = self.profile
        // Candidates are positions in the views, then the items (`views.count` and up), not copies.
        let views = library.views
        let items = library.items
        func read<Value>(_ ref: Int, _ get: (TestItem) -> Value) -> Value {
            ref < views.count ? get(views[ref]) : get(items[ref - views.count])
        }
        let positions = library.lookup.tables(for: library).position
        var candidates: [Int]
        // A playlist's or box set's children come in its own order, which no `SortBy` means keeping.
        var presorted = false
        let ids = TestServer.list(request.queryValue("ids")).map(TestServer.normalizeID)
        if !ids.isEmpty {
            let wanted = Set(ids)
            candidates = (0..<(views.count + items.count)).filter { wanted.contains(read($0, \.id)) }
            // Ids and a parent together: the parent filters the ids (`recursive=true`: below it, by the library's
            // top parent; `LibraryManager.GetItemsResult` L1469–1476 and `SetTopParentIdsOrAncestors`, v10.10.7).
            if let parent = effective.parentId {
                let below = Set((recursive ? library.descendants(of: parent) : library.children(of: parent)).map(\.id))
                    .union(library.items.filter { $0.isAlternateVersion && $0.parentId == parent }.map(\.id))
                candidates = candidates.filter { below.contains(read($0, \.id)) }
            }
        } else if let parent = effective.parentId, let container = library.item(withId: parent),
            container.type == "Playlist" || container.type == "BoxSet"
        {
            presorted = true
            candidates = linkedCandidates(container, recursive: recursive, library: library).compactMap {
                positions[$0.id].map { $0 + views.count }
            }
        } else if let parent = effective.parentId {
            candidates = (recursive ? library.descendantPositions(of: parent) : library.childPositions(of: parent))
                .map { $0 + views.count }
        } else if recursive {
            // Below the user's libraries (`AddUserToQuery` sets their `TopParentIds`, LibraryManager L1519–1543,
            // v10.10.7): a by-name artist, which has no parent, is not in them.
            candidates = items.indices.filter { !items[$0].isAlternateVersion && items[$0].parentId != nil }
                .map { $0 + views.count }
        } else {
            candidates = Array(views.indices)
        }
        let include = Set(effective.includeTypes)
        if !include.isEmpty { candidates = candidates.filter { include.contains(read($0, \.type).lowercased()) } }
        let exclude = Set(TestServer.list(request.queryValue("excludeItemTypes")).map { $0.lowercased() })
        if !exclude.isEmpty { candidates = candidates.filter { !exclude.contains(read($0, \.type).lowercased()) } }
        if let term = request.queryValue("searchTerm"), !term.isEmpty {
            candidates = candidates.filter { read($0, \.name).lowercased().contains(term.lowercased()) }
        }
        if let played = TestServer.flag(request.queryValue("isPlayed")) {
            candidates = candidates.filter { read($0, \.played) == played }
        }
        candidates = filteredByArtists(candidates, request: request, library: library, read: read)
        var sortBy = TestServer.list(request.queryValue("sortBy")).map { $0.lowercased() }
        var orders = TestServer.list(request.queryValue("sortOrder")).map { $0.lowercased().hasPrefix("desc") }
        if sortBy.isEmpty, !TestServer.list(request.queryValue("artistIds")).isEmpty, include == ["musicalbum"],
            effective.includeTypes.count == 1
        {
            // Albums of an artist: `ProductionYear` descending, then `SortName` (ItemsController v10.8.13 L478–484,
            // v10.9.11 L508–514, v10.10.7 L511–517, v10.11.11 L513–519). `AlbumArtistIds` does not do this.
            sortBy = ["productionyear", "sortname"]
            orders = [true, false]
        }
        if presorted, sortBy.isEmpty { return LibraryLookup.Listing(candidates: candidates, tieRuns: []) }
        if profile == .v10_11 {
            // 10.11 orders by SortName without sortBy, and adds Name after a first SortName (ApplyOrder, v10.11.11).
            if sortBy.isEmpty {
                sortBy = ["sortname"]
            } else if sortBy.first == "sortname" {
                sortBy.insert("name", at: 1)
                if !orders.isEmpty { orders.insert(orders[0], at: 1) }
            }
        }
        guard !sortBy.isEmpty else { return LibraryLookup.Listing(candidates: candidates, tieRuns: []) }
        // Each key's order: the one given at its place, else the first given, else ascending
        // (`RequestHelpers.GetOrderBy`, v10.8.13 L29–53).
        let descending = sortBy.indices.map { $0 < orders.count ? orders[$0] : (orders.first ?? false) }
        // Every key descending reverses the whole order, ties included (as before per-key orders were read).
        let reverseAll = descending.allSatisfy { $0 }
        // Ties: library order (10.8–10.10's SQLite), or any order (10.11: the runs of equal keys are shuffled per
        // request). Each item's keys are made once, and positions are sorted, not the items.
        let keys = candidates.map { ref in read(ref) { SortKeys($0, wantsSortName: sortBy.contains("sortname")) } }
        /// -1, 0 or 1 by the keys asked for.
        func compare(_ a: SortKeys, _ b: SortKeys) -> Int {
            for (index, key) in sortBy.enumerated() {
                let order = a.compare(b, by: key)
                if order != 0 { return descending[index] && !reverseAll ? -order : order }
            }
            return 0
        }
        var order = candidates.indices.sorted {
            let order = compare(keys[$0], keys[$1])
            return order != 0 ? order < 0 : $0 < $1
        }
        if reverseAll { order.reverse() }
        var tieRuns: [Int] = []
        for (position, candidate) in order.enumerated()
        where position == 0 || compare(keys[order[position - 1]], keys[candidate]) != 0 {
            tieRuns.append(position)
        }
        return LibraryLookup.Listing(candidates: order.map { candidates[$0] }, tieRuns: tieRuns)
    }

    /// One item's sort keys (`ItemSortBy` names, lowercased); a missing number sorts first, as SQLite's NULL.
    struct SortKeys {
        var sortName: String
        var name: String
        var dateCreated: Date
        var productionYear: Int
        var indexNumber: Int
        var parentIndexNumber: Int

        init(_ item: TestItem, wantsSortName: Bool) {
            sortName = wantsSortName ? JellyfinDTO.sortName(item) : ""
            name = item.name
            dateCreated = item.dateCreated
            productionYear = item.productionYear ?? Int.min
            indexNumber = item.indexNumber ?? Int.min
            parentIndexNumber = item.parentIndexNumber ?? Int.min
        }

        /// -1, 0 or 1 by one key; 0 for a key not modelled.
        func compare(_ other: SortKeys, by key: String) -> Int {
            func order<T: Comparable>(_ a: T, _ b: T) -> Int { a == b ? 0 : a < b ? -1 : 1 }
            switch key {
            case "sortname": return order(sortName, other.sortName)
            case "name": return order(name, other.name)
            case "datecreated": return order(dateCreated, other.dateCreated)
            // PremiereDate is generated as 1 January of the production year.
            case "productionyear", "premieredate": return order(productionYear, other.productionYear)
            case "indexnumber": return order(indexNumber, other.indexNumber)
            case "parentindexnumber": return order(parentIndexNumber, other.parentIndexNumber)
            default: return 0
            }
        }
    }

    /// A playlist's or box set's children as `ParentId=<it>` lists them: its linked items the user may see, each once
    /// (`Folder.GetChildren`); a playlist's in its stored order and only those that are not folders
    /// (`Playlist.GetPlayableItems`, v10.10.7), a box set's in its `DisplayOrder` (`BoxSet.GetChildren`: 10.8/10.9
    /// `SortName`, else ProductionYear, PremiereDate, SortName, v10.8.13 L115–133; 10.10+ that sort name, `Default`
    /// the stored order, an unknown name PremiereDate, v10.10.7 L115–134). Recursive adds the descendants of a box
    /// set's items (`GetRecursiveChildren`, sorted the same way).
    func linkedCandidates(_ container: TestItem, recursive: Bool, library: TestLibrary) -> [TestItem] {
        var children = library.visibleLinkedItems(of: container)
        if container.type == "Playlist" { return children.filter { !$0.isFolder } }
        if recursive {
            var seen = Set(children.map(\.id))
            children += children.flatMap { library.descendants(of: $0.id) }.filter { seen.insert($0.id).inserted }
        }
        let displayOrder = container.displayOrder ?? "PremiereDate"
        var keys: [String]
        if profile == .v10_8 || profile == .v10_9 {
            keys =
                displayOrder.lowercased() == "sortname" ? ["sortname"] : ["productionyear", "premieredate", "sortname"]
        } else {
            let known = ["SortName", "Name", "DateCreated", "PremiereDate", "ProductionYear", "Default"]
            keys = known.contains(displayOrder) ? [displayOrder.lowercased()] : ["premieredate"]
            if keys == ["default"] { return children }
        }
        let sortKeys = children.map { SortKeys($0, wantsSortName: true) }
        return children.indices.sorted { a, b in
            for key in keys {
                let order = sortKeys[a].compare(sortKeys[b], by: key)
                if order != 0 { return order < 0 }
            }
            return a < b
        }.map { children[$0] }
    }

    /// `ArtistIds` (the name among `Artists` or `AlbumArtists`), `AlbumArtistIds` (among `AlbumArtists`),
    /// `ContributingArtistIds` (among `Artists` and not `AlbumArtists`), several ids OR-ed, matched by the named
    /// item's clean name, not its id (SqliteItemRepository v10.10.7 L3562–3610, BaseItemRepository v10.11.11
    /// L2109–2133); and `AlbumIds`, by album name (v10.10.7 L3612–3626). Different parameters are AND-ed here (10.8–10.10
    /// bind one SQL parameter name for all three, so combining them is not modelled).
    func filteredByArtists(
        _ candidates: [Int], request: RecordedRequest, library: TestLibrary, read: (Int, (TestItem) -> Bool) -> Bool
    ) -> [Int] {
        func names(_ parameter: String) -> [String]? {
            let ids = TestServer.list(request.queryValue(parameter)).map(TestServer.normalizeID)
            guard !ids.isEmpty else { return nil }
            return ids.compactMap { library.item(withId: $0).map { TestLibrary.cleanName($0.name) } }
        }
        var result = candidates
        func contains(_ list: [String], _ name: String) -> Bool { list.contains { TestLibrary.cleanName($0) == name } }
        if let wanted = names("artistIds") {
            result = result.filter { ref in
                read(ref) { item in wanted.contains { contains(item.artists, $0) || contains(item.albumArtists, $0) } }
            }
        }
        if let wanted = names("albumArtistIds") {
            result = result.filter { ref in read(ref) { item in wanted.contains { contains(item.albumArtists, $0) } } }
        }
        if let wanted = names("contributingArtistIds") {
            result = result.filter { ref in
                read(ref) { item in wanted.contains { contains(item.artists, $0) && !contains(item.albumArtists, $0) } }
            }
        }
        let albumIds = TestServer.list(request.queryValue("albumIds")).map(TestServer.normalizeID)
        if !albumIds.isEmpty {
            let albumNames = Set(albumIds.compactMap { library.item(withId: $0)?.name })
            result = result.filter { ref in read(ref) { item in item.album.map { albumNames.contains($0) } ?? false } }
        }
        return result
    }

    func seasons(_ request: RecordedRequest, seriesId: String, library: TestLibrary) -> HTTPResponse {
        let id = TestServer.normalizeID(seriesId)
        guard let series = library.item(withId: id), series.type == "Series" else { return .empty(404) }
        let seasons = library.members(ofSeries: series.id).filter { $0.type == "Season" }
        return page(seasons, request: request, library: library)
    }

    func episodes(_ request: RecordedRequest, seriesId: String, library: TestLibrary) -> HTTPResponse {
        let id = TestServer.normalizeID(seriesId)
        guard let series = library.item(withId: id), series.type == "Series" else { return .empty(404) }
        var episodes = library.members(ofSeries: series.id).filter { $0.type == "Episode" }
        if let seasonId = request.queryValue("seasonId").map(TestServer.normalizeID), !seasonId.isEmpty {
            episodes = episodes.filter { $0.seasonId == seasonId }
        } else if let season = Int(request.queryValue("season") ?? "") {
            episodes = episodes.filter { $0.parentIndexNumber == season }
        }
        if TestServer.flag(request.queryValue("isMissing")) == false {
            episodes = episodes.filter { $0.locationType != "Virtual" }
        }
        return page(episodes, request: request, library: library)
    }

    /// The bytes of a media source, cached per (source state) so large files are generated once.
    func mediaBytes(_ source: TestMediaSource, library: TestLibrary) -> [UInt8] {
        if let cached = lock.withLock({ state.mediaCache[source.id] }), cached.key == source {
            return cached.bytes
        }
        let bytes = TestLibrary.bytes(of: source, seed: library.seed)
        lock.withLock { state.mediaCache[source.id] = CachedMedia(key: source, bytes: bytes) }
        return bytes
    }

    func download(_ request: RecordedRequest, id rawId: String, library: TestLibrary, ignoreRange: Bool) -> HTTPResponse
    {
        // The download permission is checked before the item is looked up (LibraryController.GetDownload L662).
        guard library.userMayDownload else { return .empty(403) }
        let id = TestServer.normalizeID(rawId)
        var source: TestMediaSource?
        if let item = library.item(withId: id) {
            source = item.mediaSources.first(where: { $0.id == id }) ?? item.mediaSources.first
        } else {
            source = library.mediaSource(withId: id)
        }
        guard let source else { return .empty(404) }
        if let owner = library.item(withId: id)
            ?? library.items.first(where: { $0.mediaSources.contains { $0.id == source.id } }),
            library.isInaccessible(owner)
        {
            return .empty(404)
        }
        if source.videoType == "Dvd" || source.videoType == "BluRay" {
            // `ArgumentException("Item does not support downloading")`, answered by ExceptionMiddleware with 400 and
            // its generic text outside the Development environment (GetDownload L679–691, ExceptionMiddleware L127).
            return .text("Error processing request.", status: 400)
        }
        if let url = source.strmURL {
            // The `.strm` file itself: its URL and a newline (GetDownload L702 serves `item.Path` as it is).
            let strm = ServedFile(
                contents: Array((url + "\n").utf8), lastModified: source.lastModified,
                contentType: "application/octet-stream", etag: nil,
                contentDispositionFilename: "\(source.name).strm")
            return strm.response(method: request.method, headers: request.headers, ignoreRange: ignoreRange)
        }
        let file = ServedFile(
            contents: mediaBytes(source, library: library), lastModified: source.lastModified,
            contentType: TestServer.mimeType(forPath: source.path), etag: nil,
            contentDispositionFilename: source.downloadFilename)
        return file.response(method: request.method, headers: request.headers, ignoreRange: ignoreRange)
    }

    /// The MIME type Jellyfin sends for a media file: from its path's extension, like its `MimeTypes` table.
    static func mimeType(forPath path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        let ext = name.contains(".") ? name.split(separator: ".").last.map { $0.lowercased() } ?? "" : ""
        switch ext {
        case "mkv": return "video/x-matroska"
        case "mp4", "m4v": return "video/mp4"
        case "mov": return "video/quicktime"
        case "avi": return "video/x-msvideo"
        case "webm": return "video/webm"
        case "ts": return "video/mp2t"
        case "mp3": return "audio/mpeg"
        // Audio types from Jellyfin's `MimeTypes` (v10.10.7 L89–101), else ASP.NET's extension table.
        case "flac": return "audio/flac"
        case "aac": return "audio/aac"
        case "m4a", "m4b": return "audio/mp4"
        case "ogg", "oga", "opus": return "audio/ogg"
        case "wav": return "audio/wav"
        default: return TestLibrary.bookMimeType(ext) ?? "application/octet-stream"
        }
    }

    /// Small deterministic "PNG" bytes (valid signature + IHDR-like header + tag-derived payload).
    static func imageBytes(tag: String) -> [UInt8] {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        return signature + SplitMix64.bytes(seed: SplitMix64.hash("image-\(tag)"), count: 248)
    }

    func imageResponse(_ request: RecordedRequest, itemId: String, type: String, index: Int?, library: TestLibrary)
        -> HTTPResponse
    {
        guard let item = library.item(withId: TestServer.normalizeID(itemId)) else { return .empty(404) }
        let tag: String?
        if type.lowercased() == "backdrop" {
            let i = index ?? 0
            tag = i >= 0 && i < item.backdropImageTags.count ? item.backdropImageTags[i] : nil
        } else {
            tag = item.imageTags.first(where: { $0.key.lowercased() == type.lowercased() })?.value
        }
        guard let tag else { return .empty(404) }
        let cacheControl = request.queryValue("tag") != nil ? "public, max-age=31536000" : "public"
        var file = ServedFile(
            contents: TestServer.imageBytes(tag: tag), lastModified: item.dateCreated,
            contentType: "image/png", etag: "\"\(tag)\"", contentDispositionFilename: nil)
        file.extraHeaders = [("Cache-Control", cacheControl)]
        return file.response(method: request.method, headers: request.headers)
    }

    func subtitle(itemId: String, mediaSourceId: String, index: String, file: String, library: TestLibrary)
        -> HTTPResponse
    {
        guard let item = library.item(withId: TestServer.normalizeID(itemId)),
            item.mediaSources.contains(where: { $0.id == TestServer.normalizeID(mediaSourceId) }),
            index == "2", file.lowercased().hasPrefix("stream.")
        else {
            return .empty(404)
        }
        let format = file.split(separator: ".").last.map { $0.lowercased() } ?? "srt"
        switch format {
        case "srt":
            let text =
                "1\r\n00:00:01,000 --> 00:00:04,000\r\n\(item.name)\r\n\r\n2\r\n00:00:05,000 --> 00:00:08,000\r\nmediasync test subtitle\r\n\r\n"
            return .text(text, status: 200, contentType: "application/x-subrip")
        case "vtt":
            let text =
                "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n\(item.name)\n\n00:00:05.000 --> 00:00:08.000\nmediasync test subtitle\n"
            return .text(text, status: 200, contentType: "text/vtt")
        default:
            return .empty(404)
        }
    }
}

/// A request path split into segments, matched against route patterns case-insensitively (ASP.NET routing).
struct RoutePath {
    let segments: [String]
    let lower: [String]

    init(_ path: String) {
        segments = path.split(separator: "/").map(String.init)
        lower = segments.map { $0.lowercased() }
    }

    /// The segments at the pattern's `*`s (as sent), or nil when the path does not match; literal parts are
    /// lowercase.
    func match(_ pattern: [String]) -> [String]? {
        guard pattern.count == lower.count else { return nil }
        var captures: [String] = []
        for (part, (segment, original)) in zip(pattern, zip(lower, segments)) {
            if part == "*" {
                captures.append(original)
            } else if part != segment {
                return nil
            }
        }
        return captures
    }
}
