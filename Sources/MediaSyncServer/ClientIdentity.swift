import MediaSyncHTTP

/// How this client names itself in the `Authorization: MediaBrowser …` header.
///
/// The server ties sessions and tokens to the device id, so it must stay the same across runs.
public struct ClientIdentity: Sendable, Equatable, Hashable {
    /// The application name (`Client=`).
    public var client: String
    /// The machine's name as users see it in the server's device list (`Device=`).
    public var device: String
    /// A stable, unique id of this installation (`DeviceId=`).
    public var deviceId: String
    /// The application version (`Version=`).
    public var version: String

    /// Creates an identity.
    /// - Parameters:
    ///   - client: the application name, `mediasync` by default.
    ///   - device: the machine's name.
    ///   - deviceId: a stable id of this installation.
    ///   - version: the application version, ``MediaSyncVersion/string`` by default.
    public init(
        client: String = "mediasync", device: String, deviceId: String, version: String = MediaSyncVersion.string
    ) {
        self.client = client
        self.device = device
        self.deviceId = deviceId
        self.version = version
    }

    /// The value of the `Authorization` header: `MediaBrowser Client="…", Device="…", DeviceId="…",
    /// Version="…"`, plus `, Token="…"` when a token is given. Values are percent-encoded (RFC 3986
    /// unreserved characters are kept), as Jellyfin decodes them.
    public func authorizationValue(token: String?) -> String {
        var parts = [
            ("Client", client), ("Device", device), ("DeviceId", deviceId), ("Version", version),
        ]
        if let token, !token.isEmpty {
            parts.append(("Token", token))
        }
        return "MediaBrowser " + parts.map { "\($0.0)=\"\(PercentEncoding.encode($0.1))\"" }.joined(separator: ", ")
    }
}
