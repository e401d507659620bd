/// What a sync did, for people (the CLI prints it) and scripts.
public struct SyncReport: Codable, Sendable, Equatable {
    /// One step a dry run would take.
    public struct PlannedAction: Codable, Sendable, Equatable {
        /// `download`, `write`, `move` or `delete`.
        public var action: String
        public var path: String
        /// Why: `new`, `changed`, `missing`, `damaged` (downloads and writes).
        public var reason: String?
        /// For a move: where the file is now.
        public var from: String?
        /// For a download: the size the server announces.
        public var bytes: Int64?
    }

    /// One file that could not be fetched or placed.
    public struct Failure: Codable, Sendable, Equatable {
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
    /// Selections whose item was deleted on the server, one line each (their files are left over).
    public var gone: [String] = []
    /// Items absent from the listings that the server did not confirm gone, one line each: their files are kept,
    /// even with `--delete` (a library scan during the sync, ties listed in another order).
    public var keptUnconfirmed: [String] = []
    /// Files already up to date.
    public var unchanged = 0
    /// Sources that could not be listed (a feed that failed, the server refusing the sign-in), one line each.
    /// Their files are neither fetched nor deleted in this run.
    public var sourceErrors: [String] = []
    /// Whether the Jellyfin part needs `mediasync login` again.
    public var needsSignIn = false
    /// Whether this was a dry run (then ``planned`` lists what it would have done, and nothing changed).
    public var dryRun = false
    /// What a dry run would do.
    public var planned: [PlannedAction] = []
    /// Why deletions were skipped (more than `--max-delete` would have gone).
    public var deletionAborted: String?
    /// Files the index had at a stale path and that were found where they should be (only the index changed).
    public var repaired: [String] = []
    /// Transcodes that broke off and were fetched again from the start (a server's transcode cannot be resumed),
    /// one line each.
    public var restarted: [String] = []
    /// Index rows whose absolute path (an older version's, another root's) was made relative to the root.
    public var pathsRepaired = 0
    /// Index rows with an absolute path that could not be placed under the root: forgotten, fetched again.
    public var pathsForgotten: [String] = []
    /// Downloads moved from Swiftfin's legacy layout into the current one, one line each.
    public var migrated: [String] = []
    /// Play-state changes made here that this sync sent to the server.
    public var playStateSent = 0
    /// What happened to play state that was not simply sent: conflicts (which side won), items gone, odd clocks.
    public var playState: [String] = []
    /// Downloads a storage budget held back, one line per item, most wanted first.
    public var waiting: [String] = []
    /// The bytes those downloads would take.
    public var waitingBytes: Int64 = 0
    /// The Jellyfin side was found where the last complete sync left it: the same questions got the same answers,
    /// nothing it depends on changed in the index, and every held file is in place. Nothing of it was listed,
    /// planned or composed again (its files count as unchanged).
    public var listingUnchanged = false
    /// How long each step of the run took, in order (see ``SyncPhases``).
    public var phases = SyncPhases()
    /// Selected series (or seasons) the server lists no episodes for, one line each: only their images are kept.
    public var empty: [String] = []
    /// What the run had nothing to sync from, when it had nothing at all (in the order to add them): a first run
    /// says what is missing rather than "up to date". Empty whenever there was something to sync.
    public var nothingToSync: [Missing] = []

    /// What a mirror needs before a sync has anything to do.
    public enum Missing: String, Codable, Sendable, Equatable {
        /// A Jellyfin sign-in (`mediasync login`).
        case signIn
        /// A selection (`mediasync select`).
        case selections
        /// A podcast subscription (`mediasync podcast add`).
        case podcasts
    }

    /// What is missing for a run that syncs `scope` (nil: both sides) to have something to do, or nothing when it
    /// has: a sign-in and a selection count for the Jellyfin side, a subscription for the podcasts'. A Jellyfin side
    /// with selections but no sign-in has something to do (it fails, and says to sign in).
    public static func missing(signedIn: Bool, selections: Int, podcasts: Int, scope: MirrorSync.Scope?) -> [Missing] {
        let media = scope != .podcasts
        let feeds = scope != .media
        if (media && selections > 0) || (feeds && podcasts > 0) { return [] }
        var missing: [Missing] = []
        if media {
            if !signedIn { missing.append(.signIn) }
            missing.append(.selections)
        }
        if feeds { missing.append(.podcasts) }
        return missing
    }

    public init() {}

    /// Whether an essential file failed: the run is then a partial failure.
    public var hasEssentialFailures: Bool {
        failed.contains { $0.essential } || !sourceErrors.isEmpty || deletionAborted != nil
    }

    /// Whether the run changed nothing.
    public var changedNothing: Bool {
        downloaded.isEmpty && written.isEmpty && moved.isEmpty && deleted.isEmpty && repaired.isEmpty
            && pathsRepaired == 0
            && pathsForgotten.isEmpty && migrated.isEmpty
    }
}

/// One thing a sync did, reported as it happens (for a line per finished item, or a log collector).
public struct SyncEvent: Sendable, Equatable {
    /// `downloaded`, `written`, `moved`, `deleted` or `failed`.
    public var action: String
    public var path: String
    /// Bytes downloaded, for `downloaded`.
    public var bytes: Int64?
    /// Why, for `failed`.
    public var message: String?
    /// For `failed`: whether the file was essential (media, metadata) rather than optional (images, subtitles).
    public var essential: Bool

    public init(action: String, path: String, bytes: Int64? = nil, message: String? = nil, essential: Bool = true) {
        self.action = action
        self.path = path
        self.bytes = bytes
        self.message = message
        self.essential = essential
    }
}

/// How long each step of a sync took: where the time of a slow sync goes, in `sync --json`.
///
/// The steps, in order: `prepare` (what a killed run left, repairs), `listing` (play state sent, the Jellyfin
/// listings and the files they want), `feeds` (what was left to wait for the podcast feeds, fetched while the listings came), `held` (what was left to wait for the index's
/// records and the held files' sizes, read while the listings came), `plan`, `downloads` (moves, then every
/// download), `metadata` (each `metadata.json` composed, and written where it changed) and `deletions`. A step the
/// run does not take is left out.
public struct SyncPhases: Codable, Sendable, Equatable {
    public struct Phase: Codable, Sendable, Equatable {
        public var name: String
        /// Wall-clock seconds, to the millisecond.
        public var seconds: Double
    }

    public private(set) var steps: [Phase] = []
    private var last: ContinuousClock.Instant?

    public init() {}

    /// Ends the step `name`, begun where the last one ended (or where the first ``start()`` was).
    mutating func end(_ name: String) {
        let now = ContinuousClock.now
        let elapsed = last.map { now - $0 } ?? .zero
        let (seconds, attoseconds) = elapsed.components
        steps.append(
            Phase(name: name, seconds: ((Double(seconds) + Double(attoseconds) / 1e18) * 1000).rounded() / 1000))
        last = now
    }

    /// Where the first step begins.
    mutating func start() { last = ContinuousClock.now }

    /// Timings never make two reports different.
    public static func == (lhs: SyncPhases, rhs: SyncPhases) -> Bool { true }

    enum CodingKeys: String, CodingKey { case steps }
}
