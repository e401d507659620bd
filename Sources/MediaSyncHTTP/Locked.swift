import Foundation

/// A value behind a pthread mutex, with `Mutex`'s `withLock` shape.
///
/// Used instead of the standard library's `Mutex` for state shared with the curl loop thread and the
/// transfer tasks: ThreadSanitizer understands pthread locks, and with `Mutex` it reported every such
/// handoff as a race (the suite runs under `--sanitize=thread`; Scripts/sanitizers.sh).
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
