import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Progress of an export run.
public struct ExportProgress: Sendable, Equatable {
    public var filesDone: Int
    public var filesTotal: Int
    public var bytesDone: Int64
    public var bytesTotal: Int64
}

/// One thing an export did to one file, for log lines.
public struct ExportEvent: Sendable, Equatable {
    /// `exported`, `moved`, `deleted`, `skipped`, `failed`.
    public var action: String
    public var path: String
    public var detail: String?
}

/// Applies an ``ExportPlan`` to a destination: each file written under a temporary name in its folder and renamed
/// into place, each placement journaled first, so a killed run leaves no partial file at a final name and the next
/// run knows every file it wrote.
final class ExportExecutor {
    let destination: String
    let root: MirrorRoot
    let allowLinks: Bool
    var manifest: ExportManifest
    private var journal: Int32 = -1
    private(set) var result: ExportResult
    private var written: [String] = []
    private var writtenFolders = Set<String>()
    private var foldersToPrune = Set<String>()
    /// Folders known to exist (made or seen by this run).
    private var knownFolders = Set<String>()
    /// Temporary names: a random tag per run and a counter.
    private let runTag = String(UInt64.random(in: 0...UInt64.max), radix: 36)
    private var temporaryCount = 0
    /// Per folder: whether its file system takes `O_TMPFILE` (nil: not tried yet).
    private var unnamedFiles: [String: Bool] = [:]
    /// Keys of the targets this run skipped or failed to write: the playlists written after them leave them out.
    private var missedKeys = Set<String>()

    init(destination: String, root: MirrorRoot, allowLinks: Bool, manifest: ExportManifest, result: ExportResult) {
        self.destination = destination
        self.root = root
        self.allowLinks = allowLinks
        self.manifest = manifest
        self.result = result
    }

    deinit {
        if journal >= 0 { close(journal) }
    }

    private func absolute(_ relative: String) -> String { destination + "/" + relative }

    func run(
        _ plan: ExportPlan, progress: (@Sendable (ExportProgress) -> Void)?, events: (@Sendable (ExportEvent) -> Void)?
    ) -> ExportResult {
        var state = ExportProgress(
            filesDone: 0, filesTotal: plan.steps.count, bytesDone: 0, bytesTotal: plan.bytesToWrite)
        progress?(state)
        do throws(ExportFileSystem.Failure) {
            try openJournal()
            for step in plan.steps {
                let before = state.bytesDone
                do throws(ExportFileSystem.Failure) {
                    switch step {
                    case .copy(let target, let replacing):
                        try copy(target, replacing: replacing, events: events) { done in
                            state.bytesDone = before + done
                            progress?(state)
                        }
                        state.bytesDone = before + target.size
                    case .move(let from, let target):
                        try move(from: from, to: target, events: events)
                    case .delete(let path, let reason):
                        try delete(path, reason: reason, events: events)
                    }
                } catch  where !error.stopsTheRun {
                    // A destination that went away (a stick pulled out) fails every file alike: the run stops.
                    if error.atDestination && ExportFileSystem.fact(destination) == .missing {
                        throw ExportFileSystem.Failure.gone(destination)
                    }
                    if case .copy(let target, _) = step { missedKeys.insert(target.key) }
                    result.failed.append(ExportIssue(path: step.path, reason: error.message))
                    events?(ExportEvent(action: "failed", path: step.path, detail: error.message))
                }
                state.filesDone += 1
                progress?(state)
            }
        } catch {
            let remaining = plan.steps.count - state.filesDone
            result.stopped =
                error.isDiskFull
                ? "disk full: \(error.message); \(remaining) of \(plan.steps.count) changes not made; free some space and run it again"
                : "\(error.message); \(remaining) of \(plan.steps.count) changes not made; the next export goes on from here"
            result.stoppedByFullDisk = error.isDiskFull
        }
        prune()
        finish()
        return result
    }

    // MARK: Steps

