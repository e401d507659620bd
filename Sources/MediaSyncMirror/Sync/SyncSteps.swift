import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

/// The steps ``MirrorSync/runUnrecorded(options:only:progress:events:)`` is made of, in its order, and the one thing
/// that overlaps them: the index's records read while the listings are on their way (``HeldRead``).
extension MirrorSync {
    /// What a killed run left in staging and in the placed-files journal, stored absolute paths and Swiftfin's legacy
    /// layout: surveyed first, changing nothing (see ``SyncPreparation``). The real run has the executor make it all
    /// in one batch before anything is compared, and nothing of it is left for the plan; a dry run takes it on the
    /// records it reads instead.
    func prepare(dryRun: Bool, report: inout SyncReport) throws -> SyncPreparation {
        let surveyed = try SyncPreparation.survey(executor)
        if dryRun { return surveyed }
        let prepared = try executor.prepare(surveyed)
        report.pathsRepaired = prepared.repair.repaired
        report.pathsForgotten = prepared.repair.forgotten
        report.migrated = prepared.migrated
        return SyncPreparation()
    }

    /// The index's records and the sizes of the files they name, read on a thread of their own while the Jellyfin
    /// listings are on their way: started once the listing has read what it needs of the index (which reads one
    /// thing at a time; nothing from there to planning records, moves or removes a file), or when the plan asks for
    /// them. The records are taken as the preparation leaves them (a dry run's, in memory). A run that throws before
    /// it plans lets the read finish and drops it.
    final class HeldRead: Sendable {
        private let pending = Locked<Parallel.Pending<HeldRecords>?>(nil)
        /// Which side's records are read: both (nil), or the one this run syncs (`true`: the podcasts' alone, also
        /// when the Jellyfin side was found unchanged).
        private let scope: Locked<Bool?>
        private let index: MirrorIndex
        private let preparation: SyncPreparation
        private let placer: FilePlacer

        init(index: MirrorIndex, preparation: SyncPreparation, placer: FilePlacer, only: Scope?) {
            self.index = index
            self.preparation = preparation
            self.placer = placer
            self.scope = Locked(only.map { $0 == .podcasts })
        }

        /// Which side's records this run reads (see `MirrorIndex.entries(forPlanning:podcasts:)`).
        var podcastsScope: Bool? { scope.withLock { $0 } }

        /// Only the podcasts' records are wanted: the Jellyfin side was found where the last sync left it.
        func podcastsOnly() { scope.withLock { $0 = true } }

