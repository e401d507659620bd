import Foundation

/// Builds ``BatchProgress`` snapshots and hands them to the caller, never two at a time, with a fraction
/// that never goes down.
///
/// The finished and the waiting transfers are kept as running totals, changed once per transfer as it starts and
/// ends: a report reads those and walks only the running transfers, so it costs the same at the first file of a
/// batch of 12,000 as at the last.
final class ProgressReporter: Sendable {
    private struct Tally {
        var succeeded = 0
        var failed = 0
        /// Bytes done and expected of the finished transfers, and how many of those failed with no size known.
        var finishedDone: Int64 = 0
        var finishedExpected: Int64 = 0
        var finishedUnknown = 0
        /// The expected bytes of the transfers not started yet, and how many of those have no size known.
        var waitingExpected: Int64 = 0
        var waitingUnknown = 0
        /// The started ones not finished yet.
        var running: Set<Int> = []
        /// Which have ended (a transfer ends once, whether or not it started).
        var ended: [Bool]
    }

    private let ids: [String]
    private let items: [ItemProgress]
    private let counters: BatchCounters
    private let handler: (@Sendable (BatchProgress) -> Void)?
    private let started = Date()
    private let tally: Locked<Tally>
    private let lastFraction = Locked<Double>(0)
    private let lastReport = Locked<ContinuousClock.Instant?>(nil)

    init(ids: [String], items: [ItemProgress], counters: BatchCounters, handler: (@Sendable (BatchProgress) -> Void)?) {
        self.ids = ids
        self.items = items
        self.counters = counters
        self.handler = handler
        var tally = Tally(ended: Array(repeating: false, count: items.count))
        for item in items {
            let expected = item.expected.load(ordering: .relaxed)
            if expected >= 0 { tally.waitingExpected += expected } else { tally.waitingUnknown += 1 }
        }
        self.tally = Locked(tally)
    }

    /// The transfer at `index` starts: its bytes are read from its progress until it ends.
    func start(_ index: Int) {
        guard handler != nil else { return }
        tally.withLock { tally in
            guard !tally.ended[index], tally.running.insert(index).inserted else { return }
            ProgressReporter.leaveWaiting(index, items: items, &tally)
        }
    }

    /// The transfer at `index` ended (started or not) with `result`.
    func end(_ index: Int, _ result: Result<TransferSuccess, HTTPError>) {
        guard handler != nil else { return }
        tally.withLock { tally in
            guard !tally.ended[index] else { return }
            tally.ended[index] = true
            if tally.running.remove(index) == nil { ProgressReporter.leaveWaiting(index, items: items, &tally) }
            switch result {
            case .success(let success):
                tally.succeeded += 1
                tally.finishedDone += success.size
                tally.finishedExpected += success.size
            case .failure:
                let item = items[index]
                let done = item.done.load(ordering: .relaxed)
                let expected = item.expected.load(ordering: .relaxed)
                tally.failed += 1
                if expected >= 0 { tally.finishedExpected += expected } else { tally.finishedUnknown += 1 }
                tally.finishedDone += min(done, max(expected, 0))
            }
        }
    }

    /// Takes a transfer's expected size out of the waiting totals: it was counted there since the batch began (a
    /// transfer learns its size only once it runs).
    private static func leaveWaiting(_ index: Int, items: [ItemProgress], _ tally: inout Tally) {
        let expected = items[index].expected.load(ordering: .relaxed)
        if expected >= 0 { tally.waitingExpected -= expected } else { tally.waitingUnknown -= 1 }
    }

    /// Reports unless the last report is more recent than `interval` seconds.
    func reportIfDue(interval: Double) {
        guard handler != nil else { return }
        let now = ContinuousClock.now
        let due = lastReport.withLock { last -> Bool in
            if let last, now - last < .milliseconds(Int64(interval * 1000)) { return false }
            last = now
            return true
        }
        if due { report(final: false) }
    }

    func report(final: Bool) {
        guard let handler else { return }
        lastReport.withLock { $0 = ContinuousClock.now }
        let (snapshot, itemShares) = tally.withLock { tally -> (BatchProgress, Double) in
            var bytesDone = tally.finishedDone
            var bytesExpected = tally.finishedExpected + tally.waitingExpected
            var sizeKnown = tally.finishedUnknown == 0 && tally.waitingUnknown == 0
            var itemShares = Double(tally.succeeded + tally.failed)
            var active: [TransferProgress] = []
            for index in tally.running.sorted() {
                let item = items[index]
                let done = item.done.load(ordering: .relaxed)
                let expected = item.expected.load(ordering: .relaxed)
                bytesDone += done
                if expected >= 0 {
                    bytesExpected += expected
                    itemShares += expected > 0 ? min(1, Double(done) / Double(expected)) : 0
                } else {
                    sizeKnown = false
                }
                if done > 0 || expected >= 0 {
                    active.append(
                        TransferProgress(id: ids[index], bytesDone: done, bytesExpected: expected >= 0 ? expected : nil)
                    )
                }
            }
            let progress = BatchProgress(
                totalItems: items.count, succeededItems: tally.succeeded, failedItems: tally.failed,
                bytesDone: bytesDone, bytesExpected: bytesExpected, sizeKnown: sizeKnown, bytesPerSecond: 0,
                active: active, fraction: 0, isFinished: final)
            return (progress, itemShares)
        }
        let finishedAll = snapshot.succeededItems + snapshot.failedItems == items.count
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        var progress = snapshot
        progress.bytesPerSecond = Double(counters.received.load(ordering: .relaxed)) / elapsed
        if finishedAll { progress.active = [] }
        lastFraction.withLock { last in
            var fraction: Double
            if finishedAll {
                fraction = 1
            } else if progress.sizeKnown && progress.bytesExpected > 0 {
                fraction = min(0.999, Double(progress.bytesDone) / Double(progress.bytesExpected))
            } else {
                fraction = items.isEmpty ? 1 : min(0.999, itemShares / Double(items.count))
            }
            fraction = max(fraction, last)
            last = fraction
            progress.fraction = fraction
            handler(progress)
        }
    }
}
