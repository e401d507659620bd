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
    func runUnrecorded(
        options: SyncOptions, only: Scope?, progress: (@Sendable (BatchProgress) -> Void)?,
        events: (@Sendable (SyncEvent) -> Void)?
    ) async throws -> SyncReport {
        var report = SyncReport()
        report.phases.start()
        try root.prepare()
        defer { try? executor.flush() }
        // What a killed run left in staging and in the placed-files journal, stored absolute paths and Swiftfin's
        // legacy layout: surveyed first, changing nothing (see ``SyncPreparation``). The real run has the executor
        // make it all in one batch before anything is compared; a dry run takes it on the records it reads instead.
        let surveyed = try SyncPreparation.survey(executor)
        // What is left of it for the plan to take on the records it reads: nothing once the executor made it.
        let preparation: SyncPreparation
        if options.dryRun {
            preparation = surveyed
        } else {
            let prepared = try executor.prepare(surveyed)
            report.pathsRepaired = prepared.repair.repaired
            report.pathsForgotten = prepared.repair.forgotten
            report.migrated = prepared.migrated
            preparation = SyncPreparation()
        }
        // The index's records, and the sizes of the files they name, are read while the Jellyfin listings are on
        // their way: started once the listing has read what it needs of the index, which reads one thing at a time
        // (nothing from here to planning records, moves or removes a file). The records are taken as the preparation
        // leaves them (a dry run's, in memory). A run that throws before it plans lets the read finish and drops it.
        let index = self.index
        let placer = executor.files
        let held = Locked<Parallel.Pending<HeldRecords>?>(nil)
        // Which side's records are read: both, or the one this run syncs (the podcasts' alone when the Jellyfin side
        // was found unchanged).
        let heldScope = Locked<Bool?>(only.map { $0 == .podcasts })
        let readHeld: @Sendable () -> Void = {
            held.withLock { pending in
                guard pending == nil else { return }
                let podcasts = heldScope.withLock { $0 }
                pending = Parallel.start {
                    let (entries, movedSizes) = preparation.applied(
                        to: try index.entries(forPlanning: true, podcasts: podcasts))
                    // The paths only, by position: not a copy of each held file.
                    var paths: [String] = []
                    paths.reserveCapacity(entries.count)
                    for position in entries.indices where entries[position].file.kind != .metadata {
                        paths.append(entries[position].file.path)
                    }
                    var sizes = placer.sizes(of: paths)
                    // What the migration moves counts as held at its new place, so the plan downloads nothing the
                    // real run would not.
                    if !movedSizes.isEmpty { sizes.merge(movedSizes) { _, moved in moved } }
                    return HeldRecords(entries: entries, sizes: sizes)
                }
            }
        }
        report.phases.end("prepare")
        var sources: [Scope: Source] = [:]
        var memoUnchanged = 0
        // The feeds are fetched while the Jellyfin side is listed (each waits for its servers most of its time), into
        // a report of their own, merged after the Jellyfin side's lines.
        let dryRun = options.dryRun
        // What the Jellyfin side's outcome depends on besides the answers and the index, for its listing memo (none
        // while a dry run plans moves the preparation has not made).
        let memoKey = preparation.plannedLines.isEmpty ? memoInputs(options) : nil
        async let podcastListing = only == .media ? nil : podcastSourceReporting(dryRun: dryRun)
        if only != .podcasts {
            sources[.media] = try await mediaSource(
                only: only, dryRun: dryRun, memoInputs: memoKey, report: &report, whileListing: readHeld)
            // Found where the last complete sync left it: nothing of that side is read, planned or composed.
            if let unchanged = sources[.media]?.unchanged {
                memoUnchanged = unchanged
                report.listingUnchanged = true
                sources[.media] = nil
                heldScope.withLock { $0 = true }
            }
            report.phases.end("listing")
        }
        var accountExchanged = false
        var podcastRejected = 0
        if let listed = try await podcastListing {
            podcastRejected = listed.report.rejected.count
            sources[.podcasts] = listed.source
            accountExchanged = listed.accountExchanged
            report.rejected += listed.report.rejected
            report.sourceErrors += listed.report.sourceErrors
            report.playState += listed.report.playState
            report.phases.end("feeds")
        }
        // Phase 1: media, images, subtitles, episodes (less what `mediasync rm` excluded).
        let excluded = try index.exclusions()
        // Gathered into one array (each filtered copy of 32,000 files cost a retain and a release of every string in
        // them), and not sorted: the planner puts what it acts on in path order.
        var remoteFiles: [RemoteFile] = []
        remoteFiles.reserveCapacity(sources.values.reduce(0) { $0 + $1.files.count })
        var mediaWanted = 0
        for (scope, source) in sources {
            let before = remoteFiles.count
            if excluded.isEmpty {
                remoteFiles += source.files
            } else {
                remoteFiles += source.files.lazy.filter {
                    !excluded.contains($0.itemId) && !excluded.contains($0.versionId ?? "")
                }
            }
            if scope == .media { mediaWanted = remoteFiles.count - before }
        }
        // The media source's own list is not read again (a budget ranks podcasts by theirs): only one array of its
        // 32,000 files is kept.
        sources[.media]?.files = []
        readHeld()
        guard let pending = held.withLock({ $0 }) else { throw CancellationError() }
        let read = try await pending.value()
        report.phases.end("held")
        var entries = read.entries
        MirrorSync.keep(&entries, scopes: Set(sources.keys))
        // What the preparation not made yet moves (a dry run's: Swiftfin's legacy layout) is planned with the rest.
        report.planned += preparation.plannedLines
        // The held files themselves, not copies of their whole records.
        let heldFiles = MirrorSync.files(of: entries) { $0 != .metadata }
        let local = LocalSnapshot(
            files: heldFiles, onDisk: onDisk(heldFiles, wanted: remoteFiles, placer: placer, known: read.sizes))
        let mediaItems = sources[.media]?.items
        let released = (mediaItems?.released ?? []).union(sources[.podcasts]?.released ?? [])
        let keptPlayed = (mediaItems?.keptPlayed ?? []).union(sources[.podcasts]?.keptPlayed ?? [])
        func snapshot(unconfirmed: Set<String> = []) -> RemoteSnapshot {
            RemoteSnapshot(
                files: remoteFiles, unconfirmed: unconfirmed, released: released, keptPlayed: keptPlayed)
        }
        var plan = SyncPlanner.plan(remote: snapshot(), local: local, options: options)
        // A deletion is confirmed, never inferred from a listing alone: the items of the Jellyfin files the plan
        // would delete that no listing held are asked for by id; those the server did not confirm gone stay.
        if let items = sources[.media]?.items {
            let absent = SyncPlanner.absentItems(plan, listed: items.listed) { Scope.of(key: $0.key) == .media }
            if !absent.isEmpty {
                let unconfirmed = SyncPlanner.unconfirmed(absent: absent, answer: await confirm(absent, items: items))
                if !unconfirmed.isEmpty {
                    plan = SyncPlanner.plan(remote: snapshot(unconfirmed: unconfirmed), local: local, options: options)
                    report.keptUnconfirmed = MirrorSync.unconfirmedLines(plan)
                }
            }
        }
        let keptPaths = plan.actions.compactMap { action -> String? in
            switch action {
            case .keepUnconfirmed(let file), .keepPlayed(let file): return file.path
            default: return nil
            }
        }
        // A storage budget: only what fits beside what is held, most wanted first; the rest waits.
        if let budget = options.budget {
            let ranks = rankings(sources)
            let limited = SyncPlanner.applyBudget(
                plan, budget: budget, local: local, unit: MirrorSync.budgetUnit, rank: { ranks[$0] })
            plan = limited.plan
            report.waitingBytes = limited.waiting.reduce(0) { $0 + max(0, $1.plannedSize ?? 0) }
            report.waiting = MirrorSync.waitingLines(limited.waiting, budget: budget)
        }
        report.phases.end("plan")
        if options.dryRun {
            var report = dryRunReport(
                plan: plan, options: options, sources: Array(sources.values), entries: entries, placer: placer,
                keptPaths: keptPaths, report: report)
            report.unchanged = memoUnchanged + remoteFiles.count - plan.actions.filter(\.changesAWantedFile).count
            report.nothingToSync = try nothingToSync(only)
            return report
        }
        // What the listings learned, for the next sync to start from: the dry run above stopped before this.
        try executor.saveListingState(
            feeds: sources[.podcasts]?.feedUpdates ?? [],
            mediaSources: sources[.media]?.items?.mediaSourceUpdates ?? [:])
        // A user without the download permission: one clear line up front, not one 403 per file
        // (`Policy.EnableContentDownloading`; the server checks it before it looks the item up).
        if let server, plan.downloads.contains(where: { $0.kind == .media && Scope.of(key: $0.key) == .media }),
            await server.userMayDownload() == false
        {
            plan.actions.removeAll {
                if case .download(let file, _) = $0 { return Scope.of(key: file.key) == .media }
                return false
            }
            report.sourceErrors.append(DownloadRefusal.policyLine)
        }
        try checkSpace(for: plan)
        // Room for the journal's lines while files are placed, given back at the end of the run.
        executor.keepJournalRoom()
        defer { executor.releaseJournalRoom() }
        let entriesByKey = try MirrorSync.records(index, actedOnBy: plan)
        try execute(moves: plan, entries: entriesByKey, events: events, report: &report)
        try await download(
            plan, placer: placer, entries: entriesByKey, qualities: sources[.media]?.items?.qualities ?? [:],
            transcodes: options.transcodes, progress: progress, events: events, report: &report)
        try executor.flush()
        report.phases.end("downloads")
        // The wanted files are not needed past here but for their count: freed while the metadata is composed (which
        // can then take their room), not kept to the end.
        let wantedCount = memoUnchanged + remoteFiles.count
        LateRelease.hand(remoteFiles)
        remoteFiles = []

        // Phase 2: metadata, from what is now on disk.
        let metadata = try writeMetadata(
            after: plan, entries: entries, podcasts: heldScope.withLock { $0 }, sources: sources, keptPaths: keptPaths,
            options: options,
            events: events,
            report: &report)
        report.phases.end("metadata")
        // Deletions and leftovers, from both phases.
        try deleteLeftovers(
            plan.actions + metadata.plan.actions, options: options, released: released, events: events,
            report: &report)
        report.unchanged = wantedCount - plan.actions.filter(\.changesAWantedFile).count
        report.phases.end("deletions")
        // The episodes this run downloaded or deleted, announced to the podcast account now rather than next time.
        if accountExchanged, let config = feedCredentials?.config {
            await PodcastAccountSync.run(
                config: config, index: index, root: root, http: client, credentials: feedCredentials, now: now,
                pull: false,
                report: &report)
        }
        // What this run asked and was answered, for the next one to compare with: kept only when the Jellyfin side
        // ended where its plan meant it to (anything left to do, fail, wait or decide makes the next run list again).
        if let log = sources[.media]?.log, log.isRegular, let inputs = memoKey,
            MirrorSync.jellyfinSideEndedComplete(
                report, actions: plan.actions + metadata.plan.actions, podcastRejected: podcastRejected)
        {
            try executor.saveListingMemo(ListingMemo(inputs: inputs, exchanges: log.exchanges, wanted: mediaWanted))
        }
        report.nothingToSync = try nothingToSync(only)
        // What lives to here (the rest went after its last use, and handing it here would keep it until now).
        LateRelease.hand(sources, entries, plan, metadata, held)
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

extension SyncAction {
    /// Whether the action fetches, writes or moves a file the remote side wants.
    var changesAWantedFile: Bool {
        switch self {
        case .download, .write, .move, .adopt: return true
        case .delete, .keepExtraneous, .keepUnconfirmed, .keepPlayed: return false
        }
    }
}