    private func copy(
        _ planned: ExportTarget, replacing: Bool, events: (@Sendable (ExportEvent) -> Void)?,
        progress: (Int64) -> Void
    ) throws(ExportFileSystem.Failure) {
        var target = planned
        if case .playlist(let list) = target.content { target.content = .playlist(list.without(keys: missedKeys)) }
        let final = absolute(target.path)
        let folder = (final as NSString).deletingLastPathComponent
        if !knownFolders.contains(folder) {
            try ExportFileSystem.makeFolders(folder, below: destination)
            knownFolders.insert(folder)
        }
        let entry = ExportManifest.Entry(
            key: target.key, source: target.sourcePath, identity: target.identity, size: target.size,
            scope: target.scope)
        if !replacing, case .file(let file) = target.content, unnamedFiles[folder] != false {
            guard let source = root.absolute(file.path) else {
                throw ExportFileSystem.Failure(
                    number: EINVAL, what: "refusing the mirror path \(file.path)", atDestination: false)
            }
            guard ExportFileSystem.fact(final) == .missing else {
                skipUsersFile(target, events: events)
                return
            }
            var journaled = false
            do throws(ExportFileSystem.Failure) {
                let placed = try ExportFileSystem.placeNew(
                    source: source, final: final, folder: folder, allowLink: allowLinks,
                    beforeNaming: { () throws(ExportFileSystem.Failure) in
                        try self.append(ExportManifest.JournalLine(op: "put", path: target.path, entry: entry))
                        journaled = true
                    }, progress: progress)
                if let method = placed {
                    unnamedFiles[folder] = true
                    placedFile(target, entry: entry, method: method, final: final, folder: folder, events: events)
                    return
                }
                unnamedFiles[folder] = false
            } catch  where error.number == EEXIST {
                if journaled { try append(ExportManifest.JournalLine(op: "del", path: target.path)) }
                skipUsersFile(target, events: events)
                return
            }
        }
        temporaryCount += 1
        let temporary = folder + "/" + ExportExecutor.temporaryPrefix + runTag + "-\(temporaryCount).tmp"
        try append(ExportManifest.JournalLine(op: "tmp", path: relative(temporary)))
        let method: ExportFileSystem.Method
        switch target.content {
        case .file(let file):
            guard let source = root.absolute(file.path) else {
                throw ExportFileSystem.Failure(
                    number: EINVAL, what: "refusing the mirror path \(file.path)", atDestination: false)
            }
            method = try ExportFileSystem.place(
                source: source, temporary: temporary, allowLink: allowLinks, progress: progress)
        case .playlist(let list):
            try ExportFileSystem.write(list.bytes, to: temporary)
            method = .write
        }
        // Checked again just before the rename: a file that appeared meanwhile is never replaced.
        let now = ExportFileSystem.fact(final)
        let ours = manifest.files[target.path].map { now == .file(size: $0.size) } ?? false
        guard now == .missing || (replacing && ours) else {
            unlink(temporary)
            skipUsersFile(target, events: events)
            return
        }
        do throws(ExportFileSystem.Failure) {
            try append(ExportManifest.JournalLine(op: "put", path: target.path, entry: entry))
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, final) == 0 else {
            let number = errno
            unlink(temporary)
            throw ExportFileSystem.Failure(number: number, what: "cannot rename into \(final)")
        }
        placedFile(target, entry: entry, method: method, final: final, folder: folder, events: events)
    }

    private func placedFile(
        _ target: ExportTarget, entry: ExportManifest.Entry, method: ExportFileSystem.Method, final: String,
        folder: String,
        events: (@Sendable (ExportEvent) -> Void)?
    ) {
        manifest.files[target.path] = entry
        if method == .copy || method == .write { written.append(final) }
        writtenFolders.insert(folder)
        result.exported.append(target.path)
        result.bytesExported += target.size
        result.methods[method.rawValue, default: 0] += 1
        events?(ExportEvent(action: "exported", path: target.path, detail: method.rawValue))
    }

    private func skipUsersFile(_ target: ExportTarget, events: (@Sendable (ExportEvent) -> Void)?) {
        missedKeys.insert(target.key)
        let issue = ExportIssue(
            path: target.path, reason: "a file the export did not write is at this name; left untouched")
        result.skipped.append(issue)
        events?(ExportEvent(action: "skipped", path: target.path, detail: issue.reason))
    }

    private func move(from: String, to target: ExportTarget, events: (@Sendable (ExportEvent) -> Void)?)
        throws(ExportFileSystem.Failure)
    {
        guard let entry = manifest.files[from], ExportFileSystem.fact(absolute(from)) == .file(size: entry.size),
            ExportFileSystem.fact(absolute(target.path)) == .missing
        else {
            let issue = ExportIssue(
                path: target.path, reason: "not moved from \(from): one of the two changed meanwhile")
            result.skipped.append(issue)
            events?(ExportEvent(action: "skipped", path: target.path, detail: issue.reason))
            return
        }
        let final = absolute(target.path)
        let folder = (final as NSString).deletingLastPathComponent
        try ExportFileSystem.makeFolders(folder, below: destination)
        try append(ExportManifest.JournalLine(op: "put", path: target.path, entry: entry))
        guard rename(absolute(from), final) == 0 else {
            throw ExportFileSystem.Failure(number: errno, what: "cannot move \(from) to \(target.path)")
        }
        try append(ExportManifest.JournalLine(op: "del", path: from))
        manifest.files[from] = nil
        manifest.files[target.path] = entry
        writtenFolders.insert(folder)
        foldersToPrune.insert((absolute(from) as NSString).deletingLastPathComponent)
        result.moved.append(target.path)
        events?(ExportEvent(action: "moved", path: target.path, detail: "from \(from)"))
    }

