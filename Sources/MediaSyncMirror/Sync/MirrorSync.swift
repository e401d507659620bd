import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// Mirrors the selected Jellyfin items into the root: expands selections, plans (pure), then executes.
///
/// The executor here is the only code that writes, renames or deletes in the mirror. Downloads go through
/// the transfer engine (staging, resume, atomic placement); metadata is written after the media it lists.
public final class MirrorSync: Sendable {
    /// The free space kept beyond the plan's total size (100 MB), so a sync never fills the disk to its last byte.
    public static let spaceFloor: Int64 = 100_000_000

    let root: MirrorRoot
    let index: MirrorIndex
    let server: (any MediaServer)?
    let client: HTTPClient
    let transferOptions: TransferOptions
    let now: @Sendable () -> Date
    let feedCredentials: FeedCredentialStore?
    let listingPageSize: Int
    /// Makes every change to the mirror.
    let executor: MirrorExecutor

    /// - Parameters:
    ///   - server: the Jellyfin server, or nil when not signed in (only podcasts are then synced).
    ///   - client: the HTTP client for feeds and downloads.
    ///   - feedCredentials: the private feeds' credentials (see ``FeedCredentialStore``).
    ///   - listingPageSize: items per page of a whole-library listing.
    public init(
        root: MirrorRoot, index: MirrorIndex, server: (any MediaServer)?, client: HTTPClient = HTTPClient(),
        transferOptions: TransferOptions = TransferOptions(), now: @escaping @Sendable () -> Date = { Date() },
        feedCredentials: FeedCredentialStore? = nil, listingPageSize: Int = SelectionExpander.libraryPageSize,
        executor: MirrorExecutor? = nil
    ) {
        self.feedCredentials = feedCredentials
        self.listingPageSize = listingPageSize
        self.root = root
        self.index = index
        self.server = server
        self.client = client
        var options = transferOptions
        options.stagingDirectory = root.stagingDirectory
        self.transferOptions = options
        self.now = now
        self.executor = executor ?? MirrorExecutor(root: root, index: index, durable: options.durable)
    }

    /// Which part of the mirror a file belongs to.
    public enum Scope: String, Sendable, CaseIterable {
        /// Jellyfin selections.
        case media
        /// Podcast subscriptions.
        case podcasts

        static func of(key: FileKey) -> Scope {
            key.isPodcast ? .podcasts : .media
        }
    }

    /// One listed source: the files it wants and how to compose its metadata from the index afterwards.
    struct Source {
        var files: [RemoteFile]
        var metadata: ([IndexEntry]) -> [MetadataComposer.Composed]
        /// What the Jellyfin selections expanded to (nil for podcasts).
        var items: MirrorItems? = nil
        /// Podcast episodes whose files played cleanup lets go, or keeps for now.
        var released: Set<String> = []
        var keptPlayed: Set<String> = []
        /// The podcasts' feed state as fetched now (stored by the executor once the plan is made).
        var feedUpdates: [PodcastSource.FeedUpdate] = []
        /// The Jellyfin answers the listing read, for the next sync's listing memo.
        var log: ListingLog? = nil
        /// The Jellyfin side found where the last complete sync left it: how many files it wants (see
        /// ``ListingMemo``).
        var unchanged: Int? = nil
    }

