import Foundation
import MediaSyncHTTP

/// The gPodder-compatible account podcasts are shared through (`mediasync podcast account`).
public struct PodcastAccount: Codable, Sendable, Equatable, CustomStringConvertible {
    /// Which API the server speaks.
    public enum Kind: String, Codable, Sendable {
        /// gpodder.net's API 2 (mygpo, and servers that copy it): devices and sync groups.
        case mygpo
        /// Nextcloud's gPodder Sync app: one list per user, no devices.
        case nextcloud
    }

    /// The server's base URL (scheme, host, port and any path prefix), without a trailing `/`.
    public var server: String
    public var kind: Kind
    public var username: String
    public var password: String
    /// This mirror's device id on a mygpo server.
    public var device: String
    /// The devices whose sync group this device joined (`--sync-with`).
    public var syncWith: [String]

    public init(server: String, kind: Kind, username: String, password: String, device: String, syncWith: [String]) {
        var server = server
        while server.hasSuffix("/") { server.removeLast() }
        self.server = server
        self.kind = kind
        self.username = username
        self.password = password
        self.device = device
        self.syncWith = syncWith
    }

    /// The account without its password.
    public var description: String { "\(kind.rawValue) account \(username) at \(server)" }

    var credentials: HTTPCredentials { HTTPCredentials(username: username, password: password) }

    /// The scheme, host and port of the server: the only place the credentials go.
    var origin: String? { PodcastAccount.origin(of: server) }

    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased()
        else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}

/// Where the account is kept: `podcast-account.json` in the configuration folder (mode 0600, folder 0700), like
/// the feeds' credentials. Its password is never printed, logged or written to the index.
public struct PodcastAccountStore: Sendable {
    public let config: ConfigDirectory

    public init(config: ConfigDirectory) {
        self.config = config
    }

    public var path: String { config.path + "/podcast-account.json" }

    /// The account, nil when none is linked.
    /// - Throws: ``SyncError`` when the file is damaged.
    public func load() throws -> PodcastAccount? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(PodcastAccount.self, from: data)
        } catch {
            throw SyncError.configuration(
                "\(path) is damaged; link the account again with `mediasync podcast account`")
        }
    }

    public func save(_ account: PodcastAccount) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try config.writePrivate(try encoder.encode(account), to: path)
    }

    /// Forgets the account; false when there was none.
    @discardableResult
    public func remove() -> Bool {
        (try? FileManager.default.removeItem(atPath: path)) != nil
    }
}
