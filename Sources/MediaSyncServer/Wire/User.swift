import MediaSyncCore

/// A user account (`UserDto`), from `/Users`, `/Users/Me` or an ``AuthenticationResult``.
public struct User: Codable, Hashable, Sendable {
    /// The object as the server sent it.
    public let raw: JSONValue
    /// `Id`. Never empty.
    public let id: String

    /// Decodes any JSON object with a non-empty string `Id`.
    /// - Throws: `DecodingError` when the value is not an object or has no `Id`.
    public init(from decoder: Decoder) throws {
        let value = try WireObject.decode(from: decoder, requiring: ["Id"])
        raw = value
        id = value["Id"]?.stringValue ?? ""
    }

    /// Encodes ``raw`` unchanged.
    public func encode(to encoder: Encoder) throws {
        try raw.encode(to: encoder)
    }

    /// `Name`: the login name.
    public var name: String? { raw["Name"]?.stringValue }
    /// `ServerId`.
    public var serverId: String? { raw["ServerId"]?.stringValue }
    /// `HasPassword`.
    public var hasPassword: Bool? { raw["HasPassword"]?.boolValue }
    /// `Policy`, when sent.
    public var policy: UserPolicy? { raw["Policy"].flatMap(UserPolicy.init) }
}
