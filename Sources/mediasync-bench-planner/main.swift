// mediasync-bench-planner — times `SyncPlanner.plan` on 100,000 files (Scripts/bench-sync.sh runs it, release build).
// Checks the plans it times (exit 1 when one is wrong) and prints one line:
// PLANNER_BENCH files=N identical_seconds=S one_changed_seconds=S
// BUDGET_BENCH items=N plan_seconds=S plan_with_budget_seconds=S ratio=R (planning with a storage budget
// over a 10,004-item library, half of it held, the other half to fetch, ranked in 100 selections; medians of 7)
import Foundation
import MediaSyncCore

let count = 100_000

/// 100,000 remote files shaped like a mirror's (media, images, metadata, a few subtitles) and the index
/// records and on-disk sizes of a mirror that holds every one of them.
func sides() -> (remote: [RemoteFile], local: [LocalFile], onDisk: [String: Int64]) {
    var remote: [RemoteFile] = []
    var local: [LocalFile] = []
    var onDisk: [String: Int64] = [:]
    remote.reserveCapacity(count)
    local.reserveCapacity(count)
    onDisk.reserveCapacity(count)
    for n in 0..<count {
        let item = String(format: "%032x", n / 4)
        let file: RemoteFile
        switch n % 4 {
        case 0:
            file = RemoteFile(
                key: .media(itemId: item, versionId: item), path: "Downloads/\(item)/\(item)-\(item).mkv",
                kind: .media,
                content: .download(url: "http://127.0.0.1/Items/\(item)/Download", expectedSize: 2000),
                signature: "etag-\(n):2000", itemId: item, versionId: item, essential: true)
        case 1:
            file = RemoteFile(
                key: .image(itemId: item, type: "Primary"), path: "Downloads/\(item)/Images/Primary.jpeg",
                kind: .image,
                content: .download(url: "http://127.0.0.1/Items/\(item)/Images/Primary", expectedSize: nil),
                signature: "tag-\(n)", itemId: item, essential: false)
        case 2:
            file = RemoteFile(
                key: .subtitle(itemId: item, versionId: item, streamIndex: 2),
                path: "Downloads/\(item)/\(item)-\(item).2.en.srt",
                kind: .subtitle,
                content: .download(
                    url: "http://127.0.0.1/Videos/\(item)/Subtitles/2/Stream.srt", expectedSize: nil),
                signature: "sub-\(n)", itemId: item, versionId: item, essential: false)
        default:
            file = RemoteFile(
                key: .metadata(itemId: item), path: "Downloads/\(item)/metadata.json", kind: .metadata,
                content: .inline(Array("{\"itemId\":\"\(item)\"}".utf8)), signature: "sha-\(n)", itemId: item,
                essential: true)
        }
        let size: Int64 = file.expectedSize ?? 1234
        remote.append(file)
        local.append(
            LocalFile(
                key: file.key, path: file.path, kind: file.kind, size: size, signature: file.signature,
                itemId: file.itemId))
        onDisk[file.path] = size
    }
    return (remote, local, onDisk)
}

func seconds(_ duration: Duration) -> String {
    let (whole, attoseconds) = duration.components
    return String(format: "%.4f", Double(whole) + Double(attoseconds) / 1e18)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("mediasync-bench-planner: \(message)\n".utf8))
    exit(1)
}

let (remoteFiles, localFiles, onDisk) = sides()
let remote = RemoteSnapshot(files: remoteFiles)
let local = LocalSnapshot(files: localFiles, onDisk: onDisk)
let clock = ContinuousClock()

// Identical sides: nothing to do.
var identical = SyncPlan(actions: [])
let identicalTime = clock.measure {
    identical = SyncPlanner.plan(remote: remote, local: local, options: SyncOptions())
}
if !identical.actions.isEmpty { fail("identical sides planned \(identical.actions.count) actions") }

// One media file's signature changed: exactly one download, nothing else.
var changedRemote = remoteFiles
changedRemote[4_000].signature = "etag-changed:2000"
var changed = SyncPlan(actions: [])
let changedTime = clock.measure {
    changed = SyncPlanner.plan(remote: RemoteSnapshot(files: changedRemote), local: local, options: SyncOptions())
}
guard changed.actions.count == 1, case .download(let file, .changed) = changed.actions.first,
    file.key == changedRemote[4_000].key
else { fail("one changed signature planned \(changed.actions.prefix(3))") }

print(
    "PLANNER_BENCH files=\(count) identical_seconds=\(seconds(identicalTime)) one_changed_seconds=\(seconds(changedTime))"
)

// A storage budget over the 10,004-item library of Scripts/bench-sync.sh: 4 files an item.
let budgetItems = 10_004
let budgetFiles = Array(remoteFiles.prefix(budgetItems * 4))
let heldHalf = LocalSnapshot(
    files: Array(localFiles.prefix(budgetItems * 2)),
    onDisk: Dictionary(uniqueKeysWithValues: localFiles.prefix(budgetItems * 2).map { ($0.path, $0.size) }))
var ranks: [String: BudgetRank] = [:]
for (order, file) in budgetFiles.enumerated() where ranks[file.itemId] == nil {
    ranks[file.itemId] = BudgetRank(group: order / 400, order: order)
}
// Room for what is held and three quarters of the media still to fetch.
let heldBytes = heldHalf.files.filter { $0.kind != .metadata }.reduce(Int64(0)) { $0 + $1.size }
let budgetBytes = heldBytes + Int64(budgetItems / 2) * 2000 * 3 / 4
func median(_ run: () -> Duration) -> Duration {
    var times = (0..<7).map { _ in run() }
    times.sort()
    return times[3]
}
var budgeted: BudgetOutcome?
let planOnly = median {
    clock.measure {
        _ = SyncPlanner.plan(remote: RemoteSnapshot(files: budgetFiles), local: heldHalf, options: SyncOptions())
    }
}
let planBudget = median {
    clock.measure {
        let plan = SyncPlanner.plan(remote: RemoteSnapshot(files: budgetFiles), local: heldHalf, options: SyncOptions())
        budgeted = SyncPlanner.applyBudget(
            plan, budget: budgetBytes, local: heldHalf, unit: { $0.itemId }, rank: { ranks[$0] })
    }
}
guard let budgeted, !budgeted.waiting.isEmpty, !budgeted.plan.downloads.isEmpty, budgeted.usedBytes <= budgetBytes
else { fail("the budget planned nothing, or everything, or more than it holds") }
func asSeconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
let ratio = asSeconds(planBudget) / asSeconds(planOnly)
let downloads = budgeted.plan.downloads.count
print(
    "BUDGET_BENCH items=\(budgetItems) plan_seconds=\(seconds(planOnly)) plan_with_budget_seconds=\(seconds(planBudget)) "
        + "ratio=\(String(format: "%.3f", ratio)) downloads=\(downloads) waiting=\(budgeted.waiting.count)"
)
