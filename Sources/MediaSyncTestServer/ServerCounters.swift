import Foundation

/// What the test server counts of its own work, and what that work costs.
public final class ServerCounters: @unchecked Sendable {
    private let lock = NSLock()
    private var _mediaSourcesBuilt = 0
    private var _mediaSourceCost: Double = 0

    /// Items whose `MediaSources` were built into an answer (a listing with `fields=MediaSources`, an item by id).
    /// Real servers build them per item before the first byte of a page (DtoService 10.11 L259–264); 10.11's slow
    /// listings come from it (Jellyfin issues #14336, #15063).
    public var mediaSourcesBuilt: Int { lock.withLock { _mediaSourcesBuilt } }

    /// Seconds each item's media sources cost to build (0 by default): a 10.11 server's per-item cost, for the
    /// benchmark.
    public var mediaSourceCost: Double {
        get { lock.withLock { _mediaSourceCost } }
        set { lock.withLock { _mediaSourceCost = max(0, newValue) } }
    }

    public func reset() { lock.withLock { _mediaSourcesBuilt = 0 } }

    /// Counts `count` items built, and waits their cost.
    func built(_ count: Int) {
        guard count > 0 else { return }
        let cost = lock.withLock { () -> Double in
            _mediaSourcesBuilt += count
            return _mediaSourceCost
        }
        if cost > 0 { usleep(UInt32(min(cost * Double(count), 60) * 1_000_000)) }
    }
}
