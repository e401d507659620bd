import Foundation
import MediaSyncCore
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// What a sync does before it compares (a killed run's journal, stale stored paths, the legacy layout): the dry run
/// plans it as the real run makes it.
@Suite struct SyncPreparationTests {
    /// Two records whose absolute paths repair to the same path (this root's, then another root's as a `file://` URL
    /// under a key nothing wants), and a file a killed run placed and journaled: the real run repairs the first,
    /// forgets the second and records the journaled file; the dry run plans against the same records, so it plans
    /// nothing (not the deletion of the held file the second record names), and changes nothing.
    @Test func aDryRunPlansTheRepairsAndTheJournalAsTheRealRunMakesThem() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id)
            #expect(try await fixture.sync().failed.isEmpty)
            let entries = try fixture.index.entries()
            let media = try #require(entries.first { $0.file.kind == .media })
            let image = try #require(entries.first { $0.file.kind == .image })
            var absolute = media
            absolute.file.path = fixture.root.path + "/" + media.file.path
            try fixture.index.record(absolute)
            var other = media
            other.file.key = .media(itemId: "0ld00000000000000000000000000000", versionId: "0ld")
            other.file.path = "file:///old/root/" + media.file.path
            try fixture.index.record(other)
            try fixture.index.forget(key: image.file.key)
            let journal = fixture.root.stateDirectory + "/placed.journal"
            #expect(
                FileManager.default.createFile(atPath: journal, contents: Data(PlacedJournal.line(for: image).utf8)))

            let recordsBefore = try fixture.index.entries()
            let journalBefore = FileManager.default.contents(atPath: journal)
            let snapshot = { fixture.tree().map { ($0, fixture.bytes($0)) } }
            let treeBefore = snapshot()
            let plan = try await fixture.sync(SyncOptions(delete: true, dryRun: true))
            #expect(plan.planned.isEmpty, "\(plan.planned)")
            #expect(plan.extraneous.isEmpty, "\(plan.extraneous)")
            #expect(try fixture.index.entries() == recordsBefore)
            #expect(FileManager.default.contents(atPath: journal) == journalBefore)
            let treeAfter = snapshot()
            #expect(treeAfter.map(\.0) == treeBefore.map(\.0) && zip(treeAfter, treeBefore).allSatisfy { $0.1 == $1.1 })

            let real = try await fixture.sync(delete: true)
            #expect(real.pathsRepaired == 1 && real.pathsForgotten == [other.file.path])
            #expect(real.downloaded.isEmpty && real.deleted.isEmpty && real.failed.isEmpty, "\(real)")
            #expect(Set(try fixture.index.entries().map(\.file.key)) == Set(entries.map(\.file.key)))
            #expect(fixture.tree() == treeBefore.map(\.0))
        }
    }

    /// One case of the path-repair decision: the records in the index's order (by path), the paths other records
    /// hold, and what becomes of each record (nil: forgotten); a relative path has no step.
    struct RepairCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var records: [String]
        var held: Set<String> = []
        var expected: [String?]
    }

    static let root = "/mnt/mirror"

    static let repairCases: [RepairCase] = [
        RepairCase(
            testDescription: "absolute, inside the root", records: ["/mnt/mirror/Downloads/m/a.mkv"],
            expected: ["Downloads/m/a.mkv"]),
        RepairCase(
            testDescription: "inside the root, doubled slashes", records: ["/mnt/mirror//Downloads//m/a.mkv"],
            expected: ["Downloads/m/a.mkv"]),
        RepairCase(
            testDescription: "file:// URL of this root", records: ["file:///mnt/mirror/Downloads/m/a.mkv"],
            expected: ["Downloads/m/a.mkv"]),
        RepairCase(
            testDescription: "file:// URL with a host and percent escapes",
            records: ["file://nas/old%20root/Downloads/m/a%20b.mkv"], expected: ["Downloads/m/a b.mkv"]),
        RepairCase(
            testDescription: "outside the root: what follows the last /Downloads/",
            records: ["/var/mobile/Downloads/old/Downloads/m/a.mkv"], expected: ["Downloads/m/a.mkv"]),
        RepairCase(
            testDescription: "outside the root without /Downloads/: forgotten",
            records: ["/somewhere/else/poster.jpeg"],
            expected: [nil]),
        RepairCase(
            testDescription: "unsafe ..: forgotten", records: ["/mnt/mirror/Downloads/../../etc/passwd"],
            expected: [nil]),
        RepairCase(
            testDescription: "unsafe .. outside the root: forgotten", records: ["/old/Downloads/m/../../../secret"],
            expected: [nil]),
        RepairCase(
            testDescription: "FILE: in capitals (the index's LIKE finds it): forgotten",
            records: ["FILE:///mnt/mirror/Downloads/m/a.mkv"], expected: [nil]),
        RepairCase(
            testDescription: "target held by another record: forgotten", records: ["/mnt/mirror/Downloads/m/a.mkv"],
            held: ["Downloads/m/a.mkv"], expected: [nil]),
        RepairCase(
            testDescription: "two records repairing to one path: the first keeps it, the second is forgotten",
            records: ["/mnt/mirror/Downloads/m/a.mkv", "file:///old/Downloads/m/a.mkv"],
            expected: ["Downloads/m/a.mkv", nil]),
        RepairCase(
            testDescription: "already relative: untouched", records: ["Downloads/m/a.mkv"], held: ["Downloads/m/a.mkv"],
            expected: []),
        RepairCase(
            testDescription: "relative and absolute mixed",
            records: ["Downloads/m/b.mkv", "/mnt/mirror/Downloads/m/a.mkv"], expected: ["Downloads/m/a.mkv"]),
    ]

    @Test(arguments: repairCases) func thePathRepairDecision(_ row: RepairCase) {
        let records = row.records.enumerated().map { (key: FileKey(rawValue: "media:\($0.offset)"), path: $0.element) }
        let steps = MirrorIndex.pathRepairs(of: records, root: Self.root) { row.held.contains($0) }
        let absolute = records.filter { !$0.path.hasPrefix("Downloads/") }
        #expect(steps.map(\.key) == absolute.map(\.key))
        #expect(steps.map(\.stored) == absolute.map(\.path))
        #expect(steps.map(\.relative) == row.expected)
    }

    /// The survey changes nothing; the records it leads a dry run to plan against are those the index holds once the
    /// executor made it: stored paths repaired or forgotten (one taken by a journaled file, one taken by a record
    /// repaired before it), a record the journal replaces by its key left to the journal, a stale temporary removed.
    @Test func theRecordsTheDryRunTakesAreThoseTheIndexHoldsOnceThePreparationIsMade() async throws {
        try await TemporaryDirectory.with { folder in
            let root = MirrorRoot(path: folder.path)
            try root.prepare()
            let index = try MirrorIndex(path: root.indexPath)
            let executor = Mirror.using(root: root, index: index, durable: false).executor
            func entry(_ name: String, at path: String, key: String? = nil) -> IndexEntry {
                var entry = MirrorExecutorTests.entry(name, size: 3, key: key)
                entry.file.path = path
                return entry
            }
            let journaled = [entry("j", at: "Downloads/j"), entry("k", at: "Downloads/k")]
            for placed in journaled { try MirrorExecutorTests.place(root, placed) }
            try index.record([
                entry("a", at: "Downloads/a"),
                entry("b", at: root.path + "/Downloads/b"),
                entry("b-other", at: "file:///old/Downloads/b"),
                entry("c", at: "/elsewhere/c.jpeg"),
                entry("j-old", at: "/old/Downloads/j"),
                entry("k", at: "/old/Downloads/k-old"),
            ])
            let journal = root.stateDirectory + "/placed.journal"
            #expect(
                FileManager.default.createFile(
                    atPath: journal, contents: Data(journaled.map { PlacedJournal.line(for: $0) }.joined().utf8)))
            let stale = root.stagingDirectory + "/write-6F1C1F0E-0000-4000-8000-000000000000.tmp"
            try FileManager.default.createDirectory(atPath: root.stagingDirectory, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: stale, contents: Data("x".utf8)))
            let before = try index.entries()
            let journalBefore = FileManager.default.contents(atPath: journal)

            let preparation = try SyncPreparation.survey(executor)
            #expect(try index.entries() == before)
            #expect(FileManager.default.contents(atPath: journal) == journalBefore)
            #expect(FileManager.default.fileExists(atPath: stale))
            let planned = preparation.applied(to: before).entries.sorted { $0.file.key < $1.file.key }

            let prepared = try executor.prepare(preparation)
            #expect(try index.entries().sorted { $0.file.key < $1.file.key } == planned)
            #expect(planned.map(\.file.path).sorted() == ["Downloads/a", "Downloads/b", "Downloads/j", "Downloads/k"])
            #expect(prepared.repair.repaired == 1)
            #expect(prepared.repair.forgotten == ["/elsewhere/c.jpeg", "/old/Downloads/j", "file:///old/Downloads/b"])
            #expect(!FileManager.default.fileExists(atPath: stale))
            #expect(FileManager.default.contents(atPath: journal)?.isEmpty != false)
        }
    }
}
