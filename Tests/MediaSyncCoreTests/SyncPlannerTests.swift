import MediaSyncCore
import Testing

@Suite struct SyncPlannerTests {
    private static func media(_ id: String, signature: String = "etag-1:1000", path: String? = nil) -> RemoteFile {
        RemoteFile(
            key: .media(itemId: id, versionId: id), path: path ?? "Downloads/\(id)/\(id)-\(id).mkv", kind: .media,
            content: .download(url: "http://server/Items/\(id)/Download", expectedSize: 1000), signature: signature,
            itemId: id, versionId: id, essential: true)
    }

    private static func metadata(_ id: String, bytes: [UInt8] = [1, 2, 3], signature: String = "sha-a") -> RemoteFile {
        RemoteFile(
            key: .metadata(itemId: id), path: "Downloads/\(id)/metadata.json", kind: .metadata, content: .inline(bytes),
            signature: signature, itemId: id, essential: true)
    }

    private static func image(_ id: String, tag: String) -> RemoteFile {
        RemoteFile(
            key: .image(itemId: id, type: "Primary"), path: "Downloads/\(id)/Images/Primary.jpeg", kind: .image,
            content: .download(url: "http://server/Items/\(id)/Images/Primary?tag=\(tag)", expectedSize: nil),
            signature: "tag:\(tag)", itemId: id, essential: false)
    }

    private static func held(_ file: RemoteFile, size: Int64 = 1000, signature: String? = nil, path: String? = nil)
        -> LocalFile
    {
        LocalFile(
            key: file.key, path: path ?? file.path, kind: file.kind, size: size, signature: signature ?? file.signature,
            itemId: file.itemId)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var remote: [RemoteFile]
        var local: [LocalFile]
        var onDisk: [String: Int64]
        var options = SyncOptions()
        var unconfirmed: Set<String> = []
        var keptPaths: [String] = []
        var released: Set<String> = []
        var keptPlayed: Set<String> = []
        var expected: [SyncAction]
        var testDescription: String { name }
    }

    static let a = media("a")
    static let b = media("b")
    static let metaA = metadata("a")

