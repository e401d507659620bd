import Foundation
import MediaSyncCore
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// The executor's grouped index commits and their journal: a file placed but not yet committed is adopted by the next
/// opening of the mirror, never lost and never recorded half.
struct MirrorExecutorTests {
    static func entry(_ name: String, size: Int64, key: String? = nil, itemId: String? = nil) -> IndexEntry {
        IndexEntry(
            file: LocalFile(
                key: FileKey(rawValue: key ?? "media:\(name)"), path: "Downloads/\(name)", kind: .media, size: size,
                signature: "sig\t\\1",
                itemId: itemId ?? name),
            versionId: name, mediaSourceId: nil, container: "mkv", downloadedAt: "2026-11-23T00:00:00Z",
            taskId: "task-\(name)", validator: "\"v1\"", contentHash: nil)
    }

    static func place(_ root: MirrorRoot, _ entry: IndexEntry) throws {
        try FileManager.default.createDirectory(atPath: root.path + "/Downloads", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: root.path + "/" + entry.file.path, contents: Data(repeating: 7, count: Int(entry.file.size))))
    }

    /// Records read for planning share equal ids, but never ids that are only canonically equivalent (NFC and NFD
    /// of the same letters are equal under Swift's `==`): each keeps its own bytes.
    @Test func planningRecordsKeepEquivalentIdsApart() async throws {
        try await TemporaryDirectory.with { folder in
            let index = try MirrorIndex(path: folder.file("index.sqlite"))
            let ids = ["0123456789abcdef-caf\u{E9}", "0123456789abcdef-cafe\u{301}"]
            try index.record(ids.enumerated().map { Self.entry("item\($0)", size: 1, itemId: $1) })
            let read = try index.entries(forPlanning: true).map { Array($0.file.itemId.utf8) }
            #expect(read == ids.map { Array($0.utf8) })
        }
    }

    @Test func aJournalLineRoundTripsEveryField() throws {
        var original = Self.entry("a", size: 12)
        original.mediaSourceId = "line\nbreak"
        let line = PlacedJournal.line(for: original)
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false)
        #expect(PlacedJournal.entry(String(line.dropLast())) == original)
    }

    @Test func aCutOrDamagedJournalLineIsIgnored() {
        let whole =
            PlacedJournal.line(for: Self.entry("a", size: 1)) + PlacedJournal.line(for: Self.entry("b", size: 2))
        let cut = String(whole.dropLast(7))
        #expect(PlacedJournal.entries(in: Array(cut.utf8)).map(\.file.itemId) == ["a"])
        #expect(PlacedJournal.entries(in: Array("p1\tgarbage\tend\n".utf8)).isEmpty)
    }

    /// A disk that fills while files are placed: with the journal's room kept, a file placed after that is still
    /// journaled (so it is recorded, now or by the next run), never left on disk without a record; without the room
    /// its record fails. Needs root to mount a small tmpfs.
    @Test(.enabled(if: SmallTmpfs.canMount, "needs root to mount a small tmpfs"), arguments: [true, false])
    func aFilePlacedOnAFullDiskIsStillJournaled(keepingRoom: Bool) throws {
        let disk = try #require(SmallTmpfs(bytes: 4 << 20))
        defer { disk.unmount() }
        let root = MirrorRoot(path: disk.path + "/mirror")
        try root.prepare()
        let executor = MirrorExecutor(
            root: root, index: try MirrorIndex(path: root.indexPath), durable: false, flushInterval: 86_400)
        let placed = Self.entry("placed", size: 5)
        try Self.place(root, placed)
        if keepingRoom { executor.keepJournalRoom() }
        // Another writer takes every free byte.
        let filler = open(disk.path + "/filler", O_WRONLY | O_CREAT, 0o644)
        defer { close(filler) }
        var chunk = 1 << 20
        var offset: off_t = 0
        while chunk >= 512 {
            if posix_fallocate(filler, offset, off_t(chunk)) == 0 { offset += off_t(chunk) } else { chunk /= 2 }
        }
        if keepingRoom {
            try executor.record(placed)
            let journal = FileManager.default.contents(atPath: executor.journalPath).map { [UInt8]($0) } ?? []
            #expect(PlacedJournal.entries(in: journal) == [placed])
        } else {
            #expect(throws: SyncError.self) { try executor.record(placed) }
        }
    }

    @Test(arguments: [
        ("", 0), ("a\n", 2), ("a\nb", 2), ("a\nb\n\0\0\0", 4), ("cut", 0), ("a\n\0\0", 2),
    ])
    func theJournalsLinesEndAfterItsLastNewline(text: String, end: Int) {
        #expect(PlacedJournal.endOfLines(in: Array(text.utf8)) == end)
    }

    @Test func recordsWaitingForTheirCommitAreAdoptedByTheNextOpening() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let root = MirrorRoot(path: folder.path)
        try root.prepare()
        let placed = Self.entry("placed", size: 5)
        let resized = Self.entry("resized", size: 9)
        let gone = Self.entry("gone", size: 3)
        do {
            // A run that places three files and is "killed" before its group is committed: the executor is dropped
            // without flush() and its records are only in the journal.
            // (No timer commit during the test: its interval is a day.)
            let executor = MirrorExecutor(
                root: root, index: try MirrorIndex(path: root.indexPath), durable: false, flushInterval: 86_400)
            for entry in [placed, resized, gone] {
                try Self.place(root, entry)
                try executor.record(entry)
            }
            #expect(try executor.index.entries().isEmpty)
        }
        // Meanwhile one file changed size and one disappeared: only the file as recorded is adopted.
        #expect(FileManager.default.createFile(atPath: root.path + "/" + resized.file.path, contents: Data([1])))
        try FileManager.default.removeItem(atPath: root.path + "/" + gone.file.path)
        let mirror = try Mirror.open(root, durable: false)
        #expect(try mirror.index.entries() == [placed])
        #expect(FileManager.default.contents(atPath: root.path + "/.mediasync/placed.journal")?.isEmpty != false)
    }

    /// A run killed after placing a file and journaling it, before the group commit: a dry run plans nothing for it
    /// and leaves the journal alone; the real run records it and fetches nothing.
    @Test func aJournaledFileIsHeldForTheDryRunAndRecordedByTheRealRun() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try fixture.select(.movie, movie.id)
            _ = try await fixture.sync()
            let media = try #require(try fixture.index.entries().first { $0.file.kind == .media })
            try fixture.index.forget(key: media.file.key)
            let journal = fixture.root.stateDirectory + "/placed.journal"
            #expect(
                FileManager.default.createFile(atPath: journal, contents: Data(PlacedJournal.line(for: media).utf8)))
            let downloadsBefore = fixture.server.requests(to: "/Items/\(movie.mediaSources[0].id)/Download").count

            let plan = try await fixture.sync(SyncOptions(dryRun: true))
            #expect(!plan.planned.contains { $0.path == media.file.path }, "\(plan.planned)")
            #expect(FileManager.default.contents(atPath: journal)?.isEmpty == false)
            #expect(try fixture.index.entries().contains { $0.file.key == media.file.key } == false)

            let real = try await fixture.sync()
            #expect(real.downloaded.isEmpty && real.failed.isEmpty, "\(real.downloaded) \(real.failed)")
            #expect(try fixture.index.entries().contains { $0.file.key == media.file.key })
            #expect(
                fixture.server.requests(to: "/Items/\(movie.mediaSources[0].id)/Download").count == downloadsBefore)
        }
    }

    @Test func aFlushCommitsTheGroupAndEmptiesTheJournal() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let root = MirrorRoot(path: folder.path)
        let mirror = try Mirror.open(root, durable: false)
        let entries = (0..<5).map { Self.entry("f\($0)", size: Int64($0 + 1)) }
        for entry in entries {
            try Self.place(root, entry)
            try mirror.executor.record(entry)
        }
        try mirror.flush()
        #expect(try mirror.index.entries() == entries)
        #expect(FileManager.default.contents(atPath: root.path + "/.mediasync/placed.journal")?.isEmpty == true)
    }

    /// The destructive gate, as a table: (allowed, max, batch size, played cleanup in it) → refused or not.
    /// Without `--delete` only a batch of played cleanup goes; `--max-delete` counts every deletion.
    @Test(
        arguments: [
            (true, nil, 10, 0, false), (true, 10, 10, 0, false), (true, 9, 10, 0, true), (false, nil, 1, 0, true),
            (true, 0, 1, 0, true), (true, 0, 0, 0, false), (false, nil, 3, 3, false), (false, nil, 3, 2, true),
            (false, 2, 3, 3, true), (true, 3, 3, 1, false),
        ] as [(Bool, Int?, Int, Int, Bool)])
    func theGateDecidesForTheWholeBatch(allowed: Bool, max: Int?, count: Int, played: Int, refused: Bool) {
        let gate = MirrorExecutor.DeletionGate(allowed: allowed, maxCount: max)
        let batch = (0..<count).map {
            MirrorExecutor.Deletion(path: "f\($0)", key: nil, playedCleanup: $0 < played)
        }
        #expect((gate.refusal(batch) != nil) == refused)
    }

    @Test func aRefusedBatchDeletesNothing() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let root = MirrorRoot(path: folder.path)
        let mirror = try Mirror.open(root, durable: false)
        let entries = (0..<3).map { Self.entry("d\($0)", size: 2) }
        for entry in entries {
            try Self.place(root, entry)
            try mirror.executor.record(entry)
        }
        try mirror.flush()
        let batch = entries.map { MirrorExecutor.Deletion(path: $0.file.path, key: $0.file.key) }
        let refused = try mirror.executor.delete(batch, gate: .init(allowed: true, maxCount: 2))
        #expect(refused.refused?.contains("more than --max-delete 2") == true)
        #expect(refused.deleted.isEmpty)
        #expect(try mirror.index.entries().count == 3)
        #expect(entries.allSatisfy { FileManager.default.fileExists(atPath: root.path + "/" + $0.file.path) })
        let done = try mirror.executor.delete(batch, gate: .init(allowed: true, maxCount: 3))
        #expect(done.deleted == batch.map(\.path))
        #expect(try mirror.index.entries().isEmpty)
    }

    @Test func taskIdsAreDistinctVersion4UUIDs() {
        var generator = TaskIdGenerator()
        let ids = (0..<1000).map { _ in generator.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { UUID(uuidString: $0) != nil && $0 == $0.lowercased() && Array($0)[14] == "4" })
    }
}

