import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON

/// A sync's fourth step: each `metadata.json` composed from what is now on disk, planned against the one held, and
/// written through the executor where it changed.
extension MirrorSync {
    /// What writing the metadata planned (its deletions and leftovers go with the media's), and what it made that
    /// lives to the run's end.
    struct MetadataPhase {
        var plan: SyncPlan
        var composed: [MetadataComposer.Composed]
        var entries: [IndexEntry]
    }

    /// What became of one metadata file a sync writes.
    enum WriteOutcome: Sendable {
        case written(MirrorIndex.MetadataFacts)
        case failed(String)
        /// Not written because the disk is full: found so by this write, or by another one before it started.
        case notWritten
    }

    /// Composes, plans and writes the metadata of every source, after the media plan `plan` was carried out.
    /// - Parameter entries: the index's records as planning read them (read again only when the plan changed one).
    /// - Parameter podcasts: which side's records are read again (see `MirrorIndex.entries(forPlanning:podcasts:)`).
    func writeMetadata(
        after plan: SyncPlan, entries: [IndexEntry], podcasts: Bool?, sources: [Scope: Source], keptPaths: [String],
        options: SyncOptions, events: (@Sendable (SyncEvent) -> Void)?, report: inout SyncReport
    ) throws -> MetadataPhase {
        let placer = executor.files
        // Phase 1 recorded nothing when it planned nothing: the entries read before still hold.
        var updated = entries
        if plan.actions.contains(where: \.changesAWantedFile) {
            updated = try index.entries(forPlanning: true, podcasts: podcasts)
            MirrorSync.keep(&updated, scopes: Set(sources.keys))
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
                let rendered = try write.render()
                var written = self.entry(
                    for: file, path: file.path, size: Int64(rendered.bytes.count), container: nil, previous: nil)
                let hash = ContentHash.hex(of: rendered.bytes)
                written.contentHash = hash
                try self.executor.write(rendered.bytes, as: written)
                events?(SyncEvent(action: "written", path: file.path))
                return .written(MirrorIndex.MetadataFacts(path: file.path, contentHash: hash, facts: rendered.facts))
            } catch let error as SyncError where error.isDiskFull {
                diskFull.withLock { $0 = $0 ?? error }
                return .notWritten
            } catch {
                events?(SyncEvent(action: "failed", path: file.path, message: "\(error)"))
                return .failed("\(error)")
            }
        }
        if let error = diskFull.withLock({ $0 }) { throw error }
        var facts: [MirrorIndex.MetadataFacts] = []
        facts.reserveCapacity(writes.count)
        for (write, outcome) in zip(writes, outcomes) {
            switch outcome {
            case .written(let written):
                report.written.append(write.file.path)
                facts.append(written)
            case .failed(let message):
                report.failed.append(SyncReport.Failure(path: write.file.path, message: message, essential: true))
            case .notWritten: break
            }
        }
        // What the export reads of them, when the index can take it (a full disk here costs the export a read of the
        // documents, not the sync).
        try? saveFacts(facts)
        return MetadataPhase(plan: metadataPlan, composed: composed, entries: updated)
    }
}

extension MirrorSync {
    /// Keeps the export's facts of the metadata files this run wrote and, the first time after the index began
    /// keeping them, of every metadata file written before (read and parsed once, on every core; a file that is not
    /// the one its record describes is left for the export to read).
    func saveFacts(_ written: [MirrorIndex.MetadataFacts]) throws {
        guard let unfilled = try index.metadataFactsToFill() else {
            if !written.isEmpty { try executor.saveMetadataFacts(written, markFilled: false) }
            return
        }
        let writtenPaths = Set(written.map(\.path))
        let toRead = unfilled.filter { !writtenPaths.contains($0.path) }
        let root = self.root
        let read = Parallel.map(toRead) { file -> MirrorIndex.MetadataFacts? in
            guard let absolute = root.absolute(file.path), let data = FileManager.default.contents(atPath: absolute)
            else { return nil }
            let bytes = [UInt8](data)
            guard ContentHash.hex(of: bytes) == file.contentHash,
                let value = try? JSONValue(parsing: bytes, keepingKeys: ExportSource.metadataKeys)
            else { return nil }
            return MirrorIndex.MetadataFacts(
                path: file.path, contentHash: file.contentHash, facts: JSONWriter.compactBytes(value))
        }
        try executor.saveMetadataFacts(written + read.compactMap { $0 }, markFilled: true)
    }
}
