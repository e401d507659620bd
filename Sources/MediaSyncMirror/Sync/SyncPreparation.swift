import Foundation
import MediaSyncCore

/// What a sync does to the mirror before it compares, surveyed first and changing nothing: what a killed run left in
/// staging and in the placed-files journal, stored absolute paths (an older version's, another root's) and Swiftfin's
/// legacy layout.
///
/// The real run has the executor make it (``MirrorExecutor/prepare(_:)``) before anything is listed. A dry run takes
/// it on the records it reads instead (``applied(to:)``: the records the real run's index holds once it is made)
/// and lists its moves with the plan (``plannedLines``), so it plans what the real run does.
struct SyncPreparation: Sendable {
    /// What a killed run left in staging that no later run would use (names in the staging folder).
    var staleTemporaries: [String] = []
    /// The journal's files a killed run placed but did not record, on disk with the recorded size.
    var journaled: [IndexEntry] = []
    /// The stored absolute paths and what becomes of each, once the journal's files are recorded.
    var pathRepairs: [MirrorIndex.PathRepairStep] = []
    /// The legacy items migrated into the current layout, and those left as they are.
    var legacy = LegacyMigration.Survey()
    /// The records the migration leads to for the legacy media (as the reindex after it records them), with the
    /// sizes of their files.
    var legacyRecords: [(entry: IndexEntry, size: Int64)] = []

    /// Surveys a mirror (its staging folder, its journal, its index, its tree), changing nothing.
    static func survey(_ executor: MirrorExecutor) throws -> SyncPreparation {
        var preparation = SyncPreparation()
        preparation.staleTemporaries = executor.root.staleTemporaries()
        preparation.journaled = executor.journaledFiles()
        preparation.pathRepairs = try executor.index.plannedPathRepairs(
            root: executor.root, recording: preparation.journaled)
        let migration = LegacyMigration(executor: executor)
        if migration.isNeeded() {
            preparation.legacy = migration.survey()
            preparation.legacyRecords = migration.plannedEntries(preparation.legacy.found)
        }
        return preparation
    }

    /// The records an index holding `entries` holds once this preparation is made, in its order: the journal's
    /// files recorded (each replacing the record of its key and the one of its path), the stored paths repaired
    /// or their records forgotten, the legacy media recorded where the migration moves them. With them, the sizes
    /// of the files the migration moves, by their new paths (not there yet).
    func applied(to entries: [IndexEntry]) -> (entries: [IndexEntry], movedSizes: [String: Int64]) {
        guard !journaled.isEmpty || !pathRepairs.isEmpty || !legacyRecords.isEmpty else { return (entries, [:]) }
        var entries = entries
        for entry in journaled { MirrorIndex.record(entry, into: &entries) }
        if !pathRepairs.isEmpty {
            let steps = Dictionary(pathRepairs.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
            entries = entries.compactMap { entry in
                guard let step = steps[entry.file.key], step.stored == entry.file.path else { return entry }
                guard let relative = step.relative else { return nil }
                var repaired = entry
                repaired.file.path = relative
                return repaired
            }
        }
        var movedSizes: [String: Int64] = [:]
        for (entry, size) in legacyRecords {
            MirrorIndex.record(entry, into: &entries)
            movedSizes[entry.file.path] = size
        }
        return (entries, movedSizes)
    }

    /// The lines of the plan for what this preparation moves: the legacy media, each to its place in the current
    /// layout.
    var plannedLines: [SyncReport.PlannedAction] {
        legacy.found.map { .init(action: "move", path: $0.target, reason: "legacy layout", from: $0.from, bytes: nil) }
    }
}
