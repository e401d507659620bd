/// What a sync did, for people (the CLI prints it) and scripts.
public struct SyncReport: Sendable, Equatable {
    /// One file that could not be fetched or placed.
    public struct Failure: Sendable, Equatable {
        public var path: String
        public var message: String
        /// Media and metadata are essential; images and subtitles are not (their failure is only reported).
        public var essential: Bool
    }

    public var downloaded: [String] = []
    public var bytesDownloaded: Int64 = 0
    public var written: [String] = []
    public var moved: [String] = []
    public var deleted: [String] = []
    /// Files nothing wants any more, kept because `--delete` was not given.
    public var extraneous: [String] = []
    public var failed: [Failure] = []
    /// Items refused (hostile ids and the like), one line each.
    public var rejected: [String] = []
    /// Files already up to date.
    public var unchanged = 0
    /// Sources that could not be listed (a feed that failed, the server refusing the sign-in), one line each.
    /// Their files are neither fetched nor deleted in this run.
    public var sourceErrors: [String] = []
    /// Whether the Jellyfin part needs `mediasync login` again.
    public var needsSignIn = false

    public init() {}

    /// Whether an essential file failed: the run is then a partial failure.
    public var hasEssentialFailures: Bool { failed.contains { $0.essential } || !sourceErrors.isEmpty }

    /// Whether the run changed nothing.
    public var changedNothing: Bool {
        downloaded.isEmpty && written.isEmpty && moved.isEmpty && deleted.isEmpty
    }
}
