import Foundation

/// Builds ``BatchProgress`` snapshots and hands them to the caller, never two at a time, with a fraction
/// that never goes down.
final class ProgressReporter: Sendable {
    private let ids: [String]
    private let items: [ItemProgress]
    private let counters: BatchCounters
    private let handler: (@Sendable (BatchProgress) -> Void)?
    private let started = Date()
    private let lastFraction = Locked<Double>(0)
    private let lastReport = Locked<ContinuousClock.Instant?>(nil)

    init(ids: [String], items: [ItemProgress], counters: BatchCounters, handler: (@Sendable (BatchProgress) -> Void)?) {
        self.ids = ids
        self.items = items
        self.counters = counters
        self.handler = handler
    }

    /// Reports unless the last report is more recent than `interval` seconds.
    func reportIfDue(interval: Double, results: () -> [Result<TransferSuccess, HTTPError>?]) {
        guard handler != nil else { return }
        let now = ContinuousClock.now
        let due = lastReport.withLock { last -> Bool in
            if let last, now - last < .milliseconds(Int64(interval * 1000)) { return false }
            last = now
            return true
        }
        if due { report(results: results(), final: false) }
    }

    func report(results: [Result<TransferSuccess, HTTPError>?], final: Bool) {
        guard let handler else { return }
        lastReport.withLock { $0 = ContinuousClock.now }
        var succeeded = 0
        var failed = 0
        var bytesDone: Int64 = 0
        var bytesExpected: Int64 = 0
        var sizeKnown = true
        var itemShares = 0.0
        var active: [TransferProgress] = []
        for (index, item) in items.enumerated() {
            let done = item.done.load(ordering: .relaxed)
            let expected = item.expected.load(ordering: .relaxed)
            switch results[index] {
            case .success(let success)?:
                succeeded += 1
                bytesDone += success.size
                bytesExpected += success.size
                itemShares += 1
            case .failure?:
                failed += 1
                itemShares += 1
                if expected >= 0 { bytesExpected += expected } else { sizeKnown = false }
                bytesDone += min(done, max(expected, 0))
            case nil:
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
        }
        let finishedAll = succeeded + failed == items.count
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(counters.received.load(ordering: .relaxed)) / elapsed
        lastFraction.withLock { last in
            var fraction: Double
            if finishedAll {
                fraction = 1
            } else if sizeKnown && bytesExpected > 0 {
                fraction = min(0.999, Double(bytesDone) / Double(bytesExpected))
            } else {
                fraction = items.isEmpty ? 1 : min(0.999, itemShares / Double(items.count))
            }
            fraction = max(fraction, last)
            last = fraction
            handler(
                BatchProgress(
                    totalItems: items.count, succeededItems: succeeded, failedItems: failed, bytesDone: bytesDone,
                    bytesExpected: bytesExpected, sizeKnown: sizeKnown, bytesPerSecond: rate,
                    active: finishedAll ? [] : active, fraction: fraction, isFinished: final))
        }
    }
}
