import Foundation
import MediaSyncHTTP

/// Work spread over threads where one core would otherwise do it all (reading and parsing thousands of small
/// documents, `stat` of thousands of files).
enum Parallel {
    /// `transform` of every element, on up to `threads` threads each taking a contiguous share; the results in the
    /// elements' order. Fewer than 64 elements a thread are not worth a thread.
    static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ transform: @Sendable (Element) -> Result
    ) -> [Result] {
        let lanes = max(1, min(threads, elements.count / 64))
        guard lanes > 1 else { return elements.map(transform) }
        // Each lane puts its results straight into their places in the one array returned (joining per-lane arrays
        // copied every result once more: a retain and a release per string of 32,000 planned files).
        return [Result](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            let results = SendablePointer(base)
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                for position in (lane * elements.count / lanes)..<((lane + 1) * elements.count / lanes) {
                    (results.pointer + position).initialize(to: transform(elements[position]))
                }
            }
            initialized = elements.count
        }
    }

    /// `work` started now on a thread of its own, its result awaited later (``Pending/value()``). Not a task: a
    /// blocking read (the index's) on one of the few cooperative threads would hold up the tasks that read a
    /// listing meanwhile.
    static func start<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) -> Pending<Value> {
        let pending = Pending<Value>()
        Thread { pending.finish(Swift.Result { try work() }) }.start()
        return pending
    }

    /// The result of ``start(_:)``, once its thread has finished. Any number of callers may wait for it.
    final class Pending<Value: Sendable>: Sendable {
        private let state = Locked<
            (result: Swift.Result<Value, any Error>?, waiting: [CheckedContinuation<Void, Never>])
        >(
            (nil, []))

        fileprivate func finish(_ result: Swift.Result<Value, any Error>) {
            let waiting = state.withLock { state in
                state.result = result
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        /// The result: waits for the thread when it has not finished yet; rethrows what the work threw.
        func value() async throws -> Value {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if state.result != nil { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
            guard let result = state.withLock({ $0.result }) else { throw CancellationError() }
            return try result.get()
        }
    }

    /// Where the lanes of ``map(_:threads:_:)`` put their results; each lane writes only its own positions.
    private struct SendablePointer<Pointee>: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Pointee>
        init(_ pointer: UnsafeMutablePointer<Pointee>) { self.pointer = pointer }
    }

    /// `first` on this thread while `second` runs on a thread of its own (not a dispatch worker: `map` inside either
    /// still gets every core, where a nested `concurrentPerform` would run one lane after the other); the first
    /// error thrown (the first's if both throw).
    static func both<A: Sendable, B: Sendable>(
        _ first: () throws -> A, _ second: @escaping @Sendable () throws -> B
    ) throws -> (A, B) {
        let b = Locked<Swift.Result<B, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = Swift.Result { try second() }
            b.withLock { $0 = result }
            done.signal()
        }.start()
        let left = Swift.Result { try first() }
        done.wait()
        guard let right = b.withLock({ $0 }) else { throw CancellationError() }
        return (try left.get(), try right.get())
    }

    /// `work` for every position of `0..<count`, `width` at a time, the next started as soon as one ends (never a
    /// whole group waiting for its slowest); `each` sees every result as it comes, on the caller's task. The first
    /// error thrown by `work` or `each` ends it (the work under way is cancelled).
    static func inFlight<Value: Sendable>(
        _ count: Int, width: Int, _ work: @escaping @Sendable (Int) async throws -> Value,
        each: (Int, Value) throws -> Void
    ) async throws {
        guard count > 0 else { return }
        try await withThrowingTaskGroup(of: (Int, Value).self) { group in
            var next = 0
            func start() {
                let position = next
                next += 1
                group.addTask { (position, try await work(position)) }
            }
            while next < min(count, max(1, width)) { start() }
            for try await (position, value) in group {
                try each(position, value)
                if next < count { start() }
            }
        }
    }
}
