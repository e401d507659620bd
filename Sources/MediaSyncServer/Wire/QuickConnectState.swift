import MediaSyncJSON

/// A Quick Connect request (`QuickConnectResult`): the code to show and whether it was approved.
///
/// Its `description` never shows the secret.
public struct QuickConnectState: Decodable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The object as the server sent it.
    public let raw: JSONValue
    /// `Secret`: identifies the request when polling and signing in. Keep it secret.
    public let secret: String

    /// Decodes any JSON object with a non-empty `Secret`.
    /// - Throws: `DecodingError` when the value is not an object or has no `Secret`.
    public init(from decoder: Decoder) throws {
        let value = try WireObject.decode(from: decoder, requiring: ["Secret"])
        raw = value
        secret = value["Secret"]?.stringValue ?? ""
    }

    /// `Code`: the short code the user enters in another signed-in client.
    public var code: String? { raw["Code"]?.stringValue }
    /// `Authenticated`: whether a signed-in user approved the code.
    public var authenticated: Bool { raw["Authenticated"]?.boolValue ?? false }
    /// `DeviceId`.
    public var deviceId: String? { raw["DeviceId"]?.stringValue }
    /// `DeviceName`.
    public var deviceName: String? { raw["DeviceName"]?.stringValue }
    /// `AppName`.
    public var appName: String? { raw["AppName"]?.stringValue }
    /// `AppVersion`.
    public var appVersion: String? { raw["AppVersion"]?.stringValue }
    /// `DateAdded` as sent.
    public var dateAdded: String? { raw["DateAdded"]?.stringValue }

    /// The code and state, without the secret.
    public var description: String {
        "QuickConnectState(code: \(code ?? "?"), authenticated: \(authenticated), secret: <hidden>)"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["code": code ?? "", "authenticated": authenticated])
    }
}