    static let cases: [Case] = [
        Case(
            name: "empty mirror downloads everything (in path order)", remote: [a, b, metaA], local: [], onDisk: [:],
            expected: [.download(a, .new), .write(metaA, .new), .download(b, .new)]),
        Case(
            name: "nothing changed: no-op", remote: [a, metaA], local: [held(a), held(metaA, size: 3)],
            onDisk: [a.path: 1000, metaA.path: 3], expected: []),
        Case(
            name: "media changed on the server (ETag/Size)", remote: [media("a", signature: "etag-2:1200")],
            local: [held(a)], onDisk: [a.path: 1000],
            expected: [.download(media("a", signature: "etag-2:1200"), .changed)]),
        Case(
            name: "metadata changed: rewrite only", remote: [a, metadata("a", signature: "sha-b")],
            local: [held(a), held(metaA, size: 3)], onDisk: [a.path: 1000, metaA.path: 3],
            expected: [.write(metadata("a", signature: "sha-b"), .changed)]),
        Case(
            name: "indexed but gone from disk", remote: [a], local: [held(a)], onDisk: [:],
            expected: [.download(a, .missing)]),
        Case(
            name: "on disk with the wrong size", remote: [a], local: [held(a)], onDisk: [a.path: 10],
            expected: [.download(a, .damaged)]),
        Case(
            name: "held at an older path: move, no download", remote: [a],
            local: [held(a, path: "Downloads/old/a.mkv")], onDisk: ["Downloads/old/a.mkv": 1000],
            expected: [.move(from: "Downloads/old/a.mkv", to: a)]),
        Case(
            name: "media whose extension came from the MIME type matches its plan", remote: [a],
            local: [held(a, path: "Downloads/a/a-a.mp4")], onDisk: ["Downloads/a/a-a.mp4": 1000], expected: []),
        Case(
            name: "metadata at another path is moved, not matched by stem", remote: [metaA],
            local: [held(metaA, size: 3, path: "Downloads/a/metadata.old")], onDisk: ["Downloads/a/metadata.old": 3],
            expected: [.move(from: "Downloads/a/metadata.old", to: metaA)]),
        Case(
            name: "an image whose tag changed is fetched again", remote: [image("a", tag: "t2")],
            local: [held(image("a", tag: "t1"), size: 50)], onDisk: [image("a", tag: "t1").path: 50],
            expected: [.download(image("a", tag: "t2"), .changed)]),
        Case(
            name: "an unchanged image tag costs nothing", remote: [image("a", tag: "t1")],
            local: [held(image("a", tag: "t1"), size: 50)], onDisk: [image("a", tag: "t1").path: 50], expected: []),
        Case(
            name: "indexed at a stale path but where it should be: adopt, no download", remote: [a],
            local: [held(a, path: "Downloads/old/a.mkv")], onDisk: [a.path: 1000],
            expected: [.adopt(a, from: "Downloads/old/a.mkv")]),
        Case(
            name: "media found where it should be with the extension it was saved with", remote: [a],
            local: [held(a, path: "Downloads/old/a.mp4")], onDisk: ["Downloads/a/a-a.mp4": 1000],
            expected: [.adopt(a, from: "Downloads/old/a.mp4")]),
        Case(
            name: "a file of another size where it should be is not adopted", remote: [a],
            local: [held(a, path: "Downloads/old/a.mkv")], onDisk: [a.path: 999], expected: [.download(a, .missing)]),
        Case(
            name: "deselected files are kept without --delete", remote: [a], local: [held(a), held(b)],
            onDisk: [a.path: 1000, b.path: 1000], expected: [.keepExtraneous(held(b))]),
        Case(
            name: "deselected files are deleted with --delete", remote: [a], local: [held(a), held(b)],
            onDisk: [a.path: 1000, b.path: 1000], options: SyncOptions(delete: true), expected: [.delete(held(b))]),
        // Deletions are confirmed, never inferred from a listing alone (a library scan between two pages can shift
        // them and skip an item).
        Case(
            name: "absent from the listing, not confirmed gone: kept even with --delete", remote: [a],
            local: [held(a), held(b)], onDisk: [a.path: 1000, b.path: 1000], options: SyncOptions(delete: true),
            unconfirmed: ["b"], expected: [.keepUnconfirmed(held(b))]),
        Case(
            name: "absent and unconfirmed without --delete: kept and reported as left over", remote: [a],
            local: [held(a), held(b)], onDisk: [a.path: 1000, b.path: 1000], unconfirmed: ["b"],
            expected: [.keepExtraneous(held(b))]),
        Case(
            name: "an unconfirmed item keeps the metadata.json of its folder", remote: [],
            local: [held(metadata("b"), size: 3)], onDisk: [metadata("b").path: 3], options: SyncOptions(delete: true),
            keptPaths: [b.path], expected: [.keepUnconfirmed(held(metadata("b"), size: 3))]),
        Case(
            name: "a series metadata.json stays above a kept episode", remote: [],
            local: [held(metadata("s"), size: 3)], onDisk: [metadata("s").path: 3], options: SyncOptions(delete: true),
            keptPaths: ["Downloads/s/Season-01/e-e.mkv"], expected: [.keepUnconfirmed(held(metadata("s"), size: 3))]),
        Case(
            name: "a kept file elsewhere does not keep another item's metadata", remote: [],
            local: [held(metadata("s"), size: 3)], onDisk: [metadata("s").path: 3], options: SyncOptions(delete: true),
            keptPaths: ["Downloads/s2/Season-01/e-e.mkv"], expected: [.delete(held(metadata("s"), size: 3))]),
        Case(
            name: "only the unconfirmed item is kept; a confirmed one goes", remote: [],
            local: [held(a), held(b)], onDisk: [a.path: 1000, b.path: 1000], options: SyncOptions(delete: true),
            unconfirmed: ["a"], expected: [.keepUnconfirmed(held(a)), .delete(held(b))]),
        // Played cleanup: released items go without --delete; kept ones stay even with it.
        Case(
            name: "a released played item goes without --delete", remote: [a], local: [held(a), held(b)],
            onDisk: [a.path: 1000, b.path: 1000], released: ["b"], expected: [.delete(held(b))]),
        Case(
            name: "a played item in its grace period stays even with --delete", remote: [a], local: [held(a), held(b)],
            onDisk: [a.path: 1000, b.path: 1000], options: SyncOptions(delete: true), keptPlayed: ["b"],
            expected: [.keepPlayed(held(b))]),
        Case(
            name: "released, but unconfirmed gone: kept", remote: [], local: [held(b)], onDisk: [b.path: 1000],
            unconfirmed: ["b"], released: ["b"], expected: [.keepExtraneous(held(b))]),
        Case(
            name: "release is per item: another deselected file is only left over", remote: [],
            local: [held(a), held(b)], onDisk: [a.path: 1000, b.path: 1000], released: ["a"],
            expected: [.delete(held(a)), .keepExtraneous(held(b))]),
    ]

    struct ConfirmationCase: Sendable, CustomTestStringConvertible {
        var name: String
        var deleted: [LocalFile]
        var listed: Set<String>
        var answer: ConfirmationAnswer?
        var absent: Set<String>
        var kept: Set<String>
        var testDescription: String { name }
    }

