import Foundation
import MediaSyncHTTP
import Testing

@testable import MediaSyncMirror

/// Work spread over threads: results in order, and work started ahead awaited by any number of callers.
struct ParallelTests {
    @Test(arguments: [0, 1, 63, 64, 129, 1_000])
    func mapKeepsTheElementsOrder(_ count: Int) {
        let elements = (0..<count).map { "element \($0)" }
        #expect(Parallel.map(elements, threads: 3) { $0.uppercased() } == elements.map { $0.uppercased() })
    }

    @Test func startedWorkIsAwaitedByEveryWaiterAndRethrows() async throws {
        let release = DispatchSemaphore(value: 0)
        let pending = Parallel.start { () -> [String] in
            release.wait()
            return ["done"]
        }
        // Two waiters before the work ends, one after.
        async let first = pending.value()
        async let second = pending.value()
        release.signal()
        #expect(try await first == ["done"])
        #expect(try await second == ["done"])
        #expect(try await pending.value() == ["done"])

        struct Refused: Error {}
        let failing = Parallel.start { () throws -> Int in throw Refused() }
        await #expect(throws: Refused.self) { try await failing.value() }
    }

    @Test(arguments: [0, 1, 3, 4, 50])
    func inFlightDoesEveryPositionOnceNeverMoreThanItsWidthAtATime(_ count: Int) async throws {
        let running = Locked((now: 0, most: 0))
        var seen: [Int: Int] = [:]
        try await Parallel.inFlight(count, width: 4) { position in
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            await Task.yield()
            running.withLock { $0.now -= 1 }
            return position * 2
        } each: { position, value in
            seen[position] = value
        }
        #expect(seen == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, $0 * 2) }))
        #expect(running.withLock { $0.most } <= 4)
    }

    @Test func inFlightEndsAtTheFirstError() async {
        struct Stop: Error {}
        var handled = 0
        await #expect(throws: Stop.self) {
            try await Parallel.inFlight(100, width: 2) { position in
                if position == 5 { throw Stop() }
                return position
            } each: { _, _ in
                handled += 1
            }
        }
        #expect(handled < 100)
    }
}
