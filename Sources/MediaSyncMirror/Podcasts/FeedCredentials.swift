import Foundation
import MediaSyncHTTP

/// The credentials of private feeds, by podcast id, in `feed-credentials.json` in the config folder (mode 0600,
/// like the server's credentials). They are never written to the index, an OPML export, a log or an error line:
/// a `user:pass@` in a feed URL is moved here at `podcast add` and `podcast import`, and the URL kept without it.
public struct FeedCredentialStore: Sendable {
    public let config: ConfigDirectory

    public init(config: ConfigDirectory) {
        self.config = config
    }

    public var path: String { config.path + "/feed-credentials.json" }

    /// Every stored entry; empty when there is no file.
    /// - Throws: ``SyncError`` when the file is damaged.
    func all() throws -> [String: HTTPCredentials] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        do {
            return try JSONDecoder().decode([String: HTTPCredentials].self, from: data)
        } catch {
            throw SyncError.configuration(
                "\(path) is damaged; give the feeds' credentials again with `mediasync podcast add`")
        }
    }

    /// The credentials of a podcast, if any.
    public func credentials(podcastId: String) throws -> HTTPCredentials? {
        try all()[podcastId]
    }

    /// Stores (or replaces) a podcast's credentials.
    public func save(_ credentials: HTTPCredentials, podcastId: String) throws {
        var entries = try all()
        entries[podcastId] = credentials
        try write(entries)
    }

    /// Forgets a podcast's credentials.
    public func remove(podcastId: String) throws {
        var entries = try all()
        guard entries.removeValue(forKey: podcastId) != nil else { return }
        try write(entries)
    }

    private func write(_ entries: [String: HTTPCredentials]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try config.writePrivate(try encoder.encode(entries), to: path)
    }

    /// Splits the `user:pass@` of an http(s) URL off: the URL without it, and the credentials it held
    /// (percent-decoded; `nil` when the URL has no user name).
    public static func splitUserInfo(_ url: String) -> (url: String, credentials: HTTPCredentials?) {
        guard var components = URLComponents(string: url), let user = components.user, !user.isEmpty else {
            return (url, nil)
        }
        let credentials = HTTPCredentials(
            username: components.user ?? user, password: components.password ?? "")
        components.user = nil
        components.password = nil
        return (components.string ?? url, credentials)
    }
}
