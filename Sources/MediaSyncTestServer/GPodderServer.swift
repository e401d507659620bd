import Foundation

/// A gPodder sync server for the tests: mygpo API 2 and Nextcloud gPodder Sync over the test server's loopback
/// socket. Inactive (every request falls through) until a user is added.
///
/// What it models, and where it was read (gpodder/mygpo at e2642086, thrillfall/nextcloud-gpodder at a5361ff6):
/// - mygpo `mygpo/api/advanced/auth.py` `login`: `POST /api/2/auth/{user}/login.json` with HTTP Basic sets a
///   `sessionid` cookie; the other routes take the cookie or Basic. A 401 here carries no `WWW-Authenticate` realm
///   (as some servers' do), so only a client that sends Basic up front gets in.
/// - mygpo `mygpo/api/advanced/__init__.py` `device`: `POST /api/2/devices/{user}/{device}.json`.
/// - mygpo `mygpo/api/advanced/sync.py`: `GET/POST /api/2/sync-devices/{user}.json`, `synchronize` lists; the
///   devices of a group share one subscription list.
/// - mygpo `mygpo/api/subscriptions.py`: `GET ?since=` answers the changes in `[since, now)` of the server's clock
///   and `timestamp` = now; `POST {add, remove}` answers `timestamp` and `update_urls` (the URLs it rewrote).
/// - mygpo `mygpo/api/advanced/__init__.py` `episodes`/`get_episode_changes`: actions filtered on their *own*
///   timestamps, `timestamp__gte=since` and `timestamp__lt=now` (not on upload time); the answer's `timestamp` is
///   the server's now.
/// - mygpo `mygpo/api/advanced/__init__.py` `episode_action_json`: an action is answered with the guid of the
///   server's own episode record (from its own parse of the feed), not the guid uploaded; here none.
/// - mygpo `mygpo/api/advanced/__init__.py` `update_episodes`/`sanitize_append`: an upload's podcast and episode
///   URLs are normalised (`normalize_feed_url`), stored normalised, and each one changed is answered in
///   `update_urls` as `[sent, stored]` (here: the URLs given to ``rewrite(_:to:)``).
/// - Nextcloud `lib/Controller/SubscriptionChangeController.php`, `lib/Controller/EpisodeActionController.php`,
///   `lib/Db/EpisodeAction/EpisodeActionRepository.php`: `/index.php/apps/gpoddersync/subscriptions` (GET
///   `?since=`), `subscription_change/create` (POST, answers `timestamp`), `episode_action` (GET, actions with
///   `timestamp_epoch > since`), `episode_action/create` (POST a JSON array; one row per episode and user, updated
///   by a later action). Basic auth, no devices.
///
/// The server's clock is its own: it starts at ``startTime`` and moves one second per API request, so tests never
/// depend on the wall clock.
public final class GPodderServer: @unchecked Sendable {
    /// One stored episode action.
    public struct Action: Codable, Sendable, Equatable {
        public var podcast: String
        public var episode: String
        public var guid: String?
        public var action: String
        public var timestamp: String?
        public var started: Int?
        public var position: Int?
        public var total: Int?
        public var device: String?
    }

    struct SubscriptionChange {
        var device: String
        var url: String
        var add: Bool
        var at: Int64
    }

    public static let startTime: Int64 = 1_750_000_000

    private let lock = NSLock()
    private var users: [String: String] = [:]
    private var sessions: [String: String] = [:]
    private var devices: [String: Set<String>] = [:]
    private var groups: [String: [[String]]] = [:]
    private var history: [String: [SubscriptionChange]] = [:]
    private var actions: [String: [Action]] = [:]
    /// Each stored action's timestamp as epoch seconds, parsed once when it arrives.
    private var epochs: [String: [Int64?]] = [:]
    private var rewrites: [String: String] = [:]
    private var clock = GPodderServer.startTime
    private var posts: [String: Int] = [:]
    private var lostAnswers: [String: Int] = [:]
    private var refusedPosts: [String: Int] = [:]
    /// The pause of ``holdPOST(_:)``: the paths whose next POST pauses, and those paused now.
    private let gate = NSCondition()
    private var holdNext: Set<String> = []
    private var held: Set<String> = []
    private var gateOpen = false

    public init() {}

    // MARK: Control (tests)

