import Foundation
import HTTPTypes
import Hummingbird
import MediaSyncMirror
import NIOCore

/// The page at `/mediasync/`: what the mirror holds, the home server to pick from, the sync, the podcasts. Its
/// own rules (a session cookie, a CSRF token on every change, same-origin changes only, a strict
/// `Content-Security-Policy`); the Jellyfin routes keep theirs.
struct WebResponder {
    let state: ServeState
    var web: WebState { state.web }

    /// Whether `path` is the page's (`/` too: a browser opening the server is sent to the page).
    static func handles(_ path: String) -> Bool {
        path == "/" || path == "/mediasync" || path.hasPrefix("/mediasync/")
    }

    /// Sent with every answer of the page, its assets and its images.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]

    func respond(to request: Request) async -> Response {
        var response: Response
        do {
            response = try await answer(request)
        } catch let failure as ServeFailure {
            response = Self.page(
                WebPage.layout(
                    title: "Error", tab: nil, csrf: nil, signOut: false, error: failure.message, body: ""),
                status: failure.status)
        } catch {
            response = Self.page(
                WebPage.layout(
                    title: "Error", tab: nil, csrf: nil, signOut: false, error: String(describing: error), body: ""),
                status: .internalServerError)
        }
        for (name, value) in Self.securityHeaders { ServeResponder.setHeader(&response.headers, name, value) }
        return response
    }

    /// One request as the handlers read it.
    struct Call {
        var request: Request
        let query: RequestQuery
        let session: WebState.PageSession
        /// Whether a password is set (then "Sign out" is offered).
        let signOut: Bool
        var csrf: String { session.csrf }
    }

    private func answer(_ request: Request) async throws -> Response {
        let path = request.uri.path
        let method = request.method
        let read = method == .get || method == .head
        if path == "/" || path == "/mediasync" {
            guard read else { return Self.methodNotAllowed("GET, HEAD") }
            return Self.redirect("/mediasync/", status: .found)
        }
        let rest = String(path.dropFirst("/mediasync/".count))
        if rest == "assets/site.css" {
            guard read else { return Self.methodNotAllowed("GET, HEAD") }
            return Self.asset(WebAssets.stylesheet, type: "text/css; charset=utf-8")
        }
        let password = web.currentPassword()
        var session = web.session(WebState.cookie(WebState.cookie, in: request.headers[.cookie]), password: password)
        var newCookie: String?
        if rest == "sign-in" {
            guard method == .post else { return Self.methodNotAllowed("POST") }
            guard Self.sameOrigin(request) else { return Self.forbidden("another site's form") }
            return try await signIn(request, password: password)
        }
        if session == nil, password == nil, read {
            // No password (`serve` then listens on loopback only): the page asks for none, but changes still need
            // the page's own token, so a session is opened.
            let opened = web.open(password: nil)
            session = opened
            newCookie = Self.sessionCookie(opened.id, request)
        }
        guard let session else {
            if rest.hasPrefix("api/") { return Self.jsonError(.unauthorized, "sign in first") }
            return Self.page(WebPage.signIn(wrong: false), status: rest.isEmpty && read ? .ok : .unauthorized)
        }
        if !read {
            guard method == .post else { return Self.methodNotAllowed("GET, HEAD, POST") }
            guard Self.sameOrigin(request) else { return Self.forbidden("another site's request") }
        }
        var call = Call(
            request: request, query: RequestQuery(request.uri.query), session: session, signOut: password != nil)
        var form = RequestQuery(nil)
        if method == .post {
            form = try await Self.form(&call.request)
            let token = form.string("csrf") ?? Self.header(request, "X-CSRF-Token") ?? ""
            guard WebState.same(token, session.csrf) else { return Self.forbidden("the page's token is missing") }
        }
        var response = try await route(rest, method: method, call: call, form: form)
        if let newCookie { ServeResponder.setHeader(&response.headers, "Set-Cookie", newCookie) }
        return response
    }