    static let confirmationCases: [ConfirmationCase] = [
        ConfirmationCase(
            name: "listed, left out by the selection's rules (retention): no question, deleted", deleted: [held(b)],
            listed: ["b"], answer: ConfirmationAnswer(gone: []), absent: [], kept: []),
        ConfirmationCase(
            name: "absent, the server has it no more: confirmed gone", deleted: [held(b)], listed: [],
            answer: ConfirmationAnswer(gone: ["b"]), absent: ["b"], kept: []),
        ConfirmationCase(
            name: "absent, still on the server within a selection (a scan shifted the pages): kept", deleted: [held(b)],
            listed: [], answer: ConfirmationAnswer(gone: []), absent: ["b"], kept: ["b"]),
        ConfirmationCase(
            name: "absent, still on the server but deselected: deleted", deleted: [held(b)], listed: [],
            answer: ConfirmationAnswer(gone: [], outsideSelections: ["b"]), absent: ["b"], kept: []),
        ConfirmationCase(
            name: "the question failed: nothing confirmed, all kept", deleted: [held(a), held(b)], listed: [],
            answer: nil, absent: ["a", "b"], kept: ["a", "b"]),
        ConfirmationCase(
            name: "metadata is never asked about: it follows its media", deleted: [held(metaA, size: 3)], listed: [],
            answer: nil, absent: [], kept: []),
    ]

    @Test(arguments: confirmationCases)
    func confirmsAbsences(_ table: ConfirmationCase) {
        let plan = SyncPlan(actions: table.deleted.map { .delete($0) })
        let absent = SyncPlanner.absentItems(plan, listed: table.listed)
        #expect(absent == table.absent)
        #expect(SyncPlanner.unconfirmed(absent: absent, answer: table.answer) == table.kept)
    }

    @Test(arguments: cases)
    func plans(_ table: Case) {
        let plan = SyncPlanner.plan(
            remote: RemoteSnapshot(
                files: table.remote, unconfirmed: table.unconfirmed, keptPaths: table.keptPaths,
                released: table.released, keptPlayed: table.keptPlayed),
            local: LocalSnapshot(files: table.local, onDisk: table.onDisk), options: table.options)
        #expect(plan.actions == table.expected)
    }

    /// What is fetched, written, moved or adopted comes in path order whatever order the remote side came in (equal
    /// paths in theirs), then the held files' actions in their order.
    @Test func actsOnTheWantedFilesInPathOrder() {
        let c = Self.media("c")
        let shuffled = [c, Self.b, Self.metaA, Self.a]
        var twin = Self.media("a")
        twin.key = FileKey(rawValue: "media:a:twin")
        let plan = SyncPlanner.plan(
            remote: RemoteSnapshot(files: shuffled + [twin]),
            local: LocalSnapshot(files: [Self.held(Self.media("z"))], onDisk: [:]), options: SyncOptions())
        #expect(
            plan.actions == [
                .download(Self.a, .new), .download(twin, .new), .write(Self.metaA, .new), .download(Self.b, .new),
                .download(c, .new), .keepExtraneous(Self.held(Self.media("z"))),
            ])
    }

    /// Two held records under one key (an index from before keys were unique): a wanted key keeps both, as the
    /// planner always did; an unwanted one leaves both over.
    @Test func heldFilesSharingAKeyAreWantedOrLeftTogether() {
        let first = Self.held(Self.a)
        let second = Self.held(Self.a, path: "Downloads/a/older.mkv")
        let onDisk = [first.path: Int64(1000), second.path: 1000]
        let kept = SyncPlanner.plan(
            remote: RemoteSnapshot(files: [Self.a]), local: LocalSnapshot(files: [first, second], onDisk: onDisk),
            options: SyncOptions(delete: true))
        #expect(kept.actions == [.move(from: second.path, to: Self.a)])
        let left = SyncPlanner.plan(
            remote: RemoteSnapshot(files: [Self.b]), local: LocalSnapshot(files: [first, second], onDisk: onDisk),
            options: SyncOptions())
        #expect(left.actions == [.download(Self.b, .new), .keepExtraneous(first), .keepExtraneous(second)])
    }

    @Test func countsTheBytesToDownloadAndKnowsANoOp() {
        let plan = SyncPlanner.plan(
            remote: RemoteSnapshot(files: [Self.a, Self.b]), local: LocalSnapshot(files: [], onDisk: [:]),
            options: SyncOptions())
        #expect(plan.bytesToDownload == 2000)
        #expect(plan.downloads.map(\.key.rawValue) == ["media:a:a", "media:b:b"])
        #expect(!plan.isEmpty)
        let same = SyncPlanner.plan(
            remote: RemoteSnapshot(files: []), local: LocalSnapshot(files: [Self.held(Self.a)], onDisk: [:]),
            options: SyncOptions())
        #expect(same.isEmpty)
    }
}