    /// Adds (or changes the password of) a user; the server answers only once it has one.
    public func addUser(_ name: String, password: String) {
        lock.withLock { users[name] = password }
    }

    /// Makes the server rewrite a feed or episode URL it is sent (answered in `update_urls`).
    public func rewrite(_ old: String, to new: String) {
        lock.withLock { rewrites[old] = new }
    }

    /// The server's clock now.
    public var now: Int64 { lock.withLock { clock } }

    /// Moves the server's clock.
    public func advance(seconds: Int64) {
        lock.withLock { clock += seconds }
    }

    /// Every stored action of a user, in upload order.
    public func storedActions(of user: String) -> [Action] {
        lock.withLock { actions[user] ?? [] }
    }

    /// The subscriptions of a device's group now.
    public func subscriptions(of user: String, device: String) -> Set<String> {
        lock.withLock { currentSubscriptions(user: user, device: device) }
    }

    /// The sync groups of a user.
    public func syncGroups(of user: String) -> [[String]] {
        lock.withLock { groups[user] ?? [] }
    }

    /// The devices a user registered.
    public func devices(of user: String) -> Set<String> {
        lock.withLock { devices[user] ?? [] }
    }

    /// Stores the next `count` POSTs to `path` and then resets the connection before the answer's body: the
    /// client cannot tell whether the server has what it sent.
    public func loseAnswer(toPOST path: String, count: Int = 1) {
        lock.withLock { lostAnswers[path, default: 0] += count }
    }

    /// Answers the next `count` POSTs to `path` with 503, storing nothing (a server going down mid-exchange).
    public func refusePOST(_ path: String, count: Int = 1) {
        lock.withLock { refusedPosts[path, default: 0] += count }
    }

    /// Pauses the next POST to `path` after it was stored and before it is answered, until ``releaseHold()`` (or
    /// the server shuts down): a test can kill the client while the server has what it sent.
    public func holdPOST(_ path: String) {
        gate.withLock {
            holdNext.insert(path)
            gateOpen = false
        }
    }

    /// Whether a POST to `path` is paused now.
    public func isHolding(_ path: String) -> Bool {
        gate.withLock { held.contains(path) }
    }

    /// Lets paused POSTs be answered (the answer goes to whoever is still listening).
    public func releaseHold() {
        gate.withLock {
            gateOpen = true
            holdNext.removeAll()
            gate.broadcast()
        }
    }

    /// Called by the server after routing a request, outside its routing lock: waits while the request is held.
    func waitIfHeld(_ request: RecordedRequest) {
        gate.lock()
        defer { gate.unlock() }
        guard request.method == "POST", held.contains(request.path) else { return }
        while !gateOpen { gate.wait() }
        held.remove(request.path)
    }

    /// Marks a POST to be held once it is stored (called with the lock held).
    private func holdIfAsked(_ path: String) {
        gate.withLock {
            if holdNext.remove(path) != nil { held.insert(path) }
        }
    }

    func takeLostAnswer(_ request: RecordedRequest) -> Bool {
        guard request.method == "POST" else { return false }
        return lock.withLock {
            guard let left = lostAnswers[request.path], left > 0 else { return false }
            lostAnswers[request.path] = left - 1
            return true
        }
    }

    /// How many POSTs a path received.
    public func postCount(_ path: String) -> Int {
        lock.withLock { posts[path] ?? 0 }
    }

    // MARK: Routing