    private func route(_ rest: String, method: HTTPRequest.Method, call: Call, form: RequestQuery) async throws
        -> Response
    {
        let post = method == .post
        switch rest {
        case "":
            return post ? Self.methodNotAllowed("GET, HEAD") : try mirrorPage(call)
        case "browse":
            return post ? Self.methodNotAllowed("GET, HEAD") : await browsePage(call)
        case "sync":
            return post ? startSync(call) : syncPage(call)
        case "podcasts":
            return post ? Self.methodNotAllowed("GET, HEAD") : try podcastsPage(call)
        case "assets/site.js":
            return post ? Self.methodNotAllowed("GET, HEAD") : Self.asset(WebAssets.script, type: "text/javascript")
        case "api/progress":
            return post ? Self.methodNotAllowed("GET, HEAD") : Self.json(progressJSON())
        case "api/events":
            return post ? Self.methodNotAllowed("GET") : events()
        case "keep":
            return post ? try await keep(call, form) : Self.methodNotAllowed("POST")
        case "unkeep":
            return post ? try unkeep(call, form) : Self.methodNotAllowed("POST")
        case "podcasts/subscribe":
            return post ? try await subscribe(call, form) : Self.methodNotAllowed("POST")
        case "podcasts/unsubscribe":
            return post ? try unsubscribe(call, form) : Self.methodNotAllowed("POST")
        case "sign-out":
            guard post else { return Self.methodNotAllowed("POST") }
            web.close(call.session.id)
            var response = Self.redirect("/mediasync/")
            ServeResponder.setHeader(
                &response.headers, "Set-Cookie",
                "\(WebState.cookie)=; Path=/mediasync/; Max-Age=0; HttpOnly; SameSite=Strict")
            return response
        default:
            if rest.hasPrefix("image/held/"), !post {
                return try await heldImage(String(rest.dropFirst("image/held/".count)), call)
            }
            if rest.hasPrefix("image/server/"), !post {
                return try await serverImage(String(rest.dropFirst("image/server/".count)))
            }
            return Self.page(
                WebPage.layout(
                    title: "Not found", tab: nil, csrf: call.csrf, signOut: call.signOut, error: "Not found",
                    body: ""), status: .notFound)
        }
    }

    // MARK: Sign-in

    private func signIn(_ request: Request, password: ServePassword?) async throws -> Response {
        var request = request
        let form = try await Self.form(&request)
        let given = form.string("password") ?? ""
        if let password {
            guard password.accepts(user: password.user, password: given) else {
                // Slowed down as a Jellyfin sign-in is, besides the hash's own time.
                try? await Task.sleep(for: WebState.wrongPasswordDelay)
                return Self.page(WebPage.signIn(wrong: true), status: .unauthorized)
            }
        }
        let session = web.open(password: password)
        var response = Self.redirect("/mediasync/")
        ServeResponder.setHeader(&response.headers, "Set-Cookie", Self.sessionCookie(session.id, request))
        return response
    }

    /// The session cookie: HttpOnly, SameSite=Strict, for the page's path only; Secure when the browser reached
    /// `serve` over TLS (through a proxy that says so in `X-Forwarded-Proto`).
    static func sessionCookie(_ id: String, _ request: Request) -> String {
        let tls = Self.header(request, "X-Forwarded-Proto")?.lowercased() == "https"
        return "\(WebState.cookie)=\(id); Path=/mediasync/; Max-Age=\(Int(WebState.lifetime)); HttpOnly; "
            + "SameSite=Strict\(tls ? "; Secure" : "")"
    }

    /// The value of header `name`; nil when absent, or when `name` is not a field name (never another header's).
    static func header(_ request: Request, _ name: String) -> String? {
        guard let field = HTTPField.Name(name) else { return nil }
        return request.headers[field]
    }

    /// Whether a changing request comes from the page itself: its `Origin` names this server, or (without one, or
    /// with `null`, which a browser sends under the page's `Referrer-Policy: no-referrer`) its `Sec-Fetch-Site` says
    /// the same origin.
    static func sameOrigin(_ request: Request) -> Bool {
        let host = request.head.authority ?? ""
        let site = Self.header(request, "Sec-Fetch-Site")
        if let origin = request.headers[.origin], origin != "null" {
            return !host.isEmpty && (origin == "http://" + host || origin == "https://" + host)
                && (site == nil || site == "same-origin")
        }
        if let site { return site == "same-origin" || site == "none" }
        // `null` without `Sec-Fetch-Site`: a sandboxed frame or a privacy-minded client; not the page.
        return request.headers[.origin] == nil
    }

