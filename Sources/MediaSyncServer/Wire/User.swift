import MediaSyncJSON

/// A user account (`UserDto`), from `/Users`, `/Users/Me` or an ``AuthenticationResult``.
public struct User: IdentifiedWireObject {
    /// The object as the server sent it.
    public let raw: JSONValue
    /// `Id`. Never empty.
    public let id: String

    public init(unchecked raw: JSONValue, id: String) {
        self.raw = raw
        self.id = id
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
