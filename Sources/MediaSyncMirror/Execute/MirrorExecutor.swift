import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The one place that changes a mirror: every write, move and deletion under the root, and every index record that
/// goes with it, is made here (sync, `rm`, `gc`, `reindex`, legacy migration, staging cleanup). The transfer engine
/// fetches into staging and places a finished download at its path; the record of it comes here.
///
/// **Grouped index commits.** A SQLite commit per placed file was most of the system calls of a first sync. Records
/// wait here and are committed together: ``flushEvery`` records, or ``defaultFlushInterval`` after the first waiting one (a
/// timer commits them even when no further file is placed, so records do not wait on a long download), and at
/// ``flush()``. Crash safety stays: each waiting record is first appended to a journal
/// (`.mediasync/placed.journal`, one line, one `pwrite(2)` into room taken ahead, so that a disk filling up does not
/// keep a file just placed out of it), and ``recoverJournal()`` — run when a mirror is opened
/// under its lock — records the journal's files that are on disk with the recorded size. A run killed between
/// placing a file and committing its record therefore adopts the file at the next start instead of fetching it again.
/// A line cut short by the kill is ignored (its file is fetched again, never recorded half).
///
/// **The destructive gate.** Deletions are applied only through ``delete(_:gate:)``, which applies the
/// `--delete` / `--max-delete` rule to the whole batch before the first file goes.
public final class MirrorExecutor: @unchecked Sendable {
    public let root: MirrorRoot
    let index: MirrorIndex
    let files: FilePlacer
    /// Records waiting for one grouped commit.
    public static let flushEvery = 1024
    /// The longest a record waits for its commit.
    public static let defaultFlushInterval: TimeInterval = 0.25
    let flushInterval: TimeInterval

    private let mutex = NSLock()
    /// Held for a commit of the waiting records: one at a time, in order (`mutex` only to take them).
    private let committer = NSLock()
    /// A commit of the group that came due was started and has not yet taken it.
    private var committing = false
    private var pending: [IndexEntry] = []
    private var pendingSince: Date?
    private var journal: Int32 = -1
    /// Where the journal's next line goes, and how far its room is taken (``journalRoom`` at a time).
    private var journalEnd: Int64 = 0
    private var journalTaken: Int64 = 0
    private var keepingJournalRoom = false
    /// About 200 lines: the files still placed once the disk is full are those already on their way. Small, because a
    /// file system without `fallocate` (ZFS) has it written out block by block, each time the journal is emptied.
    static let journalRoom: Int64 = 64 << 10
    private var timestamp: (date: Date, text: String)?
    private var taskIds = TaskIdGenerator()
    /// The root's lock, when the mirror was opened for changes: held as long as anything can still change it.
    let lock: RootLock?

    init(
        root: MirrorRoot, index: MirrorIndex, durable: Bool, lock: RootLock? = nil,
        flushInterval: TimeInterval = MirrorExecutor.defaultFlushInterval
    ) {
        self.flushInterval = flushInterval
        self.root = root
        self.index = index
        self.files = FilePlacer(root: root, durable: durable)
        self.lock = lock
    }

    deinit {
        if journal >= 0 { close(journal) }
    }

    var journalPath: String { root.stateDirectory + "/placed.journal" }

    // MARK: Records

    /// Stores what a sync's listings learned, for the next sync to start from: each podcast's feed state (validators,
    /// a move, the check's time and error, the parsed feed) and the media sources of items listed anew. A sync does
    /// this once its plan is made, so a dry run (the plan printed) stores none of it.
    func saveListingState(feeds: [PodcastSource.FeedUpdate], mediaSources: [String: MediaSourceCache.Entry]) throws {
        for update in feeds { try index.save(update.subscription, feed: update.feed) }
        try index.saveMediaSources(mediaSources)
    }

    /// Keeps what a complete sync asked the server and was answered (see ``ListingMemo``), once every record of the
    /// run is committed (a record committed later would make the index forget it at once).
    func saveListingMemo(_ memo: ListingMemo) throws {
        try flush()
        try index.saveListingMemo(memo)
    }

    /// Keeps what the export reads of the metadata files just written (see ``MirrorIndex/MetadataFacts``), once their
    /// records are committed (the rows of paths no record names are forgotten as they are saved).
    func saveMetadataFacts(_ facts: [MirrorIndex.MetadataFacts], markFilled: Bool) throws {
        try flush()
        try index.saveMetadataFacts(facts, markFilled: markFilled)
    }

