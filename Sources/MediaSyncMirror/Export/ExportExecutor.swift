import Foundation
import MediaSyncHTTP

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
///
/// Files are copied by ``workers`` threads at once, each taking a folder's run of files (the kernel's work of making
/// inodes and copying bytes is most of a copy's time, and it runs in parallel); moves, playlists and deletions run
/// one by one, in the plan's order. The state below is shared by the workers: every read and change of it holds
/// `lock`; journal lines are written whole, a line or a folder's lines per `write(2)` to an `O_APPEND` file, whatever
/// the interleaving.
final class ExportExecutor: @unchecked Sendable {
    let destination: String
    let root: MirrorRoot
    let allowLinks: Bool
    /// Files copied at once.
    let workers: Int
    private let lock = NSLock()
    var manifest: ExportManifest
    private var journal: Int32 = -1
    private(set) var result: ExportResult
    /// Whether this run wrote bytes (copies, playlists), and the folders it placed names in: flushed at the end.
    private var wroteBytes = false
    private var writtenFolders = Set<String>()
    /// The mirror's root folder, opened once: sources are opened relative to it.
    private var mirrorFolder: Int32 = -1
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

    /// The device the destination folder is on when the run starts: a folder that is then missing, or on another
    /// device (the mount point left behind by an unmounted stick), is a destination gone.
    private let destinationDevice: UInt64?

    init(
        destination: String, root: MirrorRoot, allowLinks: Bool, workers: Int = 1, manifest: ExportManifest,
        result: ExportResult
    ) {
        self.destinationDevice = ExportFileSystem.device(of: destination)
        self.destination = destination
        self.root = root
        self.allowLinks = allowLinks
        self.workers = max(1, workers)
        self.manifest = manifest
        self.result = result
    }

    deinit {
        if journal >= 0 { close(journal) }
        if mirrorFolder >= 0 { close(mirrorFolder) }
    }

    private func absolute(_ relative: String) -> String { destination + "/" + relative }

    /// Whether the destination folder went away since the run started (see ``destinationDevice``).
    private var destinationIsGone: Bool {
        ExportFileSystem.device(of: destination) != destinationDevice
    }

    /// Throws the one failure that stops the run when the destination went away.
    private func stopIfGone() throws(ExportFileSystem.Failure) {
        if destinationIsGone { throw ExportFileSystem.Failure.gone(destination) }
    }

    /// Set once the run stopped because the destination went away: nothing more is written there.
    private var stoppedAsGone = false

    func run(
        _ plan: ExportPlan, progress: (@Sendable (ExportProgress) -> Void)?, events: (@Sendable (ExportEvent) -> Void)?
    ) -> ExportResult {
        state = ExportProgress(filesDone: 0, filesTotal: plan.steps.count, bytesDone: 0, bytesTotal: plan.bytesToWrite)
        progress?(state)
        mirrorFolder = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        do throws(ExportFileSystem.Failure) {
            try openJournal()
            var position = 0
            while position < plan.steps.count {
                var end = position
                while end < plan.steps.count && plan.steps[end].isFileCopy { end += 1 }
                if end > position {
                    try copyFiles(Array(plan.steps[position..<end]), progress: progress, events: events)
                    position = end
                    continue
                }
                try perform(plan.steps[position], progress: progress, events: events)
                position += 1
            }
        } catch {
            var notMade = plan.steps.count - lock.withLock { state.filesDone }
            if error.number == ExportFileSystem.Failure.gone(destination).number && destinationIsGone {
                stoppedAsGone = true
                let counted = failedAtDestination
                result.failed.removeAll { counted.contains($0.path) }
                notMade += counted.count
            }
            let remaining = notMade
            result.stopped =
                error.isDiskFull
                ? "disk full: \(error.message); \(remaining) of \(plan.steps.count) changes not made; free some space and run it again"
                : "\(error.message); \(remaining) of \(plan.steps.count) changes not made; the next export goes on from here"
            result.stoppedByFullDisk = error.isDiskFull
        }
        // Workers finish in any order: the lists read the same on every run.
        result.exported.sort()
        result.failed.sort { $0.path < $1.path }
        result.skipped.sort { $0.path < $1.path }
        prune()
        finish()
        return result
    }