    func response(_ request: RecordedRequest) -> HTTPResponse? {
        let path = request.path
        guard path.hasPrefix("/api/2/") || path.hasPrefix("/index.php/apps/gpoddersync/") else { return nil }
        return lock.withLock { () -> HTTPResponse? in
            guard !users.isEmpty else { return nil }
            clock += 1
            if request.method == "POST" {
                posts[path, default: 0] += 1
                if let left = refusedPosts[path], left > 0 {
                    refusedPosts[path] = left - 1
                    return .empty(503)
                }
            }
            let parts = path.split(separator: "/").map(String.init)
            if path.hasPrefix("/index.php/") {
                guard let user = basicUser(request) else { return .text("Unauthorized", status: 401) }
                return nextcloud(request, user: user, route: parts.dropFirst(3).joined(separator: "/"))
            }
            // /api/2/<area>/<user>[/<device>].json
            guard parts.count >= 4 else { return .empty(404) }
            let area = parts[2]
            let user = String(parts[3].replacingOccurrences(of: ".json", with: ""))
            let device = parts.count >= 5 ? String(parts[4].replacingOccurrences(of: ".json", with: "")) : nil
            if area == "auth" {
                guard basicUser(request) == user, parts.count == 5, parts[4] == "login.json" else {
                    return .text("Unauthorized", status: 401)
                }
                let session = "s\(clock)-\(user)"
                sessions[session] = user
                return HTTPResponse(
                    status: 200, headers: [("Set-Cookie", "sessionid=\(session); HttpOnly; Path=/")], body: [])
            }
            guard authenticatedUser(request) == user else { return .text("Unauthorized", status: 401) }
            switch (area, request.method) {
            case ("devices", "POST"):
                guard let device else { return .empty(404) }
                devices[user, default: []].insert(device)
                return json([String: String]())
            case ("sync-devices", "GET"):
                return json(["synchronized": groups[user] ?? [], "not-synchronized": []] as [String: [[String]]])
            case ("sync-devices", "POST"):
                struct Change: Decodable { var synchronize: [[String]]? }
                guard let change = try? JSONDecoder().decode(Change.self, from: Data(request.body)) else {
                    return .empty(400)
                }
                for group in change.synchronize ?? [] { join(user: user, group) }
                return json(["synchronized": groups[user] ?? []])
            case ("subscriptions", "GET"):
                guard let device else { return .empty(404) }
                devices[user, default: []].insert(device)
                return subscriptionChanges(user: user, device: device, since: request.queryValue("since"))
            case ("subscriptions", "POST"):
                guard let device else { return .empty(404) }
                devices[user, default: []].insert(device)
                return uploadSubscriptions(request, user: user, device: device, rewriting: true)
            case ("episodes", "GET"):
                let since = Int64(request.queryValue("since") ?? "0") ?? 0
                // mygpo answers the guid of its own copy of the episode (`episode_action_json`: `episode.guid`), not
                // the one sent: nothing until it has parsed the feed, which this server never does.
                let found = zip(actions[user] ?? [], epochs[user] ?? []).filter { _, at in
                    guard let at else { return false }
                    return at >= since && at < clock
                }.map { action, _ in
                    var answered = action
                    answered.guid = nil
                    return answered
                }
                return json(ActionsBody(actions: found, timestamp: clock))
            case ("episodes", "POST"):
                guard request.header("content-type")?.hasPrefix("application/json") == true,
                    var sent = try? JSONDecoder().decode([Action].self, from: Data(request.body))
                else { return .empty(400) }
                var updates: [[String]] = []
                for index in sent.indices {
                    for keyPath in [\Action.podcast, \Action.episode] {
                        guard let new = rewrites[sent[index][keyPath: keyPath]] else { continue }
                        if !updates.contains([sent[index][keyPath: keyPath], new]) {
                            updates.append([sent[index][keyPath: keyPath], new])
                        }
                        sent[index][keyPath: keyPath] = new
                    }
                }
                actions[user, default: []] += sent
                epochs[user, default: []] += sent.map { epoch($0.timestamp) }
                holdIfAsked(path)
                return json(UploadBody(timestamp: clock, updateURLs: updates))
            default:
                return .empty(404)
            }
        }
    }

    private struct ActionsBody: Encodable {
        var actions: [Action]
        var timestamp: Int64
    }

    private struct UploadBody: Encodable {
        var timestamp: Int64
        var updateURLs: [[String]]

        enum CodingKeys: String, CodingKey {
            case timestamp
            case updateURLs = "update_urls"
        }
    }

    private func nextcloud(_ request: RecordedRequest, user: String, route: String) -> HTTPResponse {
        switch (route, request.method) {
        case ("subscriptions", "GET"):
            return subscriptionChanges(user: user, device: "", since: request.queryValue("since"))
        case ("subscription_change/create", "POST"):
            return uploadSubscriptions(request, user: user, device: "", rewriting: false)
        case ("episode_action", "GET"):
            let since = Int64(request.queryValue("since") ?? "0") ?? 0
            let found = zip(actions[user] ?? [], epochs[user] ?? []).filter { ($0.1 ?? 0) > since }.map { action, _ in
                var upper = action
                upper.action = action.action.uppercased()
                upper.device = nil
                return upper
            }
            return json(ActionsBody(actions: found, timestamp: clock))
        case ("episode_action/create", "POST"):
            guard let sent = try? JSONDecoder().decode([Action].self, from: Data(request.body)) else {
                return .empty(400)
            }
            for action in sent {
                var stored = Array(zip(actions[user] ?? [], epochs[user] ?? []))
                stored.removeAll { ($0.0.guid != nil && $0.0.guid == action.guid) || $0.0.episode == action.episode }
                stored.append((action, epoch(action.timestamp)))
                actions[user] = stored.map(\.0)
                epochs[user] = stored.map(\.1)
            }
            return json(["timestamp": clock])
        default:
            return .empty(404)
        }
    }

