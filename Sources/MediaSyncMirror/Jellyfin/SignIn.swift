import Foundation
import MediaSyncHTTP
import MediaSyncServer

/// `mediasync login`: signs in to a Jellyfin server with a password, an administrator's API key or Quick Connect,
/// and stores the credentials (mode 0600) in the configuration folder. The password is never stored.
public struct SignIn: Sendable {
    let config: ConfigDirectory
    let anonymous: JellyfinClient
    let caFile: String?
    let insecure: Bool
    /// The server's name and version, from `/System/Info/Public`.
    public let serverName: String?
    public let serverVersion: String?
    let serverId: String?

    /// Reaches the server (its public system information) before any credential is sent.
    public static func connect(server: String, config: ConfigDirectory, caFile: String?, insecure: Bool) async throws
        -> SignIn
    {
        let http = HTTPClient(configuration: HTTPClientConfiguration(caFile: caFile, insecure: insecure))
        let anonymous = try JellyfinClient(
            serverURL: server, identity: try Session.identity(config: config), http: http)
        let info = try await anonymous.publicSystemInfo()
        return SignIn(
            config: config, anonymous: anonymous, caFile: caFile, insecure: insecure, serverName: info.serverName,
            serverVersion: info.version, serverId: info.id)
    }

    /// The server's address as stored (normalised).
    public var serverURL: String { anonymous.serverURL }

    /// Signs in with an administrator's API key, browsing as `userName` (or the key's first administrator).
    public func withAPIKey(_ key: String, userName: String?) async throws -> Credentials {
        let user = try await anonymous.signedIn(accessToken: key, userId: nil).signInWithAPIKey(userName: userName)
        return try save(userId: user.id, userName: user.name, token: key, method: .apiKey, serverId: serverId)
    }

    /// Signs in with Quick Connect: `showCode` is called with the code to approve in a signed-in client.
    public func withQuickConnect(showCode: (String) -> Void) async throws -> Credentials {
        let result = try await anonymous.quickConnect(onCode: showCode)
        return try save(
            userId: result.user.id, userName: result.user.name, token: result.accessToken, method: .quickConnect,
            serverId: result.serverId ?? serverId)
    }

    /// Signs in with a user name and password.
    public func withPassword(username: String, password: String) async throws -> Credentials {
        let result = try await anonymous.authenticate(username: username, password: password)
        return try save(
            userId: result.user.id, userName: result.user.name ?? username, token: result.accessToken,
            method: .password, serverId: result.serverId ?? serverId)
    }

    /// Stores the sign-in: this server, its TLS settings, and the user and token the method gave.
    private func save(
        userId: String, userName: String?, token: String, method: Credentials.Method, serverId: String?
    ) throws -> Credentials {
        let credentials = Credentials(
            serverURL: anonymous.serverURL, serverId: serverId, serverName: serverName, userId: userId,
            userName: userName, accessToken: token, method: method, caFile: caFile, insecure: insecure ? true : nil)
        try credentials.save(to: config)
        return credentials
    }
}