    /// Steps that failed at the destination as a destination going away makes them fail (missing folders, I/O
    /// errors; under `lock`): when it turns out to be gone, they were its going (another worker met it first), and
    /// the one line that stops the run stands for them.
    private var failedAtDestination = Set<String>()

    /// Progress of the run (under `lock`).
    private var state = ExportProgress(filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0)

    /// One step, its failure recorded unless it stops the run.
    private func perform(
        _ step: ExportPlan.Step, in folder: OpenFolder? = nil, progress: (@Sendable (ExportProgress) -> Void)?,
        events: (@Sendable (ExportEvent) -> Void)?
    ) throws(ExportFileSystem.Failure) {
        var reported: Int64 = 0
        do throws(ExportFileSystem.Failure) {
            switch step {
            case .copy(let target, let replacing):
                try copy(target, replacing: replacing, in: folder, events: events) { done in
                    self.addBytes(done - reported, progress: progress)
                    reported = done
                }
                addBytes(target.size - reported, progress: progress)
            case .move(let from, let target):
                try move(from: from, to: target, events: events)
            case .delete(let path, let reason):
                try delete(path, reason: reason, events: events)
            }
        } catch  where !error.stopsTheRun {
            // A destination that went away (a stick pulled out) fails every file alike: the run stops.
            if error.atDestination { try stopIfGone() }
            lock.withLock {
                switch step {
                case .copy(let target, _), .move(_, let target): missedKeys.insert(target.key)
                case .delete: break
                }
                // What the destination's going away looks like to a worker that met it before the other did.
                if error.atDestination && ExportFileSystem.Failure.goneNumbers.contains(error.number) {
                    failedAtDestination.insert(step.path)
                }
                result.failed.append(ExportIssue(path: step.path, reason: error.message))
            }
            events?(ExportEvent(action: "failed", path: step.path, detail: error.message))
        }
        let now = lock.withLock {
            state.filesDone += 1
            return state
        }
        progress?(now)
    }

    private func addBytes(_ bytes: Int64, progress: (@Sendable (ExportProgress) -> Void)?) {
        guard bytes != 0 else { return }
        let now = lock.withLock {
            state.bytesDone += bytes
            return state
        }
        progress?(now)
    }

    /// File copies, ``workers`` at a time, a folder's run of files at a time: the worker opens the folder once and
    /// journals the names it is about to make in one write. The first failure that stops the run stops the workers
    /// once their current file is done, and is thrown.
    private func copyFiles(
        _ steps: [ExportPlan.Step], progress: (@Sendable (ExportProgress) -> Void)?,
        events: (@Sendable (ExportEvent) -> Void)?
    ) throws(ExportFileSystem.Failure) {
        let runs = ExportExecutor.folderRuns(steps.map(\.path), limit: 64)
        lock.withLock {
            nextStep = 0
            stopFailure = nil
        }
        // What is written goes to the disk while later files are copied: the flush at the end has less to wait for.
        let flusher = EarlyFlush()
        lock.withLock { earlyFlush = flusher }
        defer {
            lock.withLock { earlyFlush = nil }
            flusher.stop()
        }
        DispatchQueue.concurrentPerform(iterations: min(workers, runs.count)) { _ in
            while true {
                let claimed: Range<Int>? = lock.withLock {
                    guard stopFailure == nil, nextStep < runs.count else { return nil }
                    nextStep += 1
                    return runs[nextStep - 1]
                }
                guard let run = claimed else { return }
                do throws(ExportFileSystem.Failure) {
                    try copyRun(steps[run], progress: progress, events: events)
                } catch {
                    lock.withLock { stopFailure = stopFailure ?? error }
                }
            }
        }
        if let stop = lock.withLock({ stopFailure }) { throw stop }
    }

