import MediaSyncJSON

/// What `/System/Info/Public` (anonymous) and `/System/Info` say about the server (`PublicSystemInfo`).
public struct PublicSystemInfo: RawWireObject {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// Decodes any JSON object (the client checks that `Id` and `Version` are present).
    /// - Throws: `DecodingError` when the value is not an object.
    public init(from decoder: Decoder) throws {
        raw = try WireObject.decode(from: decoder)
    }

    /// `ServerName`.
    public var serverName: String? { raw["ServerName"]?.stringValue }
    /// `Version`, such as `10.8.10`.
    public var version: String? { raw["Version"]?.stringValue }
    /// `Id`: the server id (the `ServerId` of its items).
    public var id: String? { raw["Id"]?.stringValue }
    /// `ProductName`: `Jellyfin Server`.
    public var productName: String? { raw["ProductName"]?.stringValue }
    /// `LocalAddress`: the server's own idea of its address (not used to connect).
    public var localAddress: String? { raw["LocalAddress"]?.stringValue }
    /// `OperatingSystem`.
    public var operatingSystem: String? { raw["OperatingSystem"]?.stringValue }
    /// `StartupWizardCompleted`: false on a server not yet set up.
    public var startupWizardCompleted: Bool? { raw["StartupWizardCompleted"]?.boolValue }
}
