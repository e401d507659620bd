import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// A sync's second step: the held files looked at, and what the pure planner decided turned into what the run
/// does or, for a dry run, reports; a storage budget's ranks and lines.
extension MirrorSync {
    /// Leaves out the records of a scope this run does not sync (nothing to look at when it syncs them all).
    static func keep(_ entries: inout [IndexEntry], scopes: Set<Scope>) {
        guard scopes.count < Scope.allCases.count else { return }
        entries.removeAll { !scopes.contains(Scope.of(key: $0.file.key)) }
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
    struct HeldRecords: Sendable {
        var entries: [IndexEntry]
        /// By the paths the records name (a dry run's legacy media at the place the migration moves them to).
        var sizes: [String: Int64]
    }

    /// The sizes of the held files, and for those not where the index says, of the place they should be.
    /// - Parameter known: the sizes of `files` read before, if they were.
    func onDisk(
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

    /// What a budget counts as one: a Jellyfin item with its subtitles and images, a podcast episode with its
    /// extras.
    static func budgetUnit(_ file: RemoteFile) -> String {
        file.key.isPodcast ? "podcast:" + (file.versionId ?? file.itemId) : file.itemId
    }

    /// Where each unit stands for a budget: the Jellyfin selections in their order, then each podcast newest first.
    func rankings(_ sources: [Scope: Source]) -> [String: BudgetRank] {
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

    /// What the run would do, without doing it. The metadata it would write is planned from the files held
    /// now (the real run writes it after the downloads).
    func dryRunReport(
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

    /// Whether the run left nothing of the Jellyfin side undone or undecided, what a listing memo is kept after: no
    /// file of that side failed or was left over, no item was gone, refused or kept unconfirmed, no Jellyfin source
    /// was in error, no budget held anything back, no play-state line, not a dry run. The podcasts' own troubles (a
    /// dead feed, an enclosure that fails) do not count: they change nothing a Jellyfin listing leads to.
    /// - Parameters:
    ///   - actions: both phases' plans (which paths are the Jellyfin side's).
    ///   - podcastRejected: how many of the report's `rejected` lines the podcasts made.
    static func jellyfinSideEndedComplete(_ report: SyncReport, actions: [SyncAction], podcastRejected: Int) -> Bool {
        var media = Set<String>()
        for action in actions {
            let file: (key: FileKey, path: String)
            switch action {
            case .download(let remote, _), .write(let remote, _), .move(_, let remote), .adopt(let remote, _):
                file = (remote.key, remote.path)
            case .delete(let local), .keepExtraneous(let local), .keepUnconfirmed(let local), .keepPlayed(let local):
                file = (local.key, local.path)
            }
            if Scope.of(key: file.key) == .media { media.insert(file.path) }
        }
        // Every line a podcast source reports begins so (a feed: "podcast <title>: …"; the account: "podcast
        // account …"); every Jellyfin line begins with "Jellyfin".
        return !report.dryRun && !report.needsSignIn && report.deletionAborted == nil && report.gone.isEmpty
            && report.keptUnconfirmed.isEmpty && report.waiting.isEmpty && report.playState.isEmpty
            && report.rejected.count == podcastRejected
            && report.sourceErrors.allSatisfy { $0.hasPrefix("podcast ") }
            && report.failed.allSatisfy { !media.contains($0.path) }
            && report.extraneous.allSatisfy { !media.contains($0) }
    }
}
