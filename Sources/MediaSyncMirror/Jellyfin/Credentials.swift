import Foundation

/// How mediasync signs in to the server: stored in the config folder (mode 0600), never printed or logged.
public struct Credentials: Codable, Equatable, Sendable {
    /// How the token was obtained.
    public enum Method: String, Codable, Sendable {
        case password, apiKey, quickConnect
    }

    public var serverURL: String
    public var serverId: String?
    public var serverName: String?
    public var userId: String
    public var userName: String?
    public var accessToken: String
    public var method: Method
    /// A PEM file of CA certificates to trust for this server (from `login --ca-file`).
    public var caFile: String?
    /// Whether TLS verification is off for this server (from `login --insecure`).
    public var insecure: Bool?

    public init(
        serverURL: String, serverId: String?, serverName: String?, userId: String, userName: String?,
        accessToken: String, method: Method, caFile: String? = nil, insecure: Bool? = nil
    ) {
        self.serverURL = serverURL
        self.serverId = serverId
        self.serverName = serverName
        self.userId = userId
        self.userName = userName
        self.accessToken = accessToken
        self.method = method
        self.caFile = caFile
        self.insecure = insecure
    }

    /// Loads the stored credentials; nil when there are none.
    public static func load(from config: ConfigDirectory) throws -> Credentials? {
        guard let data = FileManager.default.contents(atPath: config.credentialsPath) else { return nil }
        do {
            return try JSONDecoder().decode(Credentials.self, from: data)
        } catch {
            throw SyncError.configuration("\(config.credentialsPath) is damaged; sign in again with `mediasync login`")
        }
    }

    public func save(to config: ConfigDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try config.writePrivate(try encoder.encode(self), to: config.credentialsPath)
    }

    public static func remove(from config: ConfigDirectory) -> Bool {
        (try? FileManager.default.removeItem(atPath: config.credentialsPath)) != nil
    }
}

extension Credentials: CustomStringConvertible {
    /// Describes the sign-in without the token.
    public var description: String {
        "\(userName ?? userId) on \(serverName ?? serverURL) (\(method.rawValue))"
    }
}
