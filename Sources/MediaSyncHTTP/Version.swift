/// The version of mediasync, used in the User-Agent and the auth header.
public enum MediaSyncVersion {
    /// The semantic version string.
    public static let string = "0.1.0"
}
