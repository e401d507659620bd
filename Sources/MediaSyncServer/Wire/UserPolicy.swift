import MediaSyncJSON

/// What a user may do (`UserPolicy`), as far as mirroring is concerned.
public struct UserPolicy: JSONObjectWrapper {
    /// The object as the server sent it.
    public let raw: JSONValue

    /// Wraps an object as received (see ``JSONObjectWrapper``).
    public init(unchecked raw: JSONValue) {
        self.raw = raw
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