    // MARK: Mirror

    /// Which bar a kind of held item is drawn in.
    static func kind(ofType type: String) -> (key: String, name: String) {
        switch type {
        case "Movie": return ("movie", "Movies")
        case "Series": return ("series", "Shows")
        case "MusicAlbum", "MusicArtist", "Playlist", "Audio": return ("music", "Music")
        case "Podcast": return ("podcast", "Podcasts")
        case "AudioBook", "Book": return ("books", "Books")
        default: return ("other", "Other")
        }
    }

    private func mirrorPage(_ call: Call) throws -> Response {
        let mirror = Mirror.using(root: state.root, index: state.index, durable: false)
        let usage = try mirror.storage.usage()
        let library = try mirror.library.items()
        let budget = try StoredBudget.read(state.index)
        let last = SyncProgressFile.read(state.root)
        let catalog = state.catalog()
        var sizes: [String: Int64] = [:]
        var names: [String: String] = [:]
        for entry in usage.entries {
            let kind = Self.kind(ofType: entry.type)
            sizes[kind.key, default: 0] += entry.bytes
            names[kind.key] = kind.name
        }
        let order = ["movie", "series", "music", "podcast", "books", "other"].filter { sizes[$0] != nil }
        let whole = max(1, usage.totalBytes + usage.freeBytes)
        var body = "<h1>Mirror</h1><section class=\"card\"><h2>Space</h2>"
        body += "<svg class=\"bar\" viewBox=\"0 0 1000 20\" preserveAspectRatio=\"none\" role=\"img\" "
        body += "aria-label=\"space used by kind and free\">"
        var x = 0.0
        for key in order {
            let width = Double(sizes[key] ?? 0) / Double(whole) * 1000
            body += "<rect class=\"k-\(key)\" x=\"\(String(format: "%.2f", x))\" y=\"0\" "
            body += "width=\"\(String(format: "%.2f", max(width, 2)))\" height=\"20\"/>"
            x += max(width, 2)
        }
        body += "<rect class=\"k-free\" x=\"\(String(format: "%.2f", x))\" y=\"0\" "
        body += "width=\"\(String(format: "%.2f", max(0, 1000 - x)))\" height=\"20\"/></svg><ul class=\"legend\">"
        for key in order {
            body += "<li><svg viewBox=\"0 0 1 1\"><rect class=\"k-\(key)\" width=\"1\" height=\"1\"/></svg>"
            body += "\(names[key] ?? key) <strong>\(WebPage.bytes(sizes[key] ?? 0))</strong></li>"
        }
        body += "<li><svg viewBox=\"0 0 1 1\"><rect class=\"k-free\" width=\"1\" height=\"1\"/></svg>"
        body += "Free <strong id=\"free-space\">\(WebPage.bytes(usage.freeBytes))</strong></li></ul>"
        body += "<p>Held \(WebPage.bytes(usage.totalBytes)) in \(usage.entries.count) items"
        if let budget { body += "; budget <strong id=\"budget\">\(WebPage.bytes(budget))</strong>" }
        body += ".</p>"
        if let warning = usage.warning { body += "<p class=\"error\">\(WebPage.escape(warning))</p>" }
        body += "</section><h2>Held</h2>"
        if usage.entries.isEmpty {
            body += "<p class=\"muted\">Nothing is held yet: keep something offline under Browse, then Sync now.</p>"
        }
        body += "<ul class=\"grid\" id=\"held\">"
        let failedPaths = (last?.failed ?? []).map(\.name)
        // An item whose metadata is not written yet (its media failed) is named by its selection.
        let selected = Dictionary(
            try state.index.selections().map { (ServeIds.plain($0.id), $0.name) }, uniquingKeysWith: { a, _ in a })
        let entries = usage.entries.map { entry -> StorageQueries.Usage.Entry in
            var entry = entry
            if entry.title == entry.id, let name = selected[ServeIds.plain(entry.id)] ?? nil { entry.title = name }
            return entry
        }
        for entry in entries.sorted(by: { $0.title.localizedCompare($1.title) == .orderedAscending }) {
            let related = library.filter { $0.id == entry.id || ($0.parent == entry.title && $0.type != "track") }
            let state: String
            if failedPaths.contains(where: { $0.contains("/\(entry.id)/") || $0.contains("/\(entry.title)") }) {
                state = "failed"
            } else if related.contains(where: { !$0.downloaded }) {
                state = "partial"
            } else {
                state = "ok"
            }
            let catalogId =
                entry.type == "Podcast"
                ? Catalog.podcastId(serverId: self.state.dto.serverId, podcastId: entry.id) : entry.id
            let hasPoster = catalog.item(catalogId).map { Self.primaryImage($0) != nil } ?? false
            body += "<li class=\"tile\">"
            body += WebPage.poster(
                hasPoster ? "/mediasync/image/held/\(WebPage.encode(catalogId))" : nil, alt: entry.title)
            body += "<div class=\"body\"><span class=\"name\">\(WebPage.escape(entry.title))</span>"
            body += "<span class=\"muted\">\(WebPage.escape(Self.kind(ofType: entry.type).name)) · "
            body += "\(WebPage.bytes(entry.bytes)) · \(entry.files) files</span>"
            body += "<span class=\"state-\(state)\">\(state)</span></div></li>"
        }
        body += "</ul>"
        return Self.page(
            WebPage.layout(title: "Mirror", tab: .mirror, csrf: call.csrf, signOut: call.signOut, body: body))
    }

