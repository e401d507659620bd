/// Where an item stands when a storage budget decides what fits: its selection (`group`: the order of the
/// selections, podcasts after them) and its place within it (`order`: next-unplayed order in a series, newest first
/// in a podcast).
public struct BudgetRank: Comparable, Hashable, Sendable {
    public var group: Int
    public var order: Int

    public init(group: Int, order: Int) {
        self.group = group
        self.order = order
    }

    public static func < (left: BudgetRank, right: BudgetRank) -> Bool {
        (left.group, left.order) < (right.group, right.order)
    }
}

/// What a budget let a plan do.
public struct BudgetOutcome: Sendable, Equatable {
    /// The plan with only the downloads that fit.
    public var plan: SyncPlan
    /// The downloads that wait for space, in the order they would come.
    public var waiting: [RemoteFile]
    /// The bytes held and kept, plus those planned, once the plan has run.
    public var usedBytes: Int64
}

extension SyncPlanner {
    /// Keeps the downloads that fit in `budget` beside what is held, most wanted first. Pure.
    ///
    /// - Files are taken a unit at a time (`unit`: an item with its subtitles and images, a podcast episode with its
    ///   extras), units in ``BudgetRank`` order; units without a rank come last, in plan order.
    /// - Within a group, once a unit does not fit the rest of the group waits too (episode 5 never arrives before
    ///   episode 4); a later group may still take smaller units.
    /// - What is held counts at its recorded size, less the files this plan deletes or replaces. A budget deletes
    ///   nothing itself.
    /// - Metadata writes, moves and deletions are never held back.
    public static func applyBudget(
        _ plan: SyncPlan, budget: Int64, local: LocalSnapshot, unit: (RemoteFile) -> String,
        rank: (String) -> BudgetRank?
    ) -> BudgetOutcome {
        // One pass over the plan: the keys it replaces or deletes, and its downloads gathered by unit (an array per
        // unit, addressed by number: a budget over 10,000 items costs little beside the plan itself).
        var replaced = Set<FileKey>()
        var unitNumbers: [String: Int] = [:]
        var unitNames: [String] = []
        var unitActions: [[Int]] = []
        var unitBytes: [Int64] = []
        for (position, action) in plan.actions.enumerated() {
            switch action {
            case .download(let file, let reason):
                // A new file replaces nothing held; a changed, missing or damaged one its record.
                if reason != .new { replaced.insert(file.key) }
                let name = unit(file)
                let number: Int
                if let known = unitNumbers[name] {
                    number = known
                } else {
                    number = unitNames.count
                    unitNumbers[name] = number
                    unitNames.append(name)
                    unitActions.append([])
                    unitBytes.append(0)
                }
                unitActions[number].append(position)
                unitBytes[number] += max(0, file.plannedSize ?? 0)
            case .delete(let file):
                replaced.insert(file.key)
            default:
                break
            }
        }
        var used: Int64 = 0
        for file in local.files where file.kind != .metadata {
            if replaced.isEmpty || !replaced.contains(file.key) { used += file.size }
        }
        // Units by rank (unranked last, in plan order).
        let ranks = unitNames.map(rank)
        let unranked = BudgetRank(group: Int.max, order: 0)
        let ordered = unitNames.indices.sorted { left, right in
            let a = ranks[left] ?? unranked
            let b = ranks[right] ?? unranked
            return a != b ? a < b : left < right
        }
        var keep = [Bool](repeating: true, count: plan.actions.count)
        var waitingPositions: [Int] = []
        var blockedGroups = Set<Int>()
        for number in ordered {
            let group = ranks[number]?.group
            if let group, blockedGroups.contains(group) {
                waitingPositions += unitActions[number]
            } else if used + unitBytes[number] <= budget {
                used += unitBytes[number]
                continue
            } else {
                waitingPositions += unitActions[number]
                if let group { blockedGroups.insert(group) }
            }
        }
        var waiting: [RemoteFile] = []
        waiting.reserveCapacity(waitingPositions.count)
        for position in waitingPositions {
            keep[position] = false
            if case .download(let file, _) = plan.actions[position] { waiting.append(file) }
        }
        var limited = plan
        if !waitingPositions.isEmpty {
            limited.actions = plan.actions.indices.compactMap { keep[$0] ? plan.actions[$0] : nil }
        }
        return BudgetOutcome(plan: limited, waiting: waiting, usedBytes: used)
    }
}
