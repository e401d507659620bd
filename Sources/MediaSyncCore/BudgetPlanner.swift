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
    /// - What is held counts whole, less the files this plan deletes or replaces. A budget deletes nothing itself.
    /// - Metadata writes, moves and deletions are never held back.
    public static func applyBudget(
        _ plan: SyncPlan, budget: Int64, local: LocalSnapshot, unit: (RemoteFile) -> String,
        rank: (String) -> BudgetRank?
    ) -> BudgetOutcome {
        var replaced = Set<FileKey>()
        for action in plan.actions {
            switch action {
            case .download(let file, _): replaced.insert(file.key)
            case .delete(let file): replaced.insert(file.key)
            default: break
            }
        }
        var used: Int64 = 0
        for file in local.files where !replaced.contains(file.key) && file.kind != .metadata {
            used += local.onDisk[file.path] ?? file.size
        }
        // Units in plan order, then ranked.
        var units: [String: [RemoteFile]] = [:]
        var unitOrder: [String] = []
        for file in plan.downloads {
            let name = unit(file)
            if units[name] == nil { unitOrder.append(name) }
            units[name, default: []].append(file)
        }
        let positions = Dictionary(uniqueKeysWithValues: unitOrder.enumerated().map { ($1, $0) })
        let unranked = Int.max
        let ordered = unitOrder.sorted { left, right in
            let a = rank(left) ?? BudgetRank(group: unranked, order: positions[left] ?? 0)
            let b = rank(right) ?? BudgetRank(group: unranked, order: positions[right] ?? 0)
            return a != b ? a < b : (positions[left] ?? 0) < (positions[right] ?? 0)
        }
        var taken = Set<FileKey>()
        var waiting: [RemoteFile] = []
        var blockedGroups = Set<Int>()
        for name in ordered {
            let files = units[name] ?? []
            let group = rank(name)?.group
            let need = files.reduce(Int64(0)) { $0 + max(0, $1.plannedSize ?? 0) }
            if let group, blockedGroups.contains(group) {
                waiting += files
                continue
            }
            if used + need <= budget {
                used += need
                for file in files { taken.insert(file.key) }
            } else {
                waiting += files
                if let group { blockedGroups.insert(group) }
            }
        }
        var limited = plan
        limited.actions.removeAll { action in
            if case .download(let file, _) = action { return !taken.contains(file.key) }
            return false
        }
        return BudgetOutcome(plan: limited, waiting: waiting, usedBytes: used)
    }
}