    private func delete(_ path: String, reason: String, events: (@Sendable (ExportEvent) -> Void)?)
        throws(ExportFileSystem.Failure)
    {
        guard let entry = manifest.files[path], ExportFileSystem.fact(absolute(path)) == .file(size: entry.size) else {
            manifest.files[path] = nil
            return
        }
        guard unlink(absolute(path)) == 0 else {
            throw ExportFileSystem.Failure(number: errno, what: "cannot delete \(path)")
        }
        manifest.files[path] = nil
        try append(ExportManifest.JournalLine(op: "del", path: path))
        foldersToPrune.insert((absolute(path) as NSString).deletingLastPathComponent)
        result.deleted.append(path)
        events?(ExportEvent(action: "deleted", path: path, detail: reason))
    }

    /// Removes the folders that deletions and moves left empty, up to the destination (a folder holding anything
    /// else, such as the user's own files, stays).
    private func prune() {
        for folder in foldersToPrune.sorted(by: { $0.count > $1.count }) {
            var current = folder
            while current.hasPrefix(destination + "/") && current != destination {
                guard rmdir(current) == 0 else { break }
                current = (current as NSString).deletingLastPathComponent
            }
        }
    }

    // MARK: Journal and manifest

    static let temporaryPrefix = ".mediasync-export-"

    private func relative(_ path: String) -> String {
        path.hasPrefix(destination + "/") ? String(path.dropFirst(destination.count + 1)) : path
    }

    private func openJournal() throws(ExportFileSystem.Failure) {
        let path = absolute(ExportManifest.journalName)
        journal = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard journal >= 0 else {
            throw ExportFileSystem.Failure(number: errno, what: "cannot write in \(destination)")
        }
    }

    private func append(_ line: ExportManifest.JournalLine) throws(ExportFileSystem.Failure) {
        let data = ExportManifest.journalText(line)
        let count = data.count
        let written = data.withUnsafeBytes { Glibc.write(journal, $0.baseAddress, count) }
        guard written == count else {
            throw ExportFileSystem.Failure(
                number: written < 0 ? errno : ENOSPC, what: "cannot write the export's journal in \(destination)")
        }
    }

    /// Flushes what this run wrote to the disk, then folds the journal into the manifest (written under a temporary name and
    /// renamed); the journal is removed only once the manifest is in place.
    private func finish() {
        // One flush of everything written (Swift's Glibc has no syncfs; an fsync per file costs a journal commit
        // each on ext4), before the manifest records the files as exported.
        if !written.isEmpty || !writtenFolders.isEmpty { sync() }
        if journal >= 0 { _ = fsync(journal) }
        do {
            try ExportExecutor.save(manifest, destination: destination)
            if journal >= 0 {
                close(journal)
                journal = -1
            }
            unlink(absolute(ExportManifest.journalName))
        } catch {
            let reason = (error as? ExportFileSystem.Failure)?.message ?? "\(error)"
            let line =
                "cannot write the export's manifest (\(reason)); the journal keeps the record for the next export"
            result.stopped = result.stopped.map { $0 + "; " + line } ?? line
        }
    }

    /// Writes the manifest atomically.
    static func save(_ manifest: ExportManifest, destination: String) throws {
        let data = Data(manifest.rendered())
        let temporary = destination + "/" + temporaryPrefix + "manifest.tmp"
        unlink(temporary)
        guard FileManager.default.createFile(atPath: temporary, contents: data) else {
            throw ExportFileSystem.Failure(number: errno == 0 ? EIO : errno, what: "cannot write \(temporary)")
        }
        ExportFileSystem.flush(temporary)
        guard rename(temporary, destination + "/" + ExportManifest.fileName) == 0 else {
            let number = errno
            unlink(temporary)
            throw ExportFileSystem.Failure(number: number, what: "cannot write the manifest")
        }
        ExportFileSystem.flush(destination)
    }
}

extension ExportPlan.Step {
    /// The destination path the step is about.
    public var path: String {
        switch self {
        case .copy(let target, _): return target.path
        case .move(_, let target): return target.path
        case .delete(let path, _): return path
        }
    }
}