    /// Records a file placed under the root (by the transfer engine, or found where the index lost it). The record
    /// is committed with the next group; until then it is in the journal.
    ///
    /// A group that is due is committed on a thread of its own: the caller (the transfer engine's thread, where
    /// every transfer waits while it runs) never waits for a commit, only for the lock that takes the group.
    func record(_ entry: IndexEntry) throws {
        let commitNow = try mutex.withLock { () throws -> Bool in
            try appendToJournal(entry)
            pending.append(entry)
            if pendingSince == nil {
                pendingSince = Date()
                // Commits the group once it is old enough, placed files or not. A failure here (a full disk) leaves
                // the records waiting, in the journal too; the next commit, or the next run, records them.
                DispatchQueue.global().asyncAfter(deadline: .now() + flushInterval) { [weak self] in
                    try? self?.flush()
                }
            }
            guard !committing,
                pending.count >= MirrorExecutor.flushEvery
                    || Date().timeIntervalSince(pendingSince ?? Date()) >= flushInterval
            else { return false }
            committing = true
            return true
        }
        if commitNow {
            // A failure leaves the group waiting, as the timer's does.
            DispatchQueue.global().async { try? self.flush() }
        }
    }

    /// Commits the waiting records in one transaction (after a commit already under way) and empties the journal
    /// when nothing waits any more.
    public func flush() throws {
        try committer.withLock { try commitWaiting() }
    }

    /// Takes the waiting records and commits them; on failure they wait again, ahead of any recorded meanwhile.
    /// Call with `committer` held.
    private func commitWaiting() throws {
        let group = mutex.withLock { () -> [IndexEntry] in
            let group = pending
            pending = []
            pendingSince = nil
            committing = false
            return group
        }
        guard !group.isEmpty else { return }
        do {
            try index.record(group)
        } catch {
            mutex.withLock {
                pending = group + pending
                pendingSince = pendingSince ?? Date()
            }
            throw error
        }
        // The journal keeps the lines of records still waiting (recorded while this group was committed).
        mutex.withLock {
            if pending.isEmpty { emptyJournal() }
        }
    }