    /// Consecutive paths in one folder, at most `limit` at a time, as ranges of `paths`' positions. Pure.
    static func folderRuns(_ paths: [String], limit: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = 0
        var folder: Substring?
        for (position, path) in paths.enumerated() {
            let parent = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path[..<$0] } ?? ""
            if position > start && (parent != folder || position - start >= limit) {
                runs.append(start..<position)
                start = position
            }
            folder = parent
        }
        if start < paths.count { runs.append(start..<paths.count) }
        return runs
    }

    /// A destination folder opened for a run of files, and the steps whose names were journaled ahead.
    struct OpenFolder {
        var descriptor: Int32
        var journaled: Set<String>
    }

    /// One folder's run of file copies: the folder made and opened once, the new names journaled in one write, then
    /// each file placed in it.
    private func copyRun(
        _ steps: ArraySlice<ExportPlan.Step>, progress: (@Sendable (ExportProgress) -> Void)?,
        events: (@Sendable (ExportEvent) -> Void)?
    ) throws(ExportFileSystem.Failure) {
        guard let first = steps.first else { return }
        var open: OpenFolder?
        let folder = PathText.parent(of: absolute(first.path))
        do throws(ExportFileSystem.Failure) {
            try ensureFolder(folder)
            let descriptor = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if descriptor >= 0 && mirrorFolder >= 0 {
                // The names journaled ahead: new files of the mirror in a folder that takes unnamed files. A name
                // journaled and then not made is dropped when the journal is read (no file at it, or not its size).
                var lines: [UInt8] = []
                var journaled = Set<String>()
                if lock.withLock({ unnamedFiles[folder] }) != false {
                    for step in steps {
                        guard case .copy(let target, false) = step, case .file = target.content else { continue }
                        lines += ExportManifest.journalText(
                            ExportManifest.JournalLine(op: "put", path: target.path, entry: manifestEntry(target)))
                        journaled.insert(target.path)
                    }
                }
                if !lines.isEmpty { try appendJournal(lines) }
                open = OpenFolder(descriptor: descriptor, journaled: journaled)
            } else if descriptor >= 0 {
                close(descriptor)
            }
        } catch  where !error.stopsTheRun {
            // Each file then meets (and reports) the failure itself.
        }
        defer { if let open { close(open.descriptor) } }
        for step in steps {
            if lock.withLock({ stopFailure != nil }) { return }
            try perform(step, in: open, progress: progress, events: events)
        }
    }

    /// Makes `folder` below the destination once per run (never again on whatever is left at the destination's path,
    /// such as an empty mount point).
    private func ensureFolder(_ folder: String) throws(ExportFileSystem.Failure) {
        if lock.withLock({ knownFolders.contains(folder) }) { return }
        try stopIfGone()
        try ExportFileSystem.makeFolders(folder, below: destination)
        lock.withLock { _ = knownFolders.insert(folder) }
    }

    private func manifestEntry(_ target: ExportTarget) -> ExportManifest.Entry {
        ExportManifest.Entry(
            key: target.key, source: target.sourcePath, identity: target.identity, size: target.size,
            scope: target.scope)
    }

    /// The flush under way while files are copied, and the files placed since it was last asked (under `lock`).
    private var earlyFlush: EarlyFlush?
    private var placedSinceFlush = 0
    /// Files placed between two early flushes.
    static let filesPerEarlyFlush = 4096

    /// The next of the workers' steps, and the failure that stopped them (under `lock`).
    private var nextStep = 0
    private var stopFailure: ExportFileSystem.Failure?

    // MARK: Steps

    private func copy(
        _ planned: ExportTarget, replacing: Bool, in open: OpenFolder?, events: (@Sendable (ExportEvent) -> Void)?,
        progress: (Int64) -> Void
    ) throws(ExportFileSystem.Failure) {
        var target = planned
        if case .playlist(let list) = target.content {
            let kept = list.without(keys: lock.withLock { missedKeys })
            // Every file it lists was skipped or failed: no playlist of nothing (the layout never makes one).
            if kept.entries.isEmpty { return }
            target.content = .playlist(kept)
        }
        let final = absolute(target.path)
        let folder = PathText.parent(of: final)
        try ensureFolder(folder)
        let entry = manifestEntry(target)
        if !replacing, case .file(let file) = target.content, lock.withLock({ unnamedFiles[folder] }) != false {
            guard SafeName.isContained(file.path) else {
                throw ExportFileSystem.Failure(
                    number: EINVAL, what: "refusing the mirror path \(file.path)", atDestination: false)
            }
            // No look at `final` first: the plan saw it free, and a file that appeared since makes the name's
            // `linkat` fail with EEXIST (caught below), never replaced.
            var journaled = open?.journaled.contains(target.path) ?? false
            let descriptor = open?.descriptor ?? Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if open == nil && descriptor >= 0 { close(descriptor) } }
            guard mirrorFolder >= 0 else {
                throw ExportFileSystem.Failure(
                    number: EBADF, what: "cannot open the mirror \(root.path)", atDestination: false)
            }
            guard descriptor >= 0 else {
                throw ExportFileSystem.Failure(number: errno, what: "cannot write in \(folder)")
            }
            do throws(ExportFileSystem.Failure) {
                let name = String(final[final.index(after: final.lastIndex(of: "/") ?? final.startIndex)...])
                let placed = try ExportFileSystem.placeNew(
                    source: file.path, in: mirrorFolder, name: name, folder: descriptor, final: final,
                    allowLink: allowLinks,
                    beforeNaming: journaled
                        ? nil
                        : { () throws(ExportFileSystem.Failure) in
                            try self.append(ExportManifest.JournalLine(op: "put", path: target.path, entry: entry))
                            journaled = true
                        }, progress: progress)
                if let method = placed {
                    lock.withLock { unnamedFiles[folder] = true }
                    placedFile(target, entry: entry, method: method, final: final, folder: folder, events: events)
                    return
                }
                lock.withLock { unnamedFiles[folder] = false }
            } catch  where error.number == EEXIST {
                if journaled { try append(ExportManifest.JournalLine(op: "del", path: target.path)) }
                skipUsersFile(target, events: events)
                return
            }
        }
        let count = lock.withLock {
            temporaryCount += 1
            return temporaryCount
        }
        let temporary = folder + "/" + ExportExecutor.temporaryPrefix + runTag + "-\(count).tmp"
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
        let ours = lock.withLock { manifest.files[target.path] }.map { now == .file(size: $0.size) } ?? false
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
        lock.withLock {
            manifest.files[target.path] = entry
            if method == .copy || method == .write { wroteBytes = true }
            placedSinceFlush += 1
            if placedSinceFlush >= ExportExecutor.filesPerEarlyFlush {
                placedSinceFlush = 0
                earlyFlush?.ask()
            }
            writtenFolders.insert(folder)
            result.exported.append(target.path)
            result.bytesExported += target.size
            result.methods[method.rawValue, default: 0] += 1
        }
        events?(ExportEvent(action: "exported", path: target.path, detail: method.rawValue))
    }

    private func skipUsersFile(_ target: ExportTarget, events: (@Sendable (ExportEvent) -> Void)?) {
        skip(target, reason: "a file the export did not write is at this name; left untouched", events: events)
    }

    /// Records `target` as skipped for `reason` and says so in an event; the playlists written after it leave its
    /// key out.
    private func skip(_ target: ExportTarget, reason: String, events: (@Sendable (ExportEvent) -> Void)?) {
        let issue = ExportIssue(path: target.path, reason: reason)
        lock.withLock {
            missedKeys.insert(target.key)
            result.skipped.append(issue)
        }
        events?(ExportEvent(action: "skipped", path: target.path, detail: issue.reason))
    }

    private func move(from: String, to target: ExportTarget, events: (@Sendable (ExportEvent) -> Void)?)
        throws(ExportFileSystem.Failure)
    {
        guard let entry = manifest.files[from], ExportFileSystem.fact(absolute(from)) == .file(size: entry.size),
            ExportFileSystem.fact(absolute(target.path)) == .missing
        else {
            try stopIfGone()
            skip(target, reason: "not moved from \(from): one of the two changed meanwhile", events: events)
            return
        }
        let final = absolute(target.path)
        let folder = PathText.parent(of: final)
        try stopIfGone()
        try ExportFileSystem.makeFolders(folder, below: destination)
        try append(ExportManifest.JournalLine(op: "put", path: target.path, entry: entry))
        guard rename(absolute(from), final) == 0 else {
            throw ExportFileSystem.Failure(number: errno, what: "cannot move \(from) to \(target.path)")
        }
        try append(ExportManifest.JournalLine(op: "del", path: from))
        manifest.files[from] = nil
        manifest.files[target.path] = entry
        writtenFolders.insert(folder)
        foldersToPrune.insert(PathText.parent(of: absolute(from)))
        result.moved.append(target.path)
        events?(ExportEvent(action: "moved", path: target.path, detail: "from \(from)"))
    }

    private func delete(_ path: String, reason: String, events: (@Sendable (ExportEvent) -> Void)?)
        throws(ExportFileSystem.Failure)
    {
        guard let entry = manifest.files[path], ExportFileSystem.fact(absolute(path)) == .file(size: entry.size) else {
            try stopIfGone()
            manifest.files[path] = nil
            return
        }
        // The old name of a renamed file goes only once the new name holds it: a copy to the new name that was
        // skipped or failed in this run keeps the old one.
        if reason == ExportPlanner.renamedReason && lock.withLock({ missedKeys.contains(entry.key) }) { return }
        guard unlink(absolute(path)) == 0 else {
            throw ExportFileSystem.Failure(number: errno, what: "cannot delete \(path)")
        }
        manifest.files[path] = nil
        try append(ExportManifest.JournalLine(op: "del", path: path))
        foldersToPrune.insert(PathText.parent(of: absolute(path)))
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
                current = PathText.parent(of: current)
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
        try appendJournal(ExportManifest.journalText(line))
    }

    /// Whole journal lines in one `write(2)` to the `O_APPEND` journal.
    private func appendJournal(_ data: [UInt8]) throws(ExportFileSystem.Failure) {
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
        // The destination went away: there is nowhere to write the manifest, and the journal went with it.
        if stoppedAsGone {
            if journal >= 0 {
                close(journal)
                journal = -1
            }
            return
        }
        // One flush of everything written (Swift's Glibc has no syncfs; an fsync per file costs a journal commit
        // each on ext4), before the manifest records the files as exported.
        // The manifest is rendered while the flush waits on the disk.
        let manifest = self.manifest
        let rendered: [UInt8]
        if wroteBytes || !writtenFolders.isEmpty {
            rendered = (try? Parallel.both({ sync() }, { manifest.rendered() }).1) ?? manifest.rendered()
        } else {
            rendered = manifest.rendered()
        }
        if journal >= 0 { _ = fsync(journal) }
        do {
            try ExportExecutor.save(rendered: rendered, destination: destination)
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
        try save(rendered: manifest.rendered(), destination: destination)
    }

    /// Writes a rendered manifest atomically.
    static func save(rendered: [UInt8], destination: String) throws {
        let data = Data(rendered)
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
    /// A copy of a mirror's file (not a playlist): what the workers do in parallel.
    var isFileCopy: Bool {
        if case .copy(let target, _) = self, !target.isPlaylist { return true }
        return false
    }

    /// The destination path the step is about.
    public var path: String {
        switch self {
        case .copy(let target, _): return target.path
        case .move(_, let target): return target.path
        case .delete(let path, _): return path
        }
    }
}

/// `sync(2)` on a thread of its own whenever asked while an export copies (asks that come during a flush make one
/// more): the bytes and inodes written so far reach the disk while the workers go on, instead of all at the end.
/// The export still ends with its own flush before the manifest names anything as exported.
private final class EarlyFlush: @unchecked Sendable {
    private let condition = NSCondition()
    private var asked = false
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init() {
        Thread { [self] in
            while true {
                condition.lock()
                while !asked && !stopping { condition.wait() }
                let flush = asked && !stopping
                asked = false
                condition.unlock()
                guard flush else { break }
                sync()
            }
            finished.signal()
        }.start()
    }

    func ask() {
        condition.lock()
        asked = true
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once a flush under way has finished.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        finished.wait()
    }
}
