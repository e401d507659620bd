/// Hands out queued transfers in priority order to a fixed number of workers, keeping each host
/// under its cap. Workers that find only capped hosts wait until a slot frees.
final class TransferScheduler: Sendable {
    private struct State {
        /// The items not handed out yet, the next one last: taking it is O(1) (from the front, each take moved all
        /// the others, quadratic in a batch of 12,000 small files).
        var pending: [Int]
        var activePerHost: [String: Int] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
        var stopped = false
    }

    private let hosts: [String]
    private let perHostLimit: Int
    private let state: Locked<State>

    /// - Parameters:
    ///   - priorities: one priority per item; higher first, ties in index order.
    ///   - hosts: one host per item.
    init(priorities: [Int], hosts: [String], perHostLimit: Int) {
        let order = priorities.indices.sorted {
            priorities[$0] != priorities[$1] ? priorities[$0] > priorities[$1] : $0 < $1
        }
        self.hosts = hosts
        self.perHostLimit = max(1, perHostLimit)
        self.state = Locked(State(pending: order.reversed()))
    }

    private enum Pick {
        case item(Int)
        case done
        case wait
    }

    /// The next item to run, or nil when the queue is empty or stopped.
    func next() async -> Int? {
        while true {
            let pick = state.withLock { state -> Pick in
                if state.stopped || state.pending.isEmpty { return .done }
                guard
                    let position = state.pending.lastIndex(where: {
                        (state.activePerHost[hosts[$0]] ?? 0) < perHostLimit
                    })
                else { return .wait }
                let index = state.pending.remove(at: position)
                state.activePerHost[hosts[index], default: 0] += 1
                return .item(index)
            }
            switch pick {
            case .item(let index): return index
            case .done: return nil
            case .wait:
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool in
                        // Re-check under the lock: a slot may have freed since the pick.
                        if state.stopped || state.pending.isEmpty { return true }
                        if state.pending.contains(where: { (state.activePerHost[hosts[$0]] ?? 0) < perHostLimit }) {
                            return true
                        }
                        state.waiters.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    /// Marks an item finished, freeing its host slot.
    func finish(_ index: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.activePerHost[hosts[index], default: 1] -= 1
            let waiting = state.waiters
            state.waiters = []
            return waiting
        }
        waiters.forEach { $0.resume() }
    }

    /// Stops handing out items; returns those never started.
    func stop() -> [Int] {
        let (left, waiters) = state.withLock { state -> ([Int], [CheckedContinuation<Void, Never>]) in
            state.stopped = true
            let left = Array(state.pending.reversed())
            state.pending = []
            let waiting = state.waiters
            state.waiters = []
            return (left, waiting)
        }
        waiters.forEach { $0.resume() }
        return left
    }
}