@Suite struct FileSizesTests {
    /// Sizes are read folder by folder: files in several folders, at the root, in a folder that is not there, a
    /// symlink (not a regular file) and a path that leads out of the root are all told apart.
    @Test func sizesAreReadFolderByFolderAndOnlyForRegularFilesInside() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mediasync-sizes-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = MirrorRoot(path: folder + "/root")
        try FileManager.default.createDirectory(atPath: root.path + "/Downloads/a", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.path + "/Downloads/b", withIntermediateDirectories: true)
        func write(_ relative: String, _ count: Int) throws {
            try Data(repeating: 7, count: count).write(to: URL(fileURLWithPath: root.path + "/" + relative))
        }
        try write("Downloads/a/one.mkv", 3)
        try write("Downloads/a/two.jpg", 5)
        try write("Downloads/b/three.srt", 0)
        try write("top.txt", 2)
        try Data([1]).write(to: URL(fileURLWithPath: folder + "/outside.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: root.path + "/Downloads/b/link.mkv", withDestinationPath: root.path + "/Downloads/a/one.mkv")
        let placer = FilePlacer(root: root, durable: false)
        let sizes = placer.sizes(of: [
            "Downloads/a/one.mkv", "Downloads/b/three.srt", "Downloads/a/two.jpg", "top.txt", "Downloads/c/gone.mkv",
            "Downloads/b/link.mkv", "Downloads/a/missing.mkv", "../outside.txt", "Downloads/../../outside.txt",
        ])
        #expect(
            sizes == ["Downloads/a/one.mkv": 3, "Downloads/a/two.jpg": 5, "Downloads/b/three.srt": 0, "top.txt": 2])
    }
}
