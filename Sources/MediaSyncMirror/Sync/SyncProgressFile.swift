import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// Where a sync stands, as every sync keeps it in `.mediasync/sync-progress.json` (``SyncProgressFile``): so that
/// `serve`'s page shows a sync started anywhere (by the page, the CLI or the timer) as it runs, and how the last one
/// ended.
public struct SyncProgressState: Codable, Sendable, Equatable {
    /// A file or a source that failed, and why.
    public struct FailedItem: Codable, Sendable, Equatable {
        public var name: String
        public var reason: String

        public init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }
    }

    /// Whether the sync is running now.
    public var running: Bool
    /// The process that runs it.
    public var pid: Int32
    /// `preparing` (listing, planning), `downloading`, `finishing` (metadata, records) or `done`.
    public var phase: String
    public var startedAt: String
    public var updatedAt: String
    public var finishedAt: String?
    /// Files of the download batch finished (succeeded or failed) and in it.
    public var filesDone: Int
    public var filesTotal: Int
    /// Bytes of the batch on disk, and its known size.
    public var bytesDone: Int64
    public var bytesTotal: Int64
    public var bytesPerSecond: Double
    /// 0–100, never decreasing within a batch.
    public var percent: Int
    /// Once ended: `ok`, `partial` (some items failed) or `failed` (the sync stopped), or `interrupted` (its process
    /// ended without saying how).
    public var outcome: String?
    /// Why a sync stopped (`failed`).
    public var message: String?
    /// Files downloaded, once ended.
    public var downloaded: Int
    public var failed: [FailedItem]

    public init(pid: Int32, startedAt: String) {
        running = true
        self.pid = pid
        phase = "preparing"
        self.startedAt = startedAt
        updatedAt = startedAt
        filesDone = 0
        filesTotal = 0
        bytesDone = 0
        bytesTotal = 0
        bytesPerSecond = 0
        percent = 0
        downloaded = 0
        failed = []
    }
}

/// The progress file: written by the sync that runs (replaced atomically, at most four times a second), read by
/// anyone.
public enum SyncProgressFile {
    /// `.mediasync/sync-progress.json` under the root.
    public static func path(_ root: MirrorRoot) -> String { root.stateDirectory + "/sync-progress.json" }

    /// The last state written, nil when no sync has written one (or it is not readable). A state that says running
    /// whose process is gone is answered as ended, `interrupted`.
    public static func read(_ root: MirrorRoot) -> SyncProgressState? {
        guard let data = FileManager.default.contents(atPath: path(root)),
            var state = try? JSONDecoder().decode(SyncProgressState.self, from: data)
        else { return nil }
        if state.running, state.pid > 0, kill(state.pid, 0) != 0, errno == ESRCH {
            state.running = false
            state.phase = "done"
            state.outcome = "interrupted"
            state.finishedAt = state.finishedAt ?? state.updatedAt
        }
        return state
    }

    /// Records a sync that could not start, with why.
    public static func recordFailure(_ root: MirrorRoot, _ message: String) {
        let time = WholeSecondTime.string(Date())
        var state = SyncProgressState(pid: getpid(), startedAt: time)
        state.running = false
        state.phase = "done"
        state.outcome = "failed"
        state.message = message
        state.finishedAt = time
        write(state, root: root)
    }

    /// Replaces the file with `state` (a temporary file renamed over it: a reader sees the old state or the new).
    static func write(_ state: SyncProgressState, root: MirrorRoot) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(state) else { return }
        let final = path(root)
        let temporary = final + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: data) else { return }
        if rename(temporary, final) != 0 { unlink(temporary) }
    }
}

/// Keeps the progress file of one sync.
final class SyncProgressRecorder: Sendable {
    private struct Current {
        var state: SyncProgressState
        var written: ContinuousClock.Instant?
    }

    /// The shortest time between two writes while downloading.
    static let interval: Duration = .milliseconds(250)

    private let root: MirrorRoot
    private let now: @Sendable () -> Date
    private let current: Locked<Current>

    init(root: MirrorRoot, now: @escaping @Sendable () -> Date) {
        self.root = root
        self.now = now
        let state = SyncProgressState(pid: getpid(), startedAt: WholeSecondTime.string(now()))
        current = Locked(Current(state: state, written: nil))
        write(force: true) { _ in }
    }

    /// A download batch's progress.
    func record(_ progress: BatchProgress) {
        write(force: progress.isFinished) { state in
            state.phase = progress.isFinished ? "finishing" : "downloading"
            state.filesTotal = progress.totalItems
            state.filesDone = progress.succeededItems + progress.failedItems
            state.bytesDone = progress.bytesDone
            state.bytesTotal = progress.bytesExpected
            state.bytesPerSecond = progress.bytesPerSecond
            state.percent = max(0, min(100, Int((progress.fraction * 100).rounded(.down))))
        }
    }

    /// The sync ended with `report`.
    func finish(_ report: SyncReport) {
        write(force: true) { state in
            state.failed =
                report.failed.map { SyncProgressState.FailedItem(name: $0.path, reason: $0.message) }
                + report.sourceErrors.map { SyncProgressState.FailedItem(name: "source", reason: $0) }
            state.outcome = state.failed.isEmpty ? "ok" : "partial"
            state.downloaded = report.downloaded.count
            self.end(&state)
        }
    }

    /// The sync stopped with `error`.
    func finish(_ error: any Error) {
        write(force: true) { state in
            state.outcome = "failed"
            state.message = String(describing: error)
            self.end(&state)
        }
    }

    private func end(_ state: inout SyncProgressState) {
        state.running = false
        state.phase = "done"
        state.finishedAt = WholeSecondTime.string(now())
    }

    private func write(force: Bool, _ change: (inout SyncProgressState) -> Void) {
        let clock = ContinuousClock.now
        let due: SyncProgressState? = current.withLock { current in
            change(&current.state)
            if !force, let written = current.written, clock - written < SyncProgressRecorder.interval { return nil }
            current.written = clock
            current.state.updatedAt = WholeSecondTime.string(now())
            return current.state
        }
        if let due { SyncProgressFile.write(due, root: root) }
    }
}

extension MirrorSync {
    /// Runs one sync (see ``runUnrecorded(options:only:progress:events:)``), keeping the progress file as it goes
    /// (a dry run changes nothing, not even that file).
    /// - Parameters:
    ///   - options: `delete` removes files nothing wants any more.
    ///   - only: restricts the run to Jellyfin selections or podcasts.
    ///   - progress: the batch's aggregate download progress.
    ///   - events: one call per file fetched, written, moved, deleted or failed, as it happens.
    /// - Throws: ``SyncError`` (not signed in when only media was asked for, not enough space, unsafe paths).
    ///   Failures of single files and of single sources do not throw: they are in the report.
    public func run(
        options: SyncOptions = SyncOptions(), only: Scope? = nil, progress: (@Sendable (BatchProgress) -> Void)? = nil,
        events: (@Sendable (SyncEvent) -> Void)? = nil
    ) async throws -> SyncReport {
        guard !options.dryRun else {
            return try await runUnrecorded(options: options, only: only, progress: progress, events: events)
        }
        let recorder = SyncProgressRecorder(root: root, now: now)
        let recording: @Sendable (BatchProgress) -> Void = { update in
            recorder.record(update)
            progress?(update)
        }
        do {
            let report = try await runUnrecorded(options: options, only: only, progress: recording, events: events)
            recorder.finish(report)
            return report
        } catch {
            recorder.finish(error)
            throw error
        }
    }
}
