import Foundation
import MediaSyncHTTP

/// Talks to a gPodder-compatible server: mygpo API 2 (gpodder.net and its copies) or Nextcloud gPodder Sync.
///
/// Every request goes to the account's own origin only, with HTTP Basic sent up front (some servers' 401 has no
/// realm to answer) and, on mygpo, the session cookie its login set. Redirects are not followed: the credentials
/// never reach another host.
final class GPodderClient: Sendable {
    let account: PodcastAccount
    let http: HTTPClient
    private let cookie = Locked<String?>(nil)

    init(account: PodcastAccount, http: HTTPClient) {
        self.account = account
        self.http = http
    }

    private var user: String {
        account.username.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"]))
            ?? account.username
    }

    private var device: String {
        account.device.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"]))
            ?? account.device
    }

    // MARK: Requests

    private func request(_ method: String, _ path: String, query: [(String, String)] = [], body: [UInt8]? = nil)
        throws -> HTTPRequest
    {
        var url = account.server + path
        if !query.isEmpty {
            var components = URLComponents()
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            url += "?" + (components.percentEncodedQuery ?? "")
        }
        guard let origin = PodcastAccount.origin(of: url), origin == account.origin else {
            throw SyncError.invalidInput("\(account.server) is not an http(s) URL")
        }
        var headers: HTTPHeaders = [:]
        let basic = Data("\(account.username):\(account.password)".utf8).base64EncodedString()
        headers.add(name: "Authorization", value: "Basic \(basic)")
        if let cookie = cookie.withLock({ $0 }) { headers.add(name: "Cookie", value: cookie) }
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        var request = HTTPRequest(method: method, url: url, headers: headers, body: body, followRedirects: false)
        request.timeout = 60
        return request
    }

    private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await http.send(request)
        } catch let error as HTTPError where error.status == 401 || error.status == 403 {
            throw SyncError.invalidInput(
                "\(account.server) refused the user name or password of \(account.username) (HTTP \(error.status ?? 401))"
            )
        }
        if (300..<400).contains(response.status) {
            throw SyncError.invalidInput(
                "\(account.server) answered with a redirect (HTTP \(response.status)); give the URL it redirects to")
        }
        return response
    }

    private func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            let start = String(decoding: response.body.prefix(60), as: UTF8.self)
                .replacingOccurrences(of: "\n", with: " ")
            throw SyncError.invalidInput(
                "\(account.server) did not answer as a gPodder server (expected JSON, got: \(start.debugDescription))")
        }
    }

    private static func json<T: Encodable>(_ value: T) throws -> [UInt8] {
        [UInt8](try JSONEncoder().encode(value))
    }

    // MARK: The API

    /// Signs in (mygpo: `POST /api/2/auth/{user}/login.json`, keeping the session cookie it sets; Nextcloud: one
    /// subscription listing, which checks the password).
    /// - Throws: ``SyncError`` when the password is refused or the server is not a gPodder server.
    func login() async throws {
        switch account.kind {
        case .mygpo:
            let response = try await send(try request("POST", "/api/2/auth/\(user)/login.json", body: []))
            for field in response.headers where field.name.lowercased() == "set-cookie" {
                if let pair = field.value.split(separator: ";").first {
                    let text = pair.trimmingCharacters(in: .whitespaces)
                    if text.contains("=") { cookie.withLock { $0 = text } }
                }
            }
        case .nextcloud:
            _ = try await subscriptions(since: nil)
        }
    }

    /// Registers this mirror's device (mygpo: `POST /api/2/devices/{user}/{device}.json`).
    func registerDevice() async throws {
        guard account.kind == .mygpo else { return }
        struct Device: Encodable {
            var caption: String
            var type: String
        }
        _ = try await send(
            try request(
                "POST", "/api/2/devices/\(user)/\(device).json",
                body: GPodderClient.json(Device(caption: "mediasync mirror", type: "server"))))
    }

    /// The sync groups (mygpo: `GET /api/2/sync-devices/{user}.json`).
    func syncGroups() async throws -> [[String]] {
        guard account.kind == .mygpo else { return [] }
        struct Status: Decodable { var synchronized: [[String]] }
        return try decode(Status.self, try await send(try request("GET", "/api/2/sync-devices/\(user).json")))
            .synchronized
    }

    /// Puts this device in one group with `devices` (mygpo: `POST /api/2/sync-devices/{user}.json`).
    func synchronize(with devices: [String]) async throws {
        guard account.kind == .mygpo, !devices.isEmpty else { return }
        struct Change: Encodable { var synchronize: [[String]] }
        _ = try await send(
            try request(
                "POST", "/api/2/sync-devices/\(user).json",
                body: GPodderClient.json(Change(synchronize: [[account.device] + devices]))))
    }

    /// The subscription changes since a server time (everything when nil).
    func subscriptions(since: Int64?) async throws -> SubscriptionChanges {
        let query = [("since", String(since ?? 0))]
        let path =
            account.kind == .mygpo
            ? "/api/2/subscriptions/\(user)/\(device).json" : "/index.php/apps/gpoddersync/subscriptions"
        return try decode(SubscriptionChanges.self, try await send(try request("GET", path, query: query)))
    }

    /// Sends subscription changes; the server's time and its URL rewrites.
    func upload(add: [String], remove: [String]) async throws -> UploadAnswer {
        let body = try GPodderClient.json(SubscriptionChanges(add: add, remove: remove, timestamp: nil))
        let path =
            account.kind == .mygpo
            ? "/api/2/subscriptions/\(user)/\(device).json" : "/index.php/apps/gpoddersync/subscription_change/create"
        let response = try await send(try request("POST", path, body: body))
        // Nextcloud's answer may be empty.
        if response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D }) {
            return try JSONDecoder().decode(UploadAnswer.self, from: Data("{}".utf8))
        }
        return try decode(UploadAnswer.self, response)
    }

    /// The episode actions since a server time (everything when nil), of every device of the user.
    func actions(since: Int64?) async throws -> ActionsAnswer {
        let path =
            account.kind == .mygpo ? "/api/2/episodes/\(user).json" : "/index.php/apps/gpoddersync/episode_action"
        var query = [("since", String(since ?? 0))]
        if account.kind == .mygpo { query.append(("aggregated", "false")) }
        return try decode(ActionsAnswer.self, try await send(try request("GET", path, query: query)))
    }

    /// Sends episode actions; the server's time.
    func upload(actions: [EpisodeAction]) async throws -> UploadAnswer {
        let path =
            account.kind == .mygpo
            ? "/api/2/episodes/\(user).json" : "/index.php/apps/gpoddersync/episode_action/create"
        let response = try await send(try request("POST", path, body: GPodderClient.json(actions)))
        return try decode(UploadAnswer.self, response)
    }
}
