import Crypto
import Foundation
import MediaSyncJSON
import MediaSyncMirror
import Synchronization

/// The access tokens `serve` gave out, kept across restarts as Jellyfin keeps its devices' tokens, so a TV signed in
/// once stays signed in. Only a SHA-256 of each token is stored (`serve-tokens.json` in the configuration folder,
/// mode 0600): the file alone signs nobody in. A new password (`serve --set-password`) removes the file, so every
/// client signs in again; a client's `Sessions/Logout` removes its own token. The newest ``limit`` are kept.
final class ServeTokens: Sendable {
    static let fileName = "serve-tokens.json"
    /// How many signed-in clients are remembered (the oldest sign-in is forgotten first).
    static let limit = 256

    struct Entry: Sendable, Equatable {
        var digest: String
        var client: ClientAuthorization
        /// Seconds since 1970 of the sign-in.
        var issued: Int64
    }

    private let config: ConfigDirectory?
    private let entries: Mutex<[Entry]>

    /// Tokens read from `config` (none when it is nil: in memory only).
    init(config: ConfigDirectory?) {
        self.config = config
        entries = Mutex(config.map(ServeTokens.load) ?? [])
    }

    static func digest(_ token: String) -> String {
        ServeIds.hex(Array(SHA256.hash(data: Array(token.utf8))))
    }

    /// A new random token for `client`, remembered (and stored when a folder is given).
    func issue(for client: ClientAuthorization, now: Date = Date()) -> String {
        let token = ServeIds.random32()
        var stored = client
        stored.token = nil
        let entry = Entry(digest: Self.digest(token), client: stored, issued: Int64(now.timeIntervalSince1970))
        let snapshot = entries.withLock { entries -> [Entry] in
            // One token per device: a device signing in again replaces its old one, as Jellyfin's `Devices` table does.
            if let device = stored.deviceId, !device.isEmpty {
                entries.removeAll { $0.client.deviceId == device }
            }
            entries.append(entry)
            if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
            return entries
        }
        save(snapshot)
        return token
    }

    /// The client a token was given to, nil for an unknown one.
    func client(for token: String) -> ClientAuthorization? {
        let digest = Self.digest(token)
        return entries.withLock { entries in entries.last { $0.digest == digest }?.client }
    }

    /// Forgets `token` (`Sessions/Logout`).
    func revoke(_ token: String) {
        let digest = Self.digest(token)
        let snapshot = entries.withLock { entries -> [Entry]? in
            let before = entries.count
            entries.removeAll { $0.digest == digest }
            return entries.count == before ? nil : entries
        }
        if let snapshot { save(snapshot) }
    }

    /// Removes the stored tokens: every client signs in again.
    static func forgetAll(in config: ConfigDirectory) {
        unlink(config.path + "/" + fileName)
    }

    private func save(_ snapshot: [Entry]) {
        guard let config else { return }
        let list: [JSONValue] = snapshot.map { entry in
            var members = [
                JSONMember("sha256", .string(entry.digest)), JSONMember("issued", .number(Double(entry.issued))),
            ]
            let fields = [
                ("client", entry.client.client), ("device", entry.client.device), ("deviceId", entry.client.deviceId),
                ("version", entry.client.version),
            ]
            for (name, value) in fields {
                if let value { members.append(JSONMember(name, .string(value))) }
            }
            return .object(JSONObject(members))
        }
        // A token that cannot be stored still works until the server stops.
        try? config.writePrivate(
            Data(JSONWriter.compactBytes(.object([JSONMember("tokens", .array(list))])) + [10]),
            to: config.path + "/" + Self.fileName)
    }

    private static func load(_ config: ConfigDirectory) -> [Entry] {
        guard let data = FileManager.default.contents(atPath: config.path + "/" + fileName),
            let document = try? JSONValue(parsing: [UInt8](data))
        else { return [] }
        let list = document["tokens"]?.arrayValue ?? []
        return list.compactMap { value -> Entry? in
            guard let digest = value["sha256"]?.stringValue, digest.utf8.count == 64 else { return nil }
            let client = ClientAuthorization(
                client: value["client"]?.stringValue, device: value["device"]?.stringValue,
                deviceId: value["deviceId"]?.stringValue, version: value["version"]?.stringValue)
            return Entry(digest: digest, client: client, issued: value["issued"]?.intValue ?? 0)
        }.suffix(limit).map { $0 }
    }
}