        /// Starts the read, unless it has started.
        func start() {
            pending.withLock { pending in
                guard pending == nil else { return }
                let podcasts = scope.withLock { $0 }
                let (index, preparation, placer) = (self.index, self.preparation, self.placer)
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

        /// The records, once read (started now if the listing did not start it).
        func records() async throws -> HeldRecords {
            start()
            guard let pending = pending.withLock({ $0 }) else { throw CancellationError() }
            return try await pending.value()
        }
    }

    /// What the listings found, and what the run's end needs of them.
    struct Listing {
        var sources: [Scope: Source] = [:]
        /// What the Jellyfin side's outcome depends on besides the answers and the index, for its listing memo (nil:
        /// no memo kept, as while a dry run plans moves the preparation has not made).
        var memoKey: String?
        /// How many files the Jellyfin side wants when it was found unchanged (it is then not read, planned or
        /// composed).
        var memoUnchanged = 0
        var accountExchanged = false
        var podcastRejected = 0
    }

    /// Lists the Jellyfin side and fetches the feeds at once (each waits for its servers most of its time), the feeds
    /// into a report of their own, merged after the Jellyfin side's lines.
    func list(
        only: Scope?, options: SyncOptions, preparation: SyncPreparation, held: HeldRead, report: inout SyncReport
    ) async throws -> Listing {
        var listing = Listing()
        let dryRun = options.dryRun
        listing.memoKey = preparation.plannedLines.isEmpty ? memoInputs(options) : nil
        async let podcastListing = only == .media ? nil : podcastSourceReporting(dryRun: dryRun)
        if only != .podcasts {
            listing.sources[.media] = try await mediaSource(
                only: only, dryRun: dryRun, memoInputs: listing.memoKey, report: &report,
                whileListing: { held.start() })
            if let unchanged = listing.sources[.media]?.unchanged {
                listing.memoUnchanged = unchanged
                report.listingUnchanged = true
                listing.sources[.media] = nil
                held.podcastsOnly()
            }
            report.phases.end("listing")
        }
        if let listed = try await podcastListing {
            listing.podcastRejected = listed.report.rejected.count
            listing.sources[.podcasts] = listed.source
            listing.accountExchanged = listed.accountExchanged
            report.rejected += listed.report.rejected
            report.sourceErrors += listed.report.sourceErrors
            report.playState += listed.report.playState
            report.phases.end("feeds")
        }
        return listing
    }

    /// Every file the sources want (less what `mediasync rm` excluded), and how many of them are the Jellyfin side's.
    ///
    /// Gathered into one array (each filtered copy of 32,000 files cost a retain and a release of every string in
    /// them), and not sorted: the planner puts what it acts on in path order. The media source's own list is emptied
    /// (a budget ranks podcasts by theirs): only one array of its files is kept.
    func wantedFiles(_ listing: inout Listing) throws -> (files: [RemoteFile], media: Int) {
        let excluded = try index.exclusions()
        var files: [RemoteFile] = []
        files.reserveCapacity(listing.sources.values.reduce(0) { $0 + $1.files.count })
        var media = 0
        for (scope, source) in listing.sources {
            let before = files.count
            if excluded.isEmpty {
                files += source.files
            } else {
                files += source.files.lazy.filter {
                    !excluded.contains($0.itemId) && !excluded.contains($0.versionId ?? "")
                }
            }
            if scope == .media { media = files.count - before }
        }
        listing.sources[.media]?.files = []
        return (files, media)
    }

    /// A plan and what it was made from.
    struct Planned {
        var plan: SyncPlan
        /// The records planning read.
        var entries: [IndexEntry]
        var local: LocalSnapshot
        /// Played items whose files played cleanup lets go, or keeps for now (see ``RemoteSnapshot``).
        var released: Set<String>
        var keptPlayed: Set<String>

        /// The files the plan keeps though nothing wants them as they are (unconfirmed deletions, played ones kept).
        var keptPaths: [String] {
            plan.actions.compactMap { action -> String? in
                switch action {
                case .keepUnconfirmed(let file), .keepPlayed(let file): return file.path
                default: return nil
                }
            }
        }
    }

    /// The pure planner's plan of the wanted files against the held records. What the preparation has not made yet
    /// (a dry run's: Swiftfin's legacy layout moved) is planned with the rest.
    func plan(
        _ remoteFiles: [RemoteFile], held: HeldRecords, listing: Listing, preparation: SyncPreparation,
        options: SyncOptions, report: inout SyncReport
    ) -> Planned {
        report.planned += preparation.plannedLines
        var entries = held.entries
        MirrorSync.keep(&entries, scopes: Set(listing.sources.keys))
        // The held files themselves, not copies of their whole records.
        let heldFiles = MirrorSync.files(of: entries) { $0 != .metadata }
        let local = LocalSnapshot(
            files: heldFiles,
            onDisk: onDisk(heldFiles, wanted: remoteFiles, placer: executor.files, known: held.sizes))
        let mediaItems = listing.sources[.media]?.items
        let podcasts = listing.sources[.podcasts]
        let released = (mediaItems?.released ?? []).union(podcasts?.released ?? [])
        let keptPlayed = (mediaItems?.keptPlayed ?? []).union(podcasts?.keptPlayed ?? [])
        let remote = RemoteSnapshot(files: remoteFiles, released: released, keptPlayed: keptPlayed)
        return Planned(
            plan: SyncPlanner.plan(remote: remote, local: local, options: options), entries: entries, local: local,
            released: released, keptPlayed: keptPlayed)
    }

    /// A deletion is confirmed, never inferred from a listing alone: the items of the Jellyfin files the plan would
    /// delete that no listing held are asked for by id; those the server did not confirm gone stay.
    func confirmDeletions(
        _ planned: inout Planned, of remoteFiles: [RemoteFile], listing: Listing, options: SyncOptions,
        report: inout SyncReport
    ) async {
        guard let items = listing.sources[.media]?.items else { return }
        let absent = SyncPlanner.absentItems(planned.plan, listed: items.listed) { Scope.of(key: $0.key) == .media }
        guard !absent.isEmpty else { return }
        let unconfirmed = SyncPlanner.unconfirmed(absent: absent, answer: await confirm(absent, items: items))
        guard !unconfirmed.isEmpty else { return }
        let remote = RemoteSnapshot(
            files: remoteFiles, unconfirmed: unconfirmed, released: planned.released, keptPlayed: planned.keptPlayed)
        planned.plan = SyncPlanner.plan(remote: remote, local: planned.local, options: options)
        report.keptUnconfirmed = MirrorSync.unconfirmedLines(planned.plan)
    }

    /// A storage budget: only what fits beside what is held, most wanted first; the rest waits.
    func applyBudget(_ planned: inout Planned, listing: Listing, options: SyncOptions, report: inout SyncReport) {
        guard let budget = options.budget else { return }
        let ranks = rankings(listing.sources)
        let limited = SyncPlanner.applyBudget(
            planned.plan, budget: budget, local: planned.local, unit: MirrorSync.budgetUnit, rank: { ranks[$0] })
        planned.plan = limited.plan
        report.waitingBytes = limited.waiting.reduce(0) { $0 + max(0, $1.plannedSize ?? 0) }
        report.waiting = MirrorSync.waitingLines(limited.waiting, budget: budget)
    }

    /// Before anything is fetched: what the listings learned saved for the next sync to start from (the feeds now;
    /// the media sources while the files download, see ``SavingAlongside``), a user without the download permission
    /// told in one line up front (not one 403 per file: `Policy.EnableContentDownloading`, which the server checks
    /// before it looks the item up), and the space checked.
    func ready(_ plan: inout SyncPlan, listing: Listing, report: inout SyncReport) async throws -> SavingAlongside {
        try executor.saveListingState(feeds: listing.sources[.podcasts]?.feedUpdates ?? [], mediaSources: [:])
        let saving = SavingAlongside(executor, mediaSources: listing.sources[.media]?.items?.mediaSourceUpdates ?? [:])
        try await saving.waitedForOnFailure {
            try await checkDownloadPolicy(&plan, report: &report)
            try checkSpace(for: plan)
        }
        return saving
    }

    private func checkDownloadPolicy(_ plan: inout SyncPlan, report: inout SyncReport) async throws {
        if let server, plan.downloads.contains(where: { $0.kind == .media && Scope.of(key: $0.key) == .media }),
            await server.userMayDownload() == false
        {
            plan.actions.removeAll {
                if case .download(let file, _) = $0 { return Scope.of(key: file.key) == .media }
                return false
            }
            report.sourceErrors.append(DownloadRefusal.policyLine)
        }
    }

    /// The plan's moves, then its downloads, each file recorded as it is placed.
    func carryOut(
        _ plan: SyncPlan, listing: Listing, options: SyncOptions, progress: (@Sendable (BatchProgress) -> Void)?,
        events: (@Sendable (SyncEvent) -> Void)?, report: inout SyncReport
    ) async throws {
        let entries = try MirrorSync.records(index, actedOnBy: plan)
        try execute(moves: plan, entries: entries, events: events, report: &report)
        try await download(
            plan, placer: executor.files, entries: entries,
            qualities: listing.sources[.media]?.items?.qualities ?? [:], transcodes: options.transcodes,
            progress: progress, events: events, report: &report)
        try executor.flush()
    }

    /// The run's end: the episodes it downloaded or deleted announced to the podcast account now rather than next
    /// time; what it asked and was answered kept for the next run to compare with, when the Jellyfin side ended
    /// where its plan meant it to (anything left to do, fail, wait or decide makes the next run list again); what
    /// the mirror lacks for a run to have anything to do.
    func finish(
        only: Scope?, listing: Listing, actions: [SyncAction], mediaWanted: Int, report: inout SyncReport
    ) async throws {
        if listing.accountExchanged, let config = feedCredentials?.config {
            await PodcastAccountSync.run(
                config: config, index: index, root: root, http: client, credentials: feedCredentials, now: now,
                pull: false, report: &report)
        }
        if let log = listing.sources[.media]?.log, log.isRegular, let inputs = listing.memoKey,
            MirrorSync.jellyfinSideEndedComplete(report, actions: actions, podcastRejected: listing.podcastRejected)
        {
            try executor.saveListingMemo(ListingMemo(inputs: inputs, exchanges: log.exchanges, wanted: mediaWanted))
        }
        report.nothingToSync = try nothingToSync(only)
    }
}

/// The media sources the listing learned, saved into the index on another thread while the files download: encoding
/// and storing a first sync's (one document per movie and episode) took a tenth of its time with both cores but one
/// idle, before the first request. Nothing during the downloads reads them; the run waits for the save before it
/// writes metadata, and a run that stops early waits for it too, so the index is never written once the run is over.
struct SavingAlongside: Sendable {
    private let task: Task<Void, any Error>?

    init(_ executor: MirrorExecutor, mediaSources: [String: MediaSourceCache.Entry]) {
        task =
            mediaSources.isEmpty
            ? nil : Task.detached { try executor.saveListingState(feeds: [], mediaSources: mediaSources) }
    }

    /// Waits for the save; throws its error.
    func finished() async throws {
        try await task?.value
    }

    /// Runs `body`; when it throws, waits for the save (whatever it ends with) before its error goes on.
    func waitedForOnFailure(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            try? await finished()
            throw error
        }
    }
}