    private func openJournal() throws {
        guard journal < 0 else { return }
        journal = open(journalPath, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard journal >= 0 else { throw SyncError.fileSystem("cannot open \(journalPath)", errno) }
        // Lines a killed run left (not recovered yet) stay; a line it cut short, and the room it took, are written
        // over.
        let existing = FileBytes.read(journalPath, followLinks: false) ?? []
        journalEnd = Int64(PlacedJournal.endOfLines(in: existing))
        journalTaken = Int64(existing.count)
    }

    /// Takes room for the journal's next lines (``journalRoom``) while the disk has some, and again each time the
    /// journal is emptied, until ``releaseJournalRoom()``: once the disk is full, a file just placed is still
    /// journaled (and so recorded), never left on disk with no record.
    func keepJournalRoom() {
        mutex.withLock {
            keepingJournalRoom = true
            takeJournalRoom()
        }
    }

    /// Gives the room back once nothing waits (the end of a sync).
    func releaseJournalRoom() {
        mutex.withLock {
            keepingJournalRoom = false
            if pending.isEmpty { emptyJournal() }
        }
    }

    private func takeJournalRoom() {
        guard (try? openJournal()) != nil, journalTaken < journalEnd + MirrorExecutor.journalRoom / 2,
            posix_fallocate(journal, off_t(journalEnd), off_t(MirrorExecutor.journalRoom)) == 0
        else { return }
        journalTaken = journalEnd + MirrorExecutor.journalRoom
    }

    private func appendToJournal(_ entry: IndexEntry) throws {
        try openJournal()
        let line = PlacedJournal.bytes(for: entry)
        if keepingJournalRoom { takeJournalRoom() }
        let written = line.withUnsafeBytes { Glibc.pwrite(journal, $0.baseAddress, $0.count, off_t(journalEnd)) }
        guard written == line.count else {
            throw SyncError.fileSystem("cannot write \(journalPath)", written < 0 ? errno : EIO)
        }
        journalEnd += Int64(line.count)
    }

    /// Records the journal's files that a killed run placed but did not commit: those on disk at the recorded path
    /// with the recorded size. Call under the root's lock, before anything is planned.
    /// - Returns: how many were recorded.
    @discardableResult
    public func recoverJournal() throws -> Int {
        try recover { self.journaledFiles() }
    }

    /// Records the journal's files a sync's survey found (``SyncPreparation/journaled``), as ``recoverJournal()``
    /// does.
    func recoverJournal(_ journaled: [IndexEntry]) throws {
        _ = try recover { journaled }
    }

    /// Commits what waits, then records `adopted` (read once that is done) and empties the journal.
    private func recover(_ adopted: () -> [IndexEntry]) throws -> Int {
        try committer.withLock {
            try commitWaiting()
            return try mutex.withLock { try adoptLocked(adopted()) }
        }
    }

    private func adoptLocked(_ adopted: [IndexEntry]) throws -> Int {
        if !adopted.isEmpty { try index.record(adopted) }
        if journal >= 0 {
            emptyJournal()
        } else {
            unlink(journalPath)
        }
        return adopted.count
    }

    /// Empties the journal, and takes its room again while it is kept (``keepJournalRoom()``).
    private func emptyJournal() {
        guard journal >= 0 else { return }
        _ = ftruncate(journal, 0)
        journalEnd = 0
        journalTaken = 0
        if keepingJournalRoom { takeJournalRoom() }
    }

    /// The journal's records whose files are on disk with the recorded size: what ``recoverJournal()`` records, and
    /// what a sync's survey finds (``SyncPreparation``).
    func journaledFiles() -> [IndexEntry] {
        guard let data = FileBytes.read(journalPath, followLinks: false), !data.isEmpty else { return [] }
        let entries = PlacedJournal.entries(in: data)
        let sizes = files.sizes(of: entries.map(\.file.path))
        return entries.filter { sizes[$0.file.path] == $0.file.size }
    }

    // MARK: Changes

    /// Writes a metadata file (atomically: a temporary in staging renamed over the path) and records it.
    func write(_ bytes: [UInt8], as entry: IndexEntry) throws {
        try files.write(bytes, to: entry.file.path)
        try record(entry)
    }

    /// Writes a file under the root that the index does not track (legacy migration's metadata before reindexing).
    func writeUntracked(_ bytes: [UInt8], to path: String) throws {
        try files.write(bytes, to: path)
    }

    /// Renames a file under the root and records it at its new path.
    func move(_ from: String, as entry: IndexEntry) throws {
        try files.move(from, to: entry.file.path)
        try record(entry)
    }

    /// Makes the folders of files about to be placed, each once (see ``FilePlacer/makeFolders(for:)``); returns the
    /// absolute paths made or found, for the transfer engine not to make them again.
    func makeFolders(for paths: [String]) -> Set<String> {
        files.makeFolders(for: paths)
    }

    /// Names a download the transfer engine completed, at `path` (its planned path, or that path with the extension
    /// its Content-Type calls for); the caller records it once named. Returns the path.
    func placeDownload(_ completed: CompletedFile, at path: String) throws -> String {
        try files.placeDownload(completed, at: path)
    }

    /// Renames a file under the root that the index does not track yet (legacy migration).
    func moveUntracked(_ from: String, to path: String) throws {
        try files.move(from, to: path)
    }

    /// Removes the file a replaced download left at its older path (its record is replaced by the new one's).
    func removeReplaced(_ path: String) throws {
        try files.remove(path)
    }

    /// One file to delete: its path and its index key (nil for a file the index does not know, as `gc` finds).
    public struct Deletion: Sendable, Equatable {
        public var path: String
        public var key: FileKey?
        /// Played cleanup (`--delete-played`): allowed without `--delete`, still counted by `--max-delete`.
        public var playedCleanup: Bool
        public init(path: String, key: FileKey?, playedCleanup: Bool = false) {
            self.path = path
            self.key = key
            self.playedCleanup = playedCleanup
        }
    }

    /// The one destructive gate: whether deletions may happen at all, and how many at most.
    public struct DeletionGate: Sendable, Equatable {
        /// `--delete` given (or an explicit command such as `rm` and `gc`).
        public var allowed: Bool
        /// `--max-delete`: no deletion at all when more would go.
        public var maxCount: Int?
        public init(allowed: Bool, maxCount: Int? = nil) {
            self.allowed = allowed
            self.maxCount = maxCount
        }

        /// What the gate decides for a batch: nil to go ahead, else why nothing is deleted. Without `--delete` only a
        /// batch of played cleanup goes.
        public func refusal(_ batch: [Deletion]) -> String? {
            guard allowed || batch.allSatisfy(\.playedCleanup) else { return "" }
            if let maxCount, batch.count > maxCount {
                return "\(batch.count) files would be deleted, more than --max-delete \(maxCount): none was"
            }
            return nil
        }
    }

    /// What ``delete(_:gate:)`` did.
    public struct DeletionOutcome: Sendable {
        public var deleted: [String] = []
        public var failed: [(path: String, message: String)] = []
        /// Why nothing was deleted (the gate refused the batch); nil when the batch went ahead.
        public var refused: String?
    }

    /// Deletes a batch of files (never a folder, never through a symbolic link out of the root), forgetting each
    /// from the index once it is gone, after the gate allowed the whole batch.
    func delete(_ batch: [Deletion], gate: DeletionGate, deleted: ((String) -> Void)? = nil) throws
        -> DeletionOutcome
    {
        var outcome = DeletionOutcome()
        guard !batch.isEmpty else { return outcome }
        if let refusal = gate.refusal(batch) {
            outcome.refused = refusal
            return outcome
        }
        try flush()
        var forgotten: [FileKey] = []
        for item in batch {
            do {
                if item.path.hasPrefix(".mediasync/") {
                    try files.removeStateFile(item.path)
                } else {
                    try files.remove(item.path)
                }
            } catch {
                outcome.failed.append((item.path, "\(error)"))
                continue
            }
            if let key = item.key { forgotten.append(key) }
            outcome.deleted.append(item.path)
            deleted?(item.path)
        }
        try index.forget(keys: forgotten)
        return outcome
    }

    /// Forgets index records whose files are gone (`verify --fix`).
    func forget(keys: [FileKey]) throws {
        try flush()
        try index.forget(keys: keys)
    }

    /// Removes what a killed run left in staging that no later run would use (see
    /// ``MirrorRoot/staleTemporaries()``).
    @discardableResult
    func removeStaleTemporaries() -> [String] {
        removeStaleTemporaries(root.staleTemporaries())
    }

    /// Removes these stale temporaries (names in the staging folder); returns those removed.
    @discardableResult
    func removeStaleTemporaries(_ names: [String]) -> [String] {
        names.filter { unlink(root.stagingDirectory + "/" + $0) == 0 }
    }

    /// What ``prepare(_:)`` did.
    struct Prepared {
        var repair = MirrorIndex.PathRepair()
        /// One line per migrated or skipped legacy item.
        var migrated: [String] = []
    }

    /// Makes a sync's preparation, surveyed before (see ``SyncPreparation``), in its order: the stale temporaries
    /// removed, the journal's files recorded, the stored paths repaired or forgotten, the legacy layout migrated.
    func prepare(_ preparation: SyncPreparation) throws -> Prepared {
        removeStaleTemporaries(preparation.staleTemporaries)
        try recoverJournal(preparation.journaled)
        var prepared = Prepared()
        prepared.repair = try index.apply(preparation.pathRepairs)
        prepared.migrated = try Reindexer(executor: self).migrateLegacyLayout(preparation.legacy)
        return prepared
    }

    /// Removes an emptied legacy folder tree (Swiftfin's legacy `Metadata/` after migration).
    func removeLegacyFolder(_ relative: String) {
        guard let path = root.absolute(relative) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Removes a folder under the root if it is empty.
    func removeEmptyFolder(_ relative: String) {
        guard let path = root.absolute(relative) else { return }
        rmdir(path)
    }

    // MARK: Values for records

    /// Now, ISO 8601 (formatted once per second of the run, not once per file).
    func timestampNow(_ now: Date) -> String {
        mutex.withLock {
            if let timestamp, abs(timestamp.date.timeIntervalSince(now)) < 1 { return timestamp.text }
            let text = ISO8601DateFormatter().string(from: now)
            timestamp = (now, text)
            return text
        }
    }

    /// A new download task id (a random UUID, lower case, as Swiftfin's `taskId`), without a system call per id.
    func newTaskId() -> String {
        mutex.withLock { taskIds.next() }
    }
}

/// Random version 4 UUIDs from a generator seeded once by the system (SplitMix64): a UUID per placed file without
/// opening `/dev/urandom` each time.
struct TaskIdGenerator {
    private var generator: SplitMix64

    init() {
        var system = SystemRandomNumberGenerator()
        generator = SplitMix64(seed: system.next())
    }

    mutating func next() -> String {
        let high = generator.next()
        let low = generator.next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index)))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        // 8-4-4-4-12 lowercase hex digits, written straight into one buffer.
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
