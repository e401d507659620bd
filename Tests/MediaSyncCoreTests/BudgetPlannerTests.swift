import MediaSyncCore
import Testing

/// A storage budget: what fits beside what is held, most wanted first; the rest waits.
@Suite struct BudgetPlannerTests {
    private static func media(_ id: String, size: Int64) -> RemoteFile {
        RemoteFile(
            key: .media(itemId: id, versionId: id), path: "Downloads/\(id)/\(id)-\(id).mkv", kind: .media,
            content: .download(url: "http://server/Items/\(id)/Download", expectedSize: size), signature: "s",
            itemId: id, versionId: id, essential: true)
    }

    private static func image(_ id: String, size: Int64) -> RemoteFile {
        RemoteFile(
            key: .image(itemId: id, type: "Primary"), path: "Downloads/\(id)/Images/Primary.jpeg", kind: .image,
            content: .download(url: "http://server/Items/\(id)/Images/Primary", expectedSize: size), signature: "t",
            itemId: id, essential: false)
    }

    private static func held(_ id: String, size: Int64) -> LocalFile {
        LocalFile(
            key: .media(itemId: id, versionId: id), path: "Downloads/\(id)/\(id)-\(id).mkv", kind: .media, size: size,
            signature: "s", itemId: id)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var downloads: [RemoteFile]
        var held: [LocalFile] = []
        var deleted: [LocalFile] = []
        /// Downloads that replace a held file (changed on the server); the others are new.
        var changed: Set<String> = []
        var budget: Int64
        var ranks: [String: BudgetRank]
        var taken: [String]
        var waiting: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "everything fits", downloads: [media("a", size: 10), media("b", size: 10)], budget: 20,
            ranks: ["a": .init(group: 0, order: 1), "b": .init(group: 0, order: 2)], taken: ["a", "b"], waiting: []),
        Case(
            name: "most wanted first, whatever the plan's order",
            downloads: [media("a", size: 10), media("b", size: 10), media("c", size: 10)], budget: 20,
            ranks: ["c": .init(group: 0, order: 1), "a": .init(group: 1, order: 1), "b": .init(group: 2, order: 1)],
            taken: ["c", "a"], waiting: ["b"]),
        Case(
            name: "within a selection, one that does not fit holds back the rest",
            downloads: [media("e1", size: 30), media("e2", size: 5), media("m", size: 5)], budget: 20,
            ranks: ["e1": .init(group: 0, order: 1), "e2": .init(group: 0, order: 2), "m": .init(group: 1, order: 1)],
            taken: ["m"], waiting: ["e1", "e2"]),
        Case(
            name: "what is held counts", downloads: [media("b", size: 10)], held: [held("a", size: 15)], budget: 20,
            ranks: ["b": .init(group: 0, order: 1)], taken: [], waiting: ["b"]),
        Case(
            name: "a file this plan deletes no longer counts", downloads: [media("b", size: 10)],
            held: [held("a", size: 15)], deleted: [held("a", size: 15)], budget: 20,
            ranks: ["b": .init(group: 0, order: 1)], taken: ["b"], waiting: []),
        Case(
            name: "a file fetched again counts once, at its new size", downloads: [media("a", size: 18)],
            held: [held("a", size: 15)], changed: ["a"], budget: 20, ranks: ["a": .init(group: 0, order: 1)],
            taken: ["a"],
            waiting: []),
        Case(
            name: "an item comes whole with its image",
            downloads: [media("a", size: 10), image("a", size: 2), media("b", size: 8)], budget: 11,
            ranks: ["a": .init(group: 0, order: 1), "b": .init(group: 1, order: 1)], taken: ["b"],
            waiting: ["a", "a"]),
        Case(
            name: "unranked units come last, in plan order",
            downloads: [media("x", size: 5), media("a", size: 10), media("y", size: 5)], budget: 15,
            ranks: ["a": .init(group: 0, order: 1)], taken: ["a", "x"], waiting: ["y"]),
        Case(
            name: "a budget smaller than one file takes nothing and deletes nothing", downloads: [media("a", size: 10)],
            held: [held("h", size: 50)], budget: 5, ranks: ["a": .init(group: 0, order: 1)], taken: [],
            waiting: ["a"]),
    ]

    @Test(arguments: cases) func budget(_ table: Case) {
        var actions = table.downloads.map {
            SyncAction.download($0, table.changed.contains($0.itemId) ? .changed : .new)
        }
        actions += table.deleted.map { SyncAction.delete($0) }
        let outcome = SyncPlanner.applyBudget(
            SyncPlan(actions: actions), budget: table.budget,
            local: LocalSnapshot(files: table.held, onDisk: [:]), unit: { $0.itemId }, rank: { table.ranks[$0] })
        #expect(Set(outcome.plan.downloads.map(\.itemId)) == Set(table.taken))
        #expect(outcome.waiting.map(\.itemId) == table.waiting)
        // Deletions stay as planned: a budget neither adds nor removes any.
        #expect(
            outcome.plan.actions.filter { if case .delete = $0 { true } else { false } }.count == table.deleted.count)
        #expect(outcome.usedBytes <= max(table.budget, table.held.reduce(0) { $0 + $1.size }))
    }
}
