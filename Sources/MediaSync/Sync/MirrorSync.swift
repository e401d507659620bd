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
    /// The free space kept beyond the plan's total size (seed 000: 100 MB).
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

    /// What became of one metadata file a sync writes.
    private enum WriteOutcome: Sendable {
        case written
        case failed(String)
        /// Not written because the disk is full: found so by this write, or by another one before it started.
        case notWritten
    }

    /// One listed source: the files it wants and how to compose its metadata from the index afterwards.
    private struct Source {
        var files: [RemoteFile]
        var metadata: ([IndexEntry]) -> [MetadataComposer.Composed]
        /// What the Jellyfin selections expanded to (nil for podcasts).
        var items: MirrorItems? = nil
        /// Podcast episodes whose files played cleanup lets go, or keeps for now.
        var released: Set<String> = []
        var keptPlayed: Set<String> = []
        /// The podcasts' feed state as fetched now (stored by the executor once the plan is made).
        var feedUpdates: [PodcastSource.FeedUpdate] = []
    }

    /// Runs one sync.
    /// - Parameters:
    ///   - options: `delete` removes files nothing wants any more.
    ///   - only: restricts the run to Jellyfin selections or podcasts.
    /// - Throws: ``SyncError`` (not signed in when only media was asked for, not enough space, unsafe paths).
    ///   Failures of single files and of single sources do not throw: they are in the report.
    ///   - progress: the batch's aggregate download progress.
    ///   - events: one call per file fetched, written, moved, deleted or failed, as it happens.
    public func run(
        options: SyncOptions = SyncOptions(), only: Scope? = nil, progress: (@Sendable (BatchProgress) -> Void)? = nil,
        events: (@Sendable (SyncEvent) -> Void)? = nil
    ) async throws -> SyncReport {
        try root.prepare()
        var report = SyncReport()
        defer { try? executor.flush() }
        // What a killed run left in staging and in the placed-files journal, seed 001's stale paths and seed 000's
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
        let readHeld: @Sendable () -> Void = {
            held.withLock { pending in
                guard pending == nil else { return }
                pending = Parallel.start {
                    let (entries, movedSizes) = preparation.applied(to: try index.entries(forPlanning: true))
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
        var sources: [Scope: Source] = [:]
        var accountExchanged = false
        if only != .podcasts {
            sources[.media] = try await mediaSource(
                only: only, dryRun: options.dryRun, report: &report, whileListing: readHeld)
        }
        if only != .media {
            // The podcast account's exchange first, so the feeds it subscribes to are fetched in this run.
            if !options.dryRun, let config = feedCredentials?.config {
                accountExchanged = await PodcastAccountSync.run(
                    config: config, index: index, root: root, http: client, credentials: feedCredentials, now: now,
                    pull: true,
                    report: &report)
            }
            var source = PodcastSource(index: index, client: client, now: now)
            source.credentials = feedCredentials
            let (files, podcasts) = try await source.expand(report: &report)
            sources[.podcasts] = Source(
                files: files, metadata: { PodcastSource.metadataFiles(podcasts, entries: $0) },
                released: source.released, keptPlayed: source.keptPlayed, feedUpdates: source.feedUpdates)
        }
        func participating(_ entry: IndexEntry) -> Bool { sources[Scope.of(key: entry.file.key)] != nil }
        /// Leaves out the records of a scope this run does not sync (nothing to look at when it syncs them all).
        func keepParticipating(_ entries: inout [IndexEntry]) {
            guard sources.count < Scope.allCases.count else { return }
            entries.removeAll { !participating($0) }
        }

        // Phase 1: media, images, subtitles, episodes (less what `mediasync rm` excluded).
        let excluded = try index.exclusions()
        // Gathered into one array (each filtered copy of 32,000 files cost a retain and a release of every string in
        // them), and not sorted: the planner puts what it acts on in path order.
        var remoteFiles: [RemoteFile] = []
        remoteFiles.reserveCapacity(sources.values.reduce(0) { $0 + $1.files.count })
        for source in sources.values {
            if excluded.isEmpty {
                remoteFiles += source.files
            } else {
                remoteFiles += source.files.lazy.filter {
                    !excluded.contains($0.itemId) && !excluded.contains($0.versionId ?? "")
                }
            }
        }
        // The media source's own list is not read again (a budget ranks podcasts by theirs): only one array of its
        // 32,000 files is kept.
        sources[.media]?.files = []
        readHeld()
        guard let pending = held.withLock({ $0 }) else { throw CancellationError() }
        let read = try await pending.value()
        var entries = read.entries
        keepParticipating(&entries)
        // What the preparation not made yet moves (a dry run's: seed 000's legacy layout) is planned with the rest.
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
        if options.dryRun {
            var report = dryRunReport(
                plan: plan, options: options, sources: Array(sources.values), entries: entries, placer: placer,
                keptPaths: keptPaths, report: report)
            report.unchanged = remoteFiles.count - plan.actions.filter(\.changesAWantedFile).count
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
        // The wanted files are not needed past here but for their count: freed while the metadata is composed (which
        // can then take their room), not kept to the end.
        let wantedCount = remoteFiles.count
        LateRelease.hand(remoteFiles)
        remoteFiles = []

        // Phase 2: metadata, from what is now on disk.
        // Phase 1 recorded nothing when it planned nothing: the entries read before still hold.
        var updated = entries
        if plan.actions.contains(where: \.changesAWantedFile) {
            updated = try index.entries(forPlanning: true)
            keepParticipating(&updated)
        }
        // Files about to be deleted are not listed in the metadata written now (kept ones are: kept means usable).
        let goingAway = Set(
            plan.actions.compactMap { action -> FileKey? in
                if case .delete(let file) = action { return file.key } else { return nil }
            })
        if !goingAway.isEmpty { updated.removeAll { goingAway.contains($0.file.key) } }
        let heldMetadata = MirrorSync.files(of: updated) { $0 == .metadata }
        let composed = sources.values.flatMap { $0.metadata(updated) }
        let renderers = Dictionary(composed.map { ($0.file.key, $0.render) }, uniquingKeysWith: { first, _ in first })
        let metadataFiles = composed.map(\.file)
        let metadataPlan = SyncPlanner.plan(
            remote: RemoteSnapshot(files: metadataFiles, keptPaths: keptPaths),
            local: LocalSnapshot(
                files: heldMetadata, onDisk: onDisk(heldMetadata, wanted: metadataFiles, placer: placer)),
            options: options)
        let metadataByKey = try MirrorSync.records(index, actedOnBy: metadataPlan)
        try execute(moves: metadataPlan, entries: metadataByKey, events: events, report: &report)
        // Composed, signed and written on every core (each file is its own: the executor's records take their turn);
        // reported in the plan's order. A full disk stops the writes not started yet and is thrown.
        let writes = metadataPlan.actions.compactMap { action -> MetadataComposer.Composed? in
            guard case .write(let file, _) = action, let render = renderers[file.key] else { return nil }
            return MetadataComposer.Composed(file: file, render: render)
        }
        let diskFull = Locked<SyncError?>(nil)
        let outcomes = Parallel.map(writes) { write -> WriteOutcome in
            guard diskFull.withLock({ $0 == nil }) else { return .notWritten }
            let file = write.file
            do {
                let bytes = try write.render()
                var written = self.entry(
                    for: file, path: file.path, size: Int64(bytes.count), container: nil, previous: nil)
                written.contentHash = ContentHash.hex(of: bytes)
                try self.executor.write(bytes, as: written)
                events?(SyncEvent(action: "written", path: file.path))
                return .written
            } catch let error as SyncError where error.isDiskFull {
                diskFull.withLock { $0 = $0 ?? error }
                return .notWritten
            } catch {
                events?(SyncEvent(action: "failed", path: file.path, message: "\(error)"))
                return .failed("\(error)")
            }
        }
        if let error = diskFull.withLock({ $0 }) { throw error }
        for (write, outcome) in zip(writes, outcomes) {
            switch outcome {
            case .written: report.written.append(write.file.path)
            case .failed(let message):
                report.failed.append(SyncReport.Failure(path: write.file.path, message: message, essential: true))
            case .notWritten: break
            }
        }

        // Deletions and leftovers, from both phases, through the executor's one destructive gate: no deletion at all
        // without --delete, or when more than --max-delete would go.
        var deletions: [MirrorExecutor.Deletion] = []
        for action in plan.actions + metadataPlan.actions {
            switch action {
            case .delete(let file):
                deletions.append(
                    .init(path: file.path, key: file.key, playedCleanup: released.contains(file.playStateId)))
            case .keepExtraneous(let file): report.extraneous.append(file.path)
            default: break
            }
        }
        let outcome = try executor.delete(
            deletions, gate: .init(allowed: options.delete, maxCount: options.maxDelete),
            deleted: { events?(SyncEvent(action: "deleted", path: $0)) })
        if let refused = outcome.refused {
            if !refused.isEmpty { report.deletionAborted = refused }
            report.extraneous += deletions.map(\.path)
        }
        report.deleted += outcome.deleted
        for failure in outcome.failed {
            // Refused (a folder on the way leads out of the root) or failed: reported, kept in the index.
            report.failed.append(SyncReport.Failure(path: failure.path, message: failure.message, essential: true))
            events?(SyncEvent(action: "failed", path: failure.path, message: failure.message))
        }
        report.unchanged = wantedCount - plan.actions.filter(\.changesAWantedFile).count
        // The episodes this run downloaded or deleted, announced to the podcast account now rather than next time.
        if accountExchanged, let config = feedCredentials?.config {
            await PodcastAccountSync.run(
                config: config, index: index, root: root, http: client, credentials: feedCredentials, now: now,
                pull: false,
                report: &report)
        }
        // What lives to here (the rest went after its last use, and handing it here would keep it until now).
        LateRelease.hand(sources, entries, updated, plan, composed, renderers, metadataPlan, held)
        return report
    }

    /// What the run would do, without doing it. The metadata it would write is planned from the files held
    /// now (the real run writes it after the downloads).
    private func dryRunReport(
        plan: SyncPlan, options: SyncOptions, sources: [Source], entries: [IndexEntry], placer: FilePlacer,
        keptPaths: [String], report: SyncReport
    ) -> SyncReport {
        var report = report
        report.dryRun = true
        let heldMetadata = MirrorSync.files(of: entries) { $0 == .metadata }
        let metadataPlan = SyncPlanner.plan(
            remote: RemoteSnapshot(
                files: sources.flatMap { $0.metadata(entries).map(\.file) },
                keptPaths: keptPaths),
            local: LocalSnapshot(files: heldMetadata, onDisk: placer.sizes(of: heldMetadata.map(\.path))),
            options: options)
        for action in plan.actions + metadataPlan.actions {
            switch action {
            case .download(let file, let reason):
                report.planned.append(
                    .init(
                        action: "download", path: file.path, reason: reason.rawValue, from: nil, bytes: file.plannedSize
                    ))
            case .write(let file, let reason):
                report.planned.append(
                    .init(action: "write", path: file.path, reason: reason.rawValue, from: nil, bytes: nil))
            case .move(let from, let file):
                report.planned.append(.init(action: "move", path: file.path, reason: nil, from: from, bytes: nil))
            case .adopt(let file, let from):
                report.planned.append(.init(action: "repair", path: file.path, reason: nil, from: from, bytes: nil))
            case .delete(let file):
                report.planned.append(.init(action: "delete", path: file.path, reason: nil, from: nil, bytes: nil))
            case .keepExtraneous(let file):
                report.extraneous.append(file.path)
            case .keepUnconfirmed, .keepPlayed:
                break
            }
        }
        return report
    }

    /// What a budget counts as one: a Jellyfin item with its subtitles and images, a podcast episode with its
    /// extras.
    static func budgetUnit(_ file: RemoteFile) -> String {
        file.key.isPodcast ? "podcast:" + (file.versionId ?? file.itemId) : file.itemId
    }

    /// Where each unit stands for a budget: the Jellyfin selections in their order, then each podcast newest first.
    private func rankings(_ sources: [Scope: Source]) -> [String: BudgetRank] {
        var ranks = sources[.media]?.items?.ranks ?? [:]
        let base = (ranks.values.map(\.group).max() ?? -1) + 1
        var groups: [String: Int] = [:]
        for (order, file) in (sources[.podcasts]?.files ?? []).enumerated() where file.kind == .media {
            let group = groups[file.itemId] ?? base + groups.count
            groups[file.itemId] = group
            let unit = MirrorSync.budgetUnit(file)
            if ranks[unit] == nil { ranks[unit] = BudgetRank(group: group, order: order) }
        }
        return ranks
    }

    /// One line per unit a budget held back.
    static func waitingLines(_ files: [RemoteFile], budget: Int64) -> [String] {
        var order: [String] = []
        var bytes: [String: Int64] = [:]
        var paths: [String: String] = [:]
        for file in files {
            let unit = budgetUnit(file)
            if bytes[unit] == nil { order.append(unit) }
            bytes[unit, default: 0] += max(0, file.plannedSize ?? 0)
            if file.kind == .media || paths[unit] == nil { paths[unit] = file.path }
        }
        return order.map { unit in
            "\(paths[unit] ?? unit) (\(ByteCount.format(bytes[unit] ?? 0))) waits for space within the budget of "
                + ByteCount.format(budget)
        }
    }

    /// One line per item whose files are kept because the server did not confirm it gone.
    static func unconfirmedLines(_ plan: SyncPlan) -> [String] {
        var files: [String: Int] = [:]
        for action in plan.actions {
            if case .keepUnconfirmed(let file) = action { files[file.itemId, default: 0] += 1 }
        }
        return files.keys.sorted().map { id in
            let count = files[id] ?? 0
            return "item \(id): absent from the listing but not confirmed gone by the server; its \(count) "
                + (count == 1 ? "file is" : "files are") + " kept (the next sync decides)"
        }
    }

    /// Asks the server about the items absent from the listings: gone (not returned by id, or virtual), still
    /// there within a selection (its movie or series is selected, or it is below a selected library), or still
    /// there outside every selection (deselected). Nil when the question failed: then nothing is confirmed.
    private func confirm(_ absent: Set<String>, items: MirrorItems) async -> ConfirmationAnswer? {
        let tops = Set(items.selectedTops.map { $0.lowercased() })
        // Nothing selected that could hold them: every one of them was deselected or is gone.
        guard !tops.isEmpty || !items.libraries.isEmpty else {
            return ConfirmationAnswer(gone: [], outsideSelections: absent)
        }
        guard let server else { return nil }
        do {
            let asked = absent.sorted()
            let present = try await server.existingItems(ids: asked, below: nil).filter { !$0.isVirtual }
            let presentIds = Set(present.map { $0.id.lowercased() })
            let gone = Set(asked.filter { !presentIds.contains($0.lowercased()) })
            var outside = Set(
                present.filter {
                    !tops.contains(($0.seriesId ?? $0.id).lowercased()) && !tops.contains($0.id.lowercased())
                }
                .map { $0.id.lowercased() })
            for library in items.libraries where !outside.isEmpty {
                do {
                    let below = try await server.existingItems(ids: outside.sorted(), below: library)
                    outside.subtract(below.map { $0.id.lowercased() })
                } catch {
                    // A library that cannot be asked (no longer accessible, no longer there) may hold any of them:
                    // every item still on the server stays; those gone are still confirmed gone.
                    outside = []
                }
            }
            return ConfirmationAnswer(
                gone: gone, outsideSelections: Set(asked.filter { outside.contains($0.lowercased()) }))
        } catch {
            return nil
        }
    }

    /// Lists the Jellyfin side. A failure to list leaves the media scope out of this run (nothing of it is
    /// fetched or deleted), unless only media was asked for, in which case it is thrown.
    /// - Parameter whileListing: called once what the listing reads of the index is read, while the pages come.
    private func mediaSource(
        only: Scope?, dryRun: Bool, report: inout SyncReport, whileListing: @escaping @Sendable () -> Void
    ) async throws -> Source? {
        // Play state recorded here goes first (even with nothing selected any more), so the listings show it; what
        // could not be sent is applied over them (the next-unplayed window and the metadata see it all the same).
        // `push` reports the server's errors in its outcome; what it throws is the index's.
        if let server, !dryRun {
            let pushed = try await PlayStateSync(index: index, server: server, now: now()).push()
            report.playStateSent = pushed.sent
            report.playState += pushed.lines
            report.sourceErrors += pushed.failures.map { "Jellyfin: \($0)" }
        }
        let selections = try index.selections()
        guard !selections.isEmpty else {
            // Nothing selected: whatever the mirror holds is left over.
            return Source(files: [], metadata: { _ in [] }, items: MirrorItems())
        }
        guard let server else {
            if only == .media { throw SyncError.notSignedIn }
            report.sourceErrors.append("Jellyfin: \(SyncError.notSignedIn.description)")
            report.needsSignIn = true
            return nil
        }
        do {
            let pending = PlayStatePlanner.latestPending(try index.playEvents(state: .pending)).latest
            if dryRun, !pending.isEmpty {
                report.planned += pending.map {
                    .init(action: "send", path: "item \($0.itemId)", reason: $0.kind.rawValue, from: nil, bytes: nil)
                }
            }
            // The media-source cache is read and parsed while the first listing pages are on their way.
            let index = self.index
            let cache = Task.detached {
                let cache = try index.mediaSourceCache()
                // The index is free for the records to be read (it reads one thing at a time).
                whileListing()
                return cache
            }
            let items = try await SelectionExpander(
                server: server, pageSize: listingPageSize,
                pending: Dictionary(pending.map { ($0.itemId, $0) }, uniquingKeysWith: { _, last in last }), now: now(),
                loadingCache: cache
            ).expand(selections)
            report.rejected += items.rejected
            report.gone += items.gone
            report.sourceErrors += items.failed.map { "Jellyfin: \($0)" }
            let (files, rejected) = MirrorFiles.files(for: items, server: server)
            report.rejected += rejected
            let root = self.root
            return Source(
                files: files,
                metadata: { entries in
                    MetadataComposer.files(
                        for: items, entries: entries,
                        previous: { path in
                            guard let absolute = root.absolute(path),
                                let data = FileManager.default.contents(atPath: absolute)
                            else {
                                return nil
                            }
                            return try? JSONDecoder().decode(DownloadMetadata.self, from: data)
                        }, wholeSources: { index.wholeMediaSourceFields(itemId: $0) })
                }, items: items)
        } catch let error as JellyfinError {
            if only == .media { throw error }
            report.sourceErrors.append("Jellyfin: \(error.description)")
            report.needsSignIn = report.needsSignIn || error.kind == .authenticationNeeded
            return nil
        }
    }

    /// The whole index records of the files a plan downloads, writes, moves or adopts, by key: what they are recorded
    /// with again keeps what the record had (the records planning read leave some of it out).
    static func records(_ index: MirrorIndex, actedOnBy plan: SyncPlan) throws -> [FileKey: IndexEntry] {
        try index.entries(keys: Set(plan.actions.compactMap { $0.remoteFile?.key }))
    }

    /// The files of the records of some kinds, looked at by position (a filtered copy of the records copied every
    /// string of 32,000 records once more).
    static func files(of entries: [IndexEntry], kinds: (RemoteFile.Kind) -> Bool) -> [LocalFile] {
        var files: [LocalFile] = []
        files.reserveCapacity(entries.count)
        for position in entries.indices where kinds(entries[position].file.kind) {
            files.append(entries[position].file)
        }
        return files
    }

    /// The index's records and the sizes of the held files they name, read while the listings are on their way.
    private struct HeldRecords: Sendable {
        var entries: [IndexEntry]
        /// By the paths the records name (a dry run's legacy media at the place the migration moves them to).
        var sizes: [String: Int64]
    }

    /// The sizes of the held files, and for those not where the index says, of the place they should be.
    /// - Parameter known: the sizes of `files` read before, if they were.
    private func onDisk(
        _ files: [LocalFile], wanted: [RemoteFile], placer: FilePlacer, known: [String: Int64]? = nil
    ) -> [String: Int64] {
        var sizes = known ?? placer.sizes(of: files.map(\.path))
        let lost = Dictionary(
            files.lazy.filter { sizes[$0.path] == nil }.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        guard !lost.isEmpty else { return sizes }
        let candidates = wanted.compactMap { remote in
            lost[remote.key].flatMap { SyncPlanner.expectedPath(of: remote, heldAs: $0) }
        }
        sizes.merge(placer.sizes(of: candidates)) { first, _ in first }
        return sizes
    }

    private func checkSpace(for plan: SyncPlan) throws {
        let needed = plan.bytesToDownload
        guard needed > 0 else { return }
        var info = statvfs()
        guard statvfs(root.path, &info) == 0 else { return }
        let available = Int64(info.f_bavail) * Int64(info.f_frsize)
        guard available >= needed + MirrorSync.spaceFloor else {
            throw SyncError.notEnoughSpace(
                "not enough free space in \(root.path): the sync needs \(ByteCount.format(needed)) plus a "
                    + "\(ByteCount.format(MirrorSync.spaceFloor)) margin, and \(ByteCount.format(available)) is free")
        }
    }

    private func execute(
        moves plan: SyncPlan, entries: [FileKey: IndexEntry],
        events: (@Sendable (SyncEvent) -> Void)?,
        report: inout SyncReport
    ) throws {
        for action in plan.actions {
            if case .adopt(let file, let from) = action, let previous = entries[file.key],
                let found = SyncPlanner.expectedPath(of: file, heldAs: previous.file)
            {
                do {
                    try executor.record(
                        entry(
                            for: file, path: found, size: previous.file.size, container: previous.container,
                            previous: previous))
                    report.repaired.append(found)
                    events?(SyncEvent(action: "repaired", path: found, message: "the index had it at \(from)"))
                } catch {
                    report.failed.append(
                        SyncReport.Failure(path: file.path, message: "\(error)", essential: file.essential))
                }
                continue
            }
            guard case .move(let from, let file) = action else { continue }
            do {
                let previous = entries[file.key]
                try executor.move(
                    from,
                    as: entry(
                        for: file, path: file.path, size: previous?.file.size ?? 0, container: previous?.container,
                        previous: previous))
                report.moved.append(file.path)
                events?(SyncEvent(action: "moved", path: file.path, message: "from \(from)"))
            } catch {
                report.failed.append(
                    SyncReport.Failure(path: file.path, message: "\(error)", essential: file.essential))
                events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: file.essential))
            }
        }
    }

    /// Fetches the plan's downloads: first asks the server what it would send of each quality-capped version (the
    /// original when it already fits), then fetches the files in one batch, then the transcodes, `transcodes` at a
    /// time.
    private func download(
        _ plan: SyncPlan, placer: FilePlacer, entries: [FileKey: IndexEntry], qualities: [String: Quality],
        transcodes: Int, progress: (@Sendable (BatchProgress) -> Void)?, events: (@Sendable (SyncEvent) -> Void)?,
        report: inout SyncReport
    ) async throws {
        var files = plan.downloads
        var jobs: [(file: RemoteFile, quality: Quality, offer: TranscodeOffer)] = []
        if let server, !qualities.isEmpty {
            var mayTranscode: Bool??
            var kept: [RemoteFile] = []
            for file in files {
                guard file.kind == .media, Scope.of(key: file.key) == .media, let quality = qualities[file.itemId],
                    let versionId = file.versionId
                else {
                    kept.append(file)
                    continue
                }
                do {
                    let offer = try await TranscodeDownloader.offer(
                        server: server, file: file, quality: quality, versionId: versionId)
                    if offer.directPlay {
                        kept.append(file)
                        continue
                    }
                    if mayTranscode == nil { mayTranscode = .some(await server.userMayTranscode()) }
                    // The trap: without the permission 10.10/10.11 still offer a transcode whose stream copies the
                    // original video. Said once per item, nothing fetched.
                    if mayTranscode == .some(false) {
                        throw SyncError.invalidInput(
                            "this user may not have video transcoded (the server's "
                                + "Policy.EnableVideoPlaybackTranscoding is off): the server would send the original, "
                                + "not \(quality.description); nothing was placed")
                    }
                    jobs.append((file, quality, offer))
                } catch let error as SyncError where error.isDiskFull {
                    throw error
                } catch {
                    report.failed.append(SyncReport.Failure(path: file.path, message: "\(error)", essential: true))
                    events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: true))
                }
            }
            files = kept
        }
        try await downloadFiles(
            files, placer: placer, entries: entries, progress: progress, events: events, report: &report)
        guard let server, !jobs.isEmpty else { return }
        let downloader = TranscodeDownloader(
            server: server, client: client, options: transferOptions, root: root, executor: executor, now: now)
        var start = 0
        while start < jobs.count {
            let batch = Array(jobs[start..<min(jobs.count, start + max(1, transcodes))])
            start += batch.count
            let outcomes = await withTaskGroup(of: (Int, Result<TranscodeDownloader.Placed, any Error>).self) { group in
                for (position, job) in batch.enumerated() {
                    group.addTask {
                        do {
                            return (
                                position,
                                .success(
                                    try await downloader.fetch(
                                        job.file, quality: job.quality, offer: job.offer,
                                        previous: entries[job.file.key], progress: progress))
                            )
                        } catch {
                            return (position, .failure(error))
                        }
                    }
                }
                var results: [(Int, Result<TranscodeDownloader.Placed, any Error>)] = []
                for await result in group { results.append(result) }
                return results.sorted { $0.0 < $1.0 }
            }
            for (position, outcome) in outcomes {
                let file = batch[position].file
                switch outcome {
                case .success(let placed):
                    report.downloaded.append(placed.path)
                    report.bytesDownloaded += placed.bytes
                    events?(SyncEvent(action: "downloaded", path: placed.path, bytes: placed.bytes))
                case .failure(let error as SyncError) where error.isDiskFull:
                    throw error
                case .failure(let error):
                    report.failed.append(SyncReport.Failure(path: file.path, message: "\(error)", essential: true))
                    events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: true))
                }
            }
        }
    }

    private func downloadFiles(
        _ files: [RemoteFile], placer: FilePlacer, entries: [FileKey: IndexEntry],
        progress: (@Sendable (BatchProgress) -> Void)?,
        events: (@Sendable (SyncEvent) -> Void)?, report: inout SyncReport
    ) async throws {
        guard !files.isEmpty else { return }
        // The Jellyfin token goes with Jellyfin downloads only, never to a podcast's hosts.
        var serverHeaders = HTTPHeaders()
        if let auth = server?.authorizationHeader {
            serverHeaders.add(name: auth.name, value: auth.value)
        }
        var requests: [TransferRequest] = []
        var planned: [FileKey: RemoteFile] = [:]
        // Each folder is made once, before the batch, by the executor (a first sync makes thousands).
        let madeFolders = executor.makeFolders(for: files.map(\.path))
        for file in files {
            guard case .download(let url, let size) = file.content, let destination = root.absolute(file.path),
                placer.staysInside(file.path)
            else {
                report.failed.append(
                    SyncReport.Failure(
                        path: file.path, message: SyncError.unsafePath(file.path).description, essential: file.essential
                    ))
                continue
            }
            planned[file.key] = file
            let priority = file.kind == .media ? 2 : (file.kind == .subtitle ? 1 : 0)
            requests.append(
                TransferRequest(
                    id: file.key.rawValue, url: url, destination: destination,
                    headers: Scope.of(key: file.key) == .media ? serverHeaders : HTTPHeaders(), expectedSize: size,
                    priority: priority))
        }
        let engine = TransferEngine(client: client, options: transferOptions)
        // The engine hands each complete, verified file back; the executor names it (with the extension its
        // Content-Type calls for), then it is recorded in the index and reported: a run killed later in the batch
        // does not fetch it again.
        let plannedFiles = planned
        let executor = self.executor
        let placing: DownloadPlacing = { completed in
            guard let file = plannedFiles[FileKey(rawValue: completed.request.id)] else {
                throw SyncError.unsafePath(completed.request.destination)
            }
            return try executor.placeDownload(
                completed, at: MirrorSync.finalName(of: file, contentType: completed.contentType).path)
        }
        let placements = Locked<[FileKey: Result<String, any Error>]>([:])
        let onOutcome: @Sendable (TransferOutcome) -> Void = { outcome in
            guard let file = plannedFiles[FileKey(rawValue: outcome.request.id)] else { return }
            switch outcome.result {
            case .success(let success):
                let placed = Result { try self.record(file, success: success, previous: entries[file.key]) }
                placements.withLock { $0[file.key] = placed }
                switch placed {
                case .success(let path): events?(SyncEvent(action: "downloaded", path: path, bytes: success.size))
                case .failure(let error):
                    events?(
                        SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: file.essential))
                }
            case .failure(let error):
                // A full disk ends the run with one error (thrown below), not a line per file.
                guard !error.isFatal else { return }
                events?(
                    SyncEvent(action: "failed", path: file.path, message: error.description, essential: file.essential))
            }
        }
        let first = await engine.download(
            requests, progress: progress, placing: placing, madeFolders: madeFolders, finished: onOutcome)
        var result = Outcomes(outcomes: first.outcomes.map { Outcome(request: $0.request, result: $0.result) })
        // The served bytes are the truth: a Jellyfin media file whose complete body differs from MediaSource `Size`
        // (replaced on the server's disk before its next scan) is asked again with the size the server serves now,
        // once a one-byte probe shows media, not an error page. The engine discards the first body (its size check
        // is final), so such a file costs two transfers in this run, none in the next.
        var again: [TransferRequest] = []
        var refusals: [String: String] = [:]
        for outcome in result.outcomes where outcome.error?.kind == .sizeMismatch {
            guard let file = planned[FileKey(rawValue: outcome.request.id)], file.kind == .media,
                Scope.of(key: file.key) == .media
            else {
                continue
            }
            switch await servedSize(outcome.request) {
            case .success(let size):
                var request = outcome.request
                request.expectedSize = size
                again.append(request)
            case .failure(let error):
                refusals[outcome.request.id] = error.description
            }
        }
        if !again.isEmpty || !refusals.isEmpty {
            let second =
                again.isEmpty
                ? []
                : await engine.download(
                    again, placing: placing, madeFolders: madeFolders, finished: onOutcome
                ).outcomes
            let replaced = Dictionary(
                second.map { ($0.request.id, Outcome(request: $0.request, result: $0.result)) },
                uniquingKeysWith: { first, _ in first })
            result.outcomes = result.outcomes.map { replaced[$0.request.id] ?? $0 }
        }
        var refused = false
        for outcome in result.outcomes {
            guard let file = planned[FileKey(rawValue: outcome.request.id)] else { continue }
            switch outcome.result {
            case .failure(let error):
                let message = refusals[outcome.request.id].map { "\(error.description); \($0)" } ?? error.description
                report.failed.append(SyncReport.Failure(path: file.path, message: message, essential: file.essential))
                if error.status == 401, Scope.of(key: file.key) == .media { refused = true }
            case .success(let success):
                let placed =
                    placements.withLock { $0[file.key] }
                    ?? Result { try record(file, success: success, previous: entries[file.key]) }
                switch placed {
                case .success(let path):
                    report.downloaded.append(path)
                    report.bytesDownloaded += success.size
                case .failure(let error):
                    report.failed.append(
                        SyncReport.Failure(path: file.path, message: "\(error)", essential: file.essential))
                }
            }
        }
        // A 401 on a download wants a new sign-in only when `/Users/Me` refuses the token too (Jellyfin answers 401
        // for more than a bad token).
        if refused, let server, !(await server.signInIsValid()) { report.needsSignIn = true }
        // A full disk stopped the batch: the files placed so far are kept and recorded; the run ends here.
        let full = result.outcomes.filter { $0.error?.isFatal == true }
        if let first = full.first(where: { !($0.error?.message.hasPrefix("not started") ?? false) }) ?? full.first {
            let reason = first.error?.errno.map { String(cString: strerror($0)) } ?? "no space left"
            let path = planned[FileKey(rawValue: first.request.id)]?.path ?? first.request.destination
            throw SyncError.diskFull(
                "\(full.count) of \(result.outcomes.count) files not fetched (\(reason) writing \(path)); "
                    + "\(report.downloaded.count) fetched before it are kept")
        }
    }

    /// What the server serves now at a download URL, asked with `Range: bytes=0-0`: its total size, or why the answer
    /// is not media (an HTML or JSON page from a proxy, an answer that ignores the range).
    private func servedSize(_ request: TransferRequest) async -> Result<Int64, SyncError> {
        var configuration = client.configuration
        configuration.maxBodySize = 64 * 1024
        let probe = HTTPClient(configuration: configuration, retryPolicy: RetryPolicy(maxAttempts: 2))
        var headers = request.headers
        headers.replaceOrAdd(name: "Range", value: "bytes=0-0")
        do {
            let response = try await probe.send(HTTPRequest(url: request.url, headers: headers))
            let type = (response.headers["Content-Type"] ?? "").lowercased()
            if type.hasPrefix("text/") || type.contains("json") || type.contains("html") {
                return .failure(SyncError.fileSystem("the server answered \(type) instead of the media"))
            }
            guard response.status == 206, let range = response.headers["Content-Range"],
                let total = range.split(separator: "/").last.flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) })
            else {
                return .failure(SyncError.fileSystem("the server's size for the media is unknown (no Content-Range)"))
            }
            return .success(total)
        } catch {
            return .failure(SyncError.fileSystem("the size probe failed: \(error)"))
        }
    }

    /// Where a download is named: its planned path, for media with the extension its `Content-Type` calls for
    /// (the container then recorded).
    static func finalName(of file: RemoteFile, contentType: String?) -> (path: String, container: String?) {
        guard file.kind == .media else { return (file.path, nil) }
        let planned = String(file.path[file.path.index(after: file.path.lastIndex(of: ".") ?? file.path.startIndex)...])
        let chosen = MediaExtension.choose(mimeType: contentType, container: planned)
        return (chosen == planned ? file.path : String(file.path.dropLast(planned.count)) + chosen, chosen)
    }

    /// Records a download at the path the executor named it (`success.path`, see ``finalName(of:contentType:)``),
    /// removing the file of an older version at another path.
    private func record(_ file: RemoteFile, success: TransferSuccess, previous: IndexEntry?) throws -> String {
        let path = success.path
        let container = MirrorSync.finalName(of: file, contentType: success.contentType).container
        if let previous, previous.file.path != path {
            try executor.removeReplaced(previous.file.path)
        }
        // The served bytes are the truth: recorded with the size received, the validator they came with and their
        // content hash, whatever the server's MediaSource Size says (it stays stale until the server's next scan).
        var placed = entry(
            for: file, path: path, size: success.size, container: container, previous: nil,
            validator: success.validator ?? success.etag ?? success.lastModified)
        placed.contentHash = success.contentHash
        try executor.record(placed)
        // An enclosure a tracking service redirects: the URL the bytes came from names the episode too (a phone
        // may report it to the podcast account).
        if file.kind == .media, case .podcastEpisode(_, let episodeId)? = file.key.parts,
            case .download(let url, _) = file.content, let effective = success.effectiveURL, effective != url
        {
            try index.recordEpisodeURL(effective, episodeId: episodeId, origin: .redirect)
        }
        return path
    }

    private func entry(
        for file: RemoteFile, path: String, size: Int64, container: String?, previous: IndexEntry?,
        validator: String? = nil
    ) -> IndexEntry {
        let mediaSourceId = file.kind == .media || file.kind == .subtitle ? file.versionId : nil
        return IndexEntry(
            file: LocalFile(
                key: file.key, path: path, kind: file.kind, size: size, signature: file.signature, itemId: file.itemId),
            versionId: file.versionId, mediaSourceId: mediaSourceId, container: container ?? previous?.container,
            downloadedAt: previous?.downloadedAt ?? executor.timestampNow(now()),
            taskId: previous?.taskId ?? executor.newTaskId(), validator: validator ?? previous?.validator,
            contentHash: previous?.contentHash)
    }
}

/// One transfer's outcome, as the engine reported it or as a second attempt replaced it.
private struct Outcome {
    var request: TransferRequest
    var result: Result<TransferSuccess, HTTPError>
    var error: HTTPError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

private struct Outcomes {
    var outcomes: [Outcome]
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

/// Byte counts for people.
public enum ByteCount {
    public static func format(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}
