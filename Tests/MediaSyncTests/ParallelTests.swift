import Foundation
import Testing

@testable import MediaSync

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
}
