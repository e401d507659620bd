import MediaSyncCore

/// What a user may do (`UserPolicy`), as far as mirroring is concerned.
public struct UserPolicy: Codable, Hashable, Sendable {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// Wraps a `Policy` object; nil when `raw` is not an object.
    public init?(_ raw: JSONValue) {
        guard raw.objectValue != nil else { return nil }
        self.raw = raw
    }

    /// Decodes any JSON object.
    /// - Throws: `DecodingError` when the value is not an object.
    public init(from decoder: Decoder) throws {
        raw = try WireObject.decode(from: decoder)
    }

    /// Encodes ``raw`` unchanged.
    public func encode(to encoder: Encoder) throws {
        try raw.encode(to: encoder)
    }

    /// `IsAdministrator`.
    public var isAdministrator: Bool? { raw["IsAdministrator"]?.boolValue }
    /// `IsDisabled`.
    public var isDisabled: Bool? { raw["IsDisabled"]?.boolValue }
    /// `IsHidden`.
    public var isHidden: Bool? { raw["IsHidden"]?.boolValue }
    /// `EnableContentDownloading`: without it `/Items/{id}/Download` answers 403.
    public var enableContentDownloading: Bool? { raw["EnableContentDownloading"]?.boolValue }
    /// `EnableMediaPlayback`.
    public var enableMediaPlayback: Bool? { raw["EnableMediaPlayback"]?.boolValue }
}