    // MARK: Helpers (called with the lock held)

    private func json<T: Encodable>(_ value: T) -> HTTPResponse {
        let body = (try? JSONEncoder().encode(value)).map { [UInt8]($0) } ?? []
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }

    private func basicUser(_ request: RecordedRequest) -> String? {
        guard let header = request.header("authorization"), header.hasPrefix("Basic "),
            let data = Data(base64Encoded: String(header.dropFirst(6))),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        let user = String(text[..<colon])
        let password = String(text[text.index(after: colon)...])
        return users[user] == password ? user : nil
    }

    private func authenticatedUser(_ request: RecordedRequest) -> String? {
        if let cookies = request.header("cookie") {
            for pair in cookies.split(separator: ";") {
                let text = pair.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("sessionid="), let user = sessions[String(text.dropFirst(10))] { return user }
            }
        }
        return basicUser(request)
    }

    private func join(user: String, _ group: [String]) {
        var all = groups[user] ?? []
        var merged = Set(group)
        all.removeAll { existing in
            guard !merged.isDisjoint(with: existing) else { return false }
            merged.formUnion(existing)
            return true
        }
        all.append(merged.sorted())
        groups[user] = all
    }

    private func group(user: String, device: String) -> Set<String> {
        Set((groups[user] ?? []).first { $0.contains(device) } ?? [device])
    }

    private func currentSubscriptions(user: String, device: String) -> Set<String> {
        let members = group(user: user, device: device)
        var current = Set<String>()
        for change in history[user] ?? [] where device.isEmpty || members.contains(change.device) {
            if change.add { current.insert(change.url) } else { current.remove(change.url) }
        }
        return current
    }

    private func subscriptionChanges(user: String, device: String, since: String?) -> HTTPResponse {
        let since = Int64(since ?? "0") ?? 0
        let members = group(user: user, device: device)
        var last: [String: Bool] = [:]
        var order: [String] = []
        for change in history[user] ?? []
        where (device.isEmpty || members.contains(change.device)) && change.at >= since && change.at < clock {
            if last[change.url] == nil { order.append(change.url) }
            last[change.url] = change.add
        }
        let add = order.filter { last[$0] == true }
        let remove = since == 0 ? [] : order.filter { last[$0] == false }
        struct Body: Encodable {
            var add: [String]
            var remove: [String]
            var timestamp: Int64
        }
        return json(Body(add: add, remove: remove, timestamp: clock))
    }

    private func uploadSubscriptions(_ request: RecordedRequest, user: String, device: String, rewriting: Bool)
        -> HTTPResponse
    {
        struct Upload: Decodable {
            var add: [String]?
            var remove: [String]?
        }
        guard let upload = try? JSONDecoder().decode(Upload.self, from: Data(request.body)) else {
            return .empty(400)
        }
        var updates: [[String]] = []
        for url in upload.add ?? [] {
            var stored = url
            if rewriting, let new = rewrites[url] {
                stored = new
                updates.append([url, new])
            }
            history[user, default: []].append(SubscriptionChange(device: device, url: stored, add: true, at: clock))
        }
        for url in upload.remove ?? [] {
            history[user, default: []].append(SubscriptionChange(device: device, url: url, add: false, at: clock))
        }
        return json(UploadBody(timestamp: clock, updateURLs: updates))
    }

    private let formatter = ISO8601DateFormatter()

    /// Called with the lock held (the formatter is not thread-safe).
    private func epoch(_ timestamp: String?) -> Int64? {
        guard let timestamp else { return nil }
        return (formatter.date(from: timestamp) ?? formatter.date(from: timestamp + "Z")).map {
            Int64($0.timeIntervalSince1970)
        }
    }
}
