/// One running transfer's progress.
public struct TransferProgress: Sendable, Equatable {
    /// The request's id.
    public var id: String
    /// Bytes of the file on disk so far (resumed bytes included).
    public var bytesDone: Int64
    /// The file's full size, once known.
    public var bytesExpected: Int64?
}

/// Progress across a whole batch: one figure for all transfers, not one per file.
public struct BatchProgress: Sendable, Equatable {
    /// Transfers in the batch.
    public var totalItems: Int
    /// Transfers that succeeded so far.
    public var succeededItems: Int
    /// Transfers that failed for good so far.
    public var failedItems: Int
    /// Bytes on disk across the batch: finished files plus partial ones.
    public var bytesDone: Int64
    /// The batch's total size, counting only the transfers whose size is known.
    public var bytesExpected: Int64
    /// Whether every transfer's size is known, so that ``bytesExpected`` is the true total.
    public var sizeKnown: Bool
    /// Bytes received from the network in this batch, divided by the seconds since it started.
    public var bytesPerSecond: Double
    /// The running transfers.
    public var active: [TransferProgress]
    /// The share of the batch done, 0...1. It never decreases and is 1 exactly when every transfer is finished.
    public var fraction: Double
    /// Whether this is the last report of the batch.
    public var isFinished: Bool

    /// Seconds until the batch is done at the current rate, when that can be estimated.
    public var estimatedSecondsRemaining: Double? {
        guard sizeKnown, bytesPerSecond > 0, bytesExpected >= bytesDone else { return nil }
        return Double(bytesExpected - bytesDone) / bytesPerSecond
    }
}