    static func primaryImage(_ item: CatalogItem) -> HeldFile? {
        item.images.first { $0.key.lowercased() == "primary" }?.value
    }

    private func heldImage(_ id: String, _ call: Call) async throws -> Response {
        guard ServeIds.isAcceptable(id), let item = state.catalog().item(id), let held = Self.primaryImage(item),
            let data = FileManager.default.contents(atPath: held.path), data.count <= 32 << 20
        else { return Self.status(.notFound) }
        return Self.image([UInt8](data), type: ContentTypes.forPath(held.path))
    }

    // MARK: Browse

    /// The browse page's kinds: a Jellyfin type and the `select` kind it is kept as.
    static func selectionKind(_ type: String?) -> Selection.Kind? {
        switch type {
        case "Movie": return .movie
        case "Series": return .series
        case "Season": return .season
        case "MusicAlbum": return .album
        case "MusicArtist": return .artist
        case "Playlist": return .playlist
        case "BoxSet": return .collection
        default: return nil
        }
    }

    static let pageSize = 24

    /// The home server's sign-in, or why there is none; its calls connect and retry as ``WebState/homeServer`` says.
    private func browser() throws -> ServerBrowser {
        guard let config = web.config else { throw ServeFailure(.serviceUnavailable, "no configuration folder") }
        return ServerBrowser(
            session: try Session.open(
                config: config, configuration: web.homeServer.configuration,
                retryPolicy: web.homeServer.retryPolicy))
    }