    /// Runs one sync.
    /// - Parameters:
    ///   - options: `delete` removes files nothing wants any more.
    ///   - only: restricts the run to Jellyfin selections or podcasts.
    /// - Throws: ``SyncError`` (not signed in when only media was asked for, not enough space, unsafe paths).
    ///   Failures of single files and of single sources do not throw: they are in the report.
    ///   - progress: the batch's aggregate download progress.
    ///   - events: one call per file fetched, written, moved, deleted or failed, as it happens.
    /// ``run(options:only:progress:events:)`` calls it and keeps `.mediasync/sync-progress.json` (``SyncProgressFile``).
    ///
    /// Each step is one call; the index's records are read while the listings are on their way (``HeldRead``).
    func runUnrecorded(
        options: SyncOptions, only: Scope?, progress: (@Sendable (BatchProgress) -> Void)?,
        events: (@Sendable (SyncEvent) -> Void)?
    ) async throws -> SyncReport {
        var report = SyncReport()
        report.phases.start()
        try root.prepare()
        defer { try? executor.flush() }
        let preparation = try prepare(dryRun: options.dryRun, report: &report)
        let held = HeldRead(index: index, preparation: preparation, placer: executor.files, only: only)
        report.phases.end("prepare")
        var listing = try await list(
            only: only, options: options, preparation: preparation, held: held, report: &report)
        var remoteFiles: [RemoteFile]
        let mediaWanted: Int
        (remoteFiles, mediaWanted) = try wantedFiles(&listing)
        let records = try await held.records()
        report.phases.end("held")
        var planned = plan(
            remoteFiles, held: records, listing: listing, preparation: preparation, options: options, report: &report)
        await confirmDeletions(&planned, of: remoteFiles, listing: listing, options: options, report: &report)
        applyBudget(&planned, listing: listing, options: options, report: &report)
        let keptPaths = planned.keptPaths
        report.phases.end("plan")
        if options.dryRun {
            report = dryRunReport(
                plan: planned.plan, options: options, sources: Array(listing.sources.values), entries: planned.entries,
                placer: executor.files, keptPaths: keptPaths, report: report)
            report.unchanged = listing.memoUnchanged + remoteFiles.count - planned.plan.changingWantedFiles
            report.nothingToSync = try nothingToSync(only)
            return report
        }
        let saving = try await ready(&planned.plan, listing: listing, report: &report)
        // Room for the journal's lines while files are placed, given back at the end of the run.
        executor.keepJournalRoom()
        defer { executor.releaseJournalRoom() }
        try await saving.waitedForOnFailure {
            try await carryOut(
                planned.plan, listing: listing, options: options, progress: progress, events: events, report: &report)
        }
        try await saving.finished()
        report.phases.end("downloads")
        // The wanted files are needed past here only for their count: freed while the metadata is composed.
        let wantedCount = listing.memoUnchanged + remoteFiles.count
        LateRelease.hand(remoteFiles)
        remoteFiles = []
        let metadata = try writeMetadata(
            after: planned.plan, entries: planned.entries, podcasts: held.podcastsScope, sources: listing.sources,
            keptPaths: keptPaths, options: options, events: events, report: &report)
        report.phases.end("metadata")
        // Deletions and leftovers, from both phases.
        let actions = planned.plan.actions + metadata.plan.actions
        try deleteLeftovers(actions, options: options, released: planned.released, events: events, report: &report)
        report.unchanged = wantedCount - planned.plan.changingWantedFiles
        report.phases.end("deletions")
        try await finish(only: only, listing: listing, actions: actions, mediaWanted: mediaWanted, report: &report)
        // What lives to here (the rest went after its last use, and handing it here would keep it until now).
        LateRelease.hand(listing, planned, metadata, held)
        return report
    }
}

extension MirrorSync {
    /// What this mirror lacks for a run over `scope` to have anything to do, read once the run has listed (the
    /// podcast account may have subscribed to feeds during it).
    func nothingToSync(_ scope: Scope?) throws -> [SyncReport.Missing] {
        SyncReport.missing(
            signedIn: server != nil, selections: try index.selections().count,
            podcasts: try index.subscriptions().count, scope: scope)
    }
}

extension SyncPlan {
    /// How many of the plan's actions fetch, write or move a file the remote side wants.
    var changingWantedFiles: Int { actions.filter(\.changesAWantedFile).count }
}

extension SyncAction {
    /// Whether the action fetches, writes or moves a file the remote side wants.
    var changesAWantedFile: Bool {
        switch self {
        case .download, .write, .move, .adopt: return true
        case .delete, .keepExtraneous, .keepUnconfirmed, .keepPlayed: return false
        }
    }
}
