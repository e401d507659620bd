import MediaSyncJSON

/// The answer to a sign-in (`AuthenticationResult`): the user, the session and the access token.
///
/// Its `description` and `dump` never show the token.
public struct AuthenticationResult: Decodable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// `User`.
    public let user: User
    /// `AccessToken`: the credential for every later request. Keep it secret: never print or log it.
    public let accessToken: String
    /// `ServerId`.
    public let serverId: String?
    /// `SessionInfo`, as received (null when absent).
    public let sessionInfo: JSONValue

    /// Decodes `User`, `AccessToken`, `ServerId` and `SessionInfo`.
    /// - Throws: `DecodingError` when `User` or a non-empty `AccessToken` is missing.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: WireKey.self)
        user = try container.decode(User.self, forKey: WireKey("User"))
        let token = try container.decodeIfPresent(String.self, forKey: WireKey("AccessToken")) ?? ""
        guard !token.isEmpty else {
            throw DecodingError.keyNotFound(
                WireKey("AccessToken"),
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "missing AccessToken"))
        }
        accessToken = token
        serverId = (try? container.decodeIfPresent(String.self, forKey: WireKey("ServerId"))) ?? user.serverId
        sessionInfo = (try? container.decodeIfPresent(JSONValue.self, forKey: WireKey("SessionInfo"))) ?? .null
    }

    /// The user and server, without the token.
    public var description: String {
        "AuthenticationResult(user: \(user.name ?? user.id), userId: \(user.id), serverId: \(serverId ?? "?"), "
            + "token: <hidden>)"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the token.
    public var customMirror: Mirror {
        Mirror(self, children: ["userId": user.id, "userName": user.name ?? "", "serverId": serverId ?? ""])
    }
}