    private func browsePage(_ call: Call) async -> Response {
        let library = call.query.nonEmpty("library")
        let search = call.query.nonEmpty("search")
        let pageNumber = max(1, call.query.int("page") ?? 1)
        var body = "<h1>Browse</h1>"
        let notice = call.query.nonEmpty("notice").flatMap { Self.notices[$0] }
        do {
            let browser = try browser()
            let libraries = try await browser.list(.library)
            let page = try await browser.page(
                parent: library, search: search, start: (pageNumber - 1) * Self.pageSize, limit: Self.pageSize)
            let kept = Set(try state.index.selections().map { ServeIds.plain($0.id) })
            body +=
                "<ul class=\"libraries\"><li><a href=\"/mediasync/browse\"\(library == nil ? " aria-current=\"page\"" : "")>All</a></li>"
            for view in libraries {
                let current = view.id == library ? " aria-current=\"page\"" : ""
                body += "<li><a href=\"/mediasync/browse?library=\(WebPage.encode(view.id))\"\(current)>"
                body += "\(WebPage.escape(view.name ?? view.id))</a></li>"
            }
            body += "</ul><form method=\"get\" action=\"/mediasync/browse\" role=\"search\" class=\"card\">"
            if let library { body += "<input type=\"hidden\" name=\"library\" value=\"\(WebPage.escape(library))\">" }
            body += "<label for=\"search\">Search</label> <input type=\"search\" id=\"search\" name=\"search\" "
            body += "value=\"\(WebPage.escape(search ?? ""))\"> <button type=\"submit\">Search</button></form>"
            let back = Self.browseLink(library: library, search: search, page: pageNumber)
            if page.items.isEmpty { body += "<p class=\"muted\">Nothing found.</p>" }
            body += "<ul class=\"grid\" id=\"items\">"
            for item in page.items {
                let name = item.name ?? item.id
                let poster =
                    page.withPoster.contains(item.id) ? "/mediasync/image/server/\(WebPage.encode(item.id))" : nil
                body += "<li class=\"tile\" data-id=\"\(WebPage.escape(item.id))\">\(WebPage.poster(poster, alt: name))"
                body += "<div class=\"body\"><span class=\"name\">\(WebPage.escape(name))</span>"
                body +=
                    "<span class=\"muted\">\(WebPage.escape([item.type ?? "", item.detail].filter { !$0.isEmpty }.joined(separator: " · ")))</span>"
                if kept.contains(ServeIds.plain(item.id)) {
                    body += "<span class=\"kept\">Kept offline</span>"
                    body += "<form method=\"post\" action=\"/mediasync/unkeep\">\(WebPage.hidden(call.csrf))"
                    body += "<input type=\"hidden\" name=\"id\" value=\"\(WebPage.escape(item.id))\">"
                    body += "<input type=\"hidden\" name=\"back\" value=\"\(WebPage.escape(back))\">"
                    body += "<button type=\"submit\" class=\"secondary\">Stop keeping</button></form>"
                } else if let kind = Self.selectionKind(item.type) {
                    body += "<form method=\"post\" action=\"/mediasync/keep\">\(WebPage.hidden(call.csrf))"
                    body += "<input type=\"hidden\" name=\"id\" value=\"\(WebPage.escape(item.id))\">"
                    body += "<input type=\"hidden\" name=\"back\" value=\"\(WebPage.escape(back))\">"
                    if kind == .movie || kind == .series {
                        body +=
                            "<label><input type=\"checkbox\" name=\"all_versions\" value=\"1\"> all versions</label>"
                        body += "<label>quality <select name=\"quality\"><option value=\"original\">original</option>"
                        body += "<option>1080p</option><option>720p</option><option>480p</option></select></label>"
                    }
                    if kind == .series {
                        body += "<label>next <input type=\"number\" name=\"next_unplayed\" min=\"1\" max=\"999\" "
                        body += "size=\"3\"> unplayed</label>"
                    }
                    body += "<button type=\"submit\">Keep offline</button></form>"
                }
                body += "</div></li>"
            }
            body += "</ul>"
            let pages = max(1, (page.total + Self.pageSize - 1) / Self.pageSize)
            body += "<nav class=\"pager\" aria-label=\"pages\">"
            if pageNumber > 1 {
                body +=
                    "<a href=\"\(WebPage.escape(Self.browseLink(library: library, search: search, page: pageNumber - 1)))\">Previous</a>"
            }
            body += "<span>Page \(pageNumber) of \(pages) (\(page.total) items)</span>"
            if pageNumber < pages {
                body +=
                    "<a href=\"\(WebPage.escape(Self.browseLink(library: library, search: search, page: pageNumber + 1)))\" rel=\"next\">Next</a>"
            }
            body += "</nav>"
        } catch {
            body += "<p class=\"error\" role=\"alert\" id=\"unreachable\">Server unreachable: "
            body += "\(WebPage.escape(String(describing: error)))</p>"
            body += "<p>What the mirror holds is still under <a href=\"/mediasync/\">Mirror</a>.</p>"
        }
        return Self.page(
            WebPage.layout(
                title: "Browse", tab: .browse, csrf: call.csrf, signOut: call.signOut, notice: notice, body: body))
    }

    static func browseLink(library: String?, search: String?, page: Int) -> String {
        var parts: [String] = []
        if let library { parts.append("library=" + WebPage.encode(library)) }
        if let search { parts.append("search=" + WebPage.encode(search)) }
        if page > 1 { parts.append("page=\(page)") }
        return "/mediasync/browse" + (parts.isEmpty ? "" : "?" + parts.joined(separator: "&"))
    }

    /// The texts a redirect names by a code (never text from the request).
    static let notices: [String: String] = [
        "kept": "Kept offline: Sync now downloads it.",
        "unkept": "No longer kept offline: its files stay until a sync with --delete.",
        "started": "Sync started.",
        "running": "A sync is already running; wait for it to finish.",
        "subscribed": "Subscribed: Sync now downloads its episodes.",
        "unsubscribed": "Unsubscribed: the episodes stay until a sync with --delete.",
    ]

    /// Where a form sends the browser back to: a browse page, nothing else.
    static func back(_ form: RequestQuery, notice: String) -> String {
        var target = form.nonEmpty("back") ?? "/mediasync/browse"
        if !target.hasPrefix("/mediasync/browse") || target.contains("//") || target.contains("\\") {
            target = "/mediasync/browse"
        }
        return target + (target.contains("?") ? "&" : "?") + "notice=" + notice
    }

    /// "Keep offline": the selection `mediasync select KIND ID` makes (with all versions, a quality preset, the next
    /// N unplayed).
    private func keep(_ call: Call, _ form: RequestQuery) async throws -> Response {
        guard let id = form.nonEmpty("id"), SafeName.id(id) != nil else {
            throw ServeFailure(.badRequest, "not an item id")
        }
        let item: ServerItem
        do {
            item = try await browser().item(id: id)
        } catch {
            throw ServeFailure(.badGateway, "Server unreachable: \(error)")
        }
        guard let kind = Self.selectionKind(item.type) else {
            throw ServeFailure(.badRequest, "a \(item.type ?? "thing of unknown type") cannot be kept offline")
        }
        var quality: Quality?
        if kind == .movie || kind == .series || kind == .season, let name = form.nonEmpty("quality")?.lowercased(),
            name != "original"
        {
            guard let preset = Quality.presets[name] else { throw ServeFailure(.badRequest, "not a quality") }
            if preset.container != "ts", Remuxer.locate() == nil {
                throw ServeFailure(.badRequest, "ffmpeg is not installed: nothing was selected")
            }
            quality = preset
        }
        let next = form.int("next_unplayed")
        if let next, next < 1 { throw ServeFailure(.badRequest, "next unplayed must be at least 1") }
        try state.index.select(
            Selection(
                id: id, kind: kind, allVersions: form.nonEmpty("all_versions") != nil,
                nextUnplayed: kind == .series || kind == .season ? next : nil, name: item.name,
                addedAt: ISO8601DateFormatter().string(from: Date()), quality: quality))
        return Self.redirect(Self.back(form, notice: "kept"))
    }

    /// "Stop keeping": `mediasync unselect ID` (the files stay until `sync --delete`).
    private func unkeep(_ call: Call, _ form: RequestQuery) throws -> Response {
        guard let id = form.nonEmpty("id"), SafeName.id(id) != nil else {
            throw ServeFailure(.badRequest, "not an item id")
        }
        let selected = try state.index.selections().first { ServeIds.plain($0.id) == ServeIds.plain(id) }
        guard let selected, try state.index.unselect(id: selected.id) else {
            throw ServeFailure(.notFound, "not kept offline")
        }
        return Self.redirect(Self.back(form, notice: "unkept"))
    }

    // MARK: Sync

    private func syncPage(_ call: Call) -> Response {
        let notice = call.query.nonEmpty("notice").flatMap { Self.notices[$0] }
        var body = "<h1>Sync</h1><form method=\"post\" action=\"/mediasync/sync\" class=\"card\">"
        body += "\(WebPage.hidden(call.csrf))<button type=\"submit\" id=\"sync-now\">Sync now</button> "
        body += "<span class=\"muted\">the same as <code>mediasync sync</code>, with the stored budget</span></form>"
        body += WebPage.syncPanel(progress())
        return Self.page(
            WebPage.layout(
                title: "Sync", tab: .sync, csrf: call.csrf, signOut: call.signOut, notice: notice, body: body)
        )
    }

    private func startSync(_ call: Call) -> Response {
        switch web.startSync() {
        case .started: return Self.redirect("/mediasync/sync?notice=started")
        case .alreadyRunning: return Self.redirect("/mediasync/sync?notice=running")
        case .failed(let message):
            return Self.page(
                WebPage.layout(
                    title: "Sync", tab: .sync, csrf: call.csrf, signOut: call.signOut, error: message,
                    body: WebPage.syncPanel(progress())), status: .conflict)
        }
    }

    /// The progress file, each failed file named by the item it belongs to (`Downloads/ID/…`: the selection's
    /// name, else the held item's), its path kept in the reason.
    func progress() -> SyncProgressState? {
        guard var progress = SyncProgressFile.read(state.root) else { return nil }
        guard !progress.failed.isEmpty else { return progress }
        let selections = (try? state.index.selections()) ?? []
        let catalog = state.catalog()
        progress.failed = progress.failed.map { item in
            let parts = item.name.split(separator: "/")
            guard parts.count >= 3, parts[0] == "Downloads" else { return item }
            let id = String(parts[1])
            let name =
                selections.first { ServeIds.plain($0.id) == ServeIds.plain(id) }?.name ?? catalog.item(id)?.name
            guard let name else { return item }
            return SyncProgressState.FailedItem(name: name, reason: "\(item.reason) (\(item.name))")
        }
        return progress
    }

    /// The progress as JSON (`{"running":false}` when no sync has written one).
    func progressJSON() -> String {
        guard let progress = progress() else { return "{\"running\":false}" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(progress) else { return "{\"running\":false}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Server-sent events: the progress as it changes (looked at ten times a second), a comment every 15 s to keep
    /// the connection, and an end after ten minutes (the browser connects again by itself).
    private func events() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        let responder = self
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            var last = ""
            var quiet = 0
            for _ in 0..<6_000 {
                let json = responder.progressJSON()
                if json != last {
                    try await writer.write(ByteBuffer(string: "data: \(json)\n\n"))
                    last = json
                    quiet = 0
                } else {
                    quiet += 1
                    if quiet >= 150 {
                        try await writer.write(ByteBuffer(string: ": still here\n\n"))
                        quiet = 0
                    }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    // MARK: Podcasts

    private func podcastsPage(_ call: Call, error: String? = nil) throws -> Response {
        let notice = call.query.nonEmpty("notice").flatMap { Self.notices[$0] }
        let subscriptions = try state.index.subscriptions()
        let library = try Mirror.using(root: state.root, index: state.index, durable: false).library.items()
        let catalog = state.catalog()
        var body = "<h1>Podcasts</h1><form method=\"post\" action=\"/mediasync/podcasts/subscribe\" class=\"card\">"
        body += "\(WebPage.hidden(call.csrf))<label for=\"feed\">Feed URL</label> "
        body += "<input type=\"url\" id=\"feed\" name=\"url\" required placeholder=\"https://example.org/feed.xml\"> "
        body += "<button type=\"submit\">Subscribe</button></form>"
        if subscriptions.isEmpty { body += "<p class=\"muted\">No podcasts yet.</p>" }
        body += "<ul class=\"grid-list\" id=\"podcasts\">"
        for subscription in subscriptions {
            let title = subscription.title ?? subscription.feedURL
            let catalogId = Catalog.podcastId(serverId: state.dto.serverId, podcastId: subscription.id)
            let hasArt = catalog.item(catalogId).map { Self.primaryImage($0) != nil } ?? false
            let episodes = library.filter {
                $0.type == "podcast-episode" && $0.parent == (subscription.title ?? "") && $0.downloaded
            }
            body += "<li class=\"card podcast\">"
            body += WebPage.poster(hasArt ? "/mediasync/image/held/\(WebPage.encode(catalogId))" : nil, alt: title)
            body +=
                "<div><h2>\(WebPage.escape(title))</h2><p class=\"muted\">\(WebPage.escape(subscription.feedURL))</p>"
            body += "<p>\(CountText.of(episodes.count, "episode")) held</p><ul>"
            for episode in episodes.prefix(50) {
                body +=
                    "<li>\(WebPage.escape(episode.title)) <span class=\"muted\">\(WebPage.bytes(episode.bytes))</span></li>"
            }
            body += "</ul><form method=\"post\" action=\"/mediasync/podcasts/unsubscribe\">\(WebPage.hidden(call.csrf))"
            body += "<input type=\"hidden\" name=\"id\" value=\"\(WebPage.escape(subscription.id))\">"
            body += "<button type=\"submit\" class=\"secondary\">Unsubscribe</button></form></div></li>"
        }
        body += "</ul>"
        return Self.page(
            WebPage.layout(
                title: "Podcasts", tab: .podcasts, csrf: call.csrf, signOut: call.signOut, notice: notice,
                error: error, body: body), status: error == nil ? .ok : .unprocessableContent)
    }

    /// "Subscribe": `mediasync podcast add URL` (the default retention).
    private func subscribe(_ call: Call, _ form: RequestQuery) async throws -> Response {
        guard let url = form.nonEmpty("url") else { return try podcastsPage(call, error: "give the feed's URL") }
        guard let config = web.config else { throw ServeFailure(.serviceUnavailable, "no configuration folder") }
        do {
            _ = try await Subscriptions(index: state.index, config: config).add(
                url: url, retention: .defaultForNewSubscriptions)
        } catch {
            return try podcastsPage(call, error: "cannot subscribe: \(error)")
        }
        return Self.redirect("/mediasync/podcasts?notice=subscribed")
    }

    /// "Unsubscribe": `mediasync podcast remove` (the episodes stay until `sync --delete`).
    private func unsubscribe(_ call: Call, _ form: RequestQuery) throws -> Response {
        guard let id = form.nonEmpty("id"), let subscription = try state.index.subscription(matching: id),
            try state.index.unsubscribe(id: subscription.id)
        else { throw ServeFailure(.notFound, "not subscribed") }
        if let config = web.config { try? FeedCredentialStore(config: config).remove(podcastId: subscription.id) }
        return Self.redirect("/mediasync/podcasts?notice=unsubscribed")
    }

    // MARK: Images from the home server

    /// A poster from the home server, asked with the stored sign-in (the token stays here).
    private func serverImage(_ id: String) async throws -> Response {
        guard SafeName.id(id) != nil else { return Self.status(.badRequest) }
        let bytes: [UInt8]
        do {
            bytes = try await browser().poster(id: id, maxWidth: 400)
        } catch {
            return Self.status(.notFound)
        }
        return Self.image(bytes, type: Self.imageType(bytes))
    }

    /// The image type its first bytes say (JPEG when unknown).
    static func imageType(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0x47, 0x49, 0x46]) { return "image/gif" }
        if bytes.count > 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46], bytes[8..<12] == [0x57, 0x45, 0x42, 0x50] {
            return "image/webp"
        }
        return "image/jpeg"
    }

    // MARK: Answers

    private static func form(_ request: inout Request) async throws -> RequestQuery {
        let buffer = try await request.collectBody(upTo: 64 << 10)
        return RequestQuery(String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    static func page(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    static func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func image(_ bytes: [UInt8], type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "private, max-age=3600"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func jsonError(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        // Encoded, so a quote or a backslash in the message stays inside the string.
        let body =
            (try? JSONEncoder().encode(["error": message])).map { String(decoding: $0, as: UTF8.self) }
            ?? "{\"error\":\"\"}"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func redirect(_ location: String, status: HTTPResponse.Status = .seeOther) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: status, headers: headers)
    }

    static func forbidden(_ why: String) -> Response {
        page(
            WebPage.layout(title: "Refused", tab: nil, csrf: nil, signOut: false, error: "Refused: \(why).", body: ""),
            status: .forbidden)
    }

    static func methodNotAllowed(_ allowed: String) -> Response {
        var response = status(.methodNotAllowed)
        ServeResponder.setHeader(&response.headers, "Allow", allowed)
        return response
    }

    static func status(_ status: HTTPResponse.Status) -> Response {
        Response(status: status)
    }
}
