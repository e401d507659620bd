import Testing

@testable import MediaSyncHTTP

/// The order the transfer engine hands out a batch in, and each transfer's receive buffer.
@Suite struct TransferSchedulerTests {
    @Test func handsOutByPriorityThenInIndexOrder() async {
        let scheduler = TransferScheduler(
            priorities: [0, 2, 1, 2, 0], hosts: Array(repeating: "a", count: 5), perHostLimit: 9)
        var order: [Int] = []
        while let next = await scheduler.next() { order.append(next) }
        #expect(order == [1, 3, 2, 0, 4])
    }

    @Test func aCappedHostIsPassedOverAndTheRestStopsInOrder() async {
        // Host "a" may run one at a time: with item 0 running, item 1 (also "a") waits and item 2 ("b") goes.
        let scheduler = TransferScheduler(priorities: [0, 0, 0, 0], hosts: ["a", "a", "b", "a"], perHostLimit: 1)
        #expect(await scheduler.next() == 0)
        #expect(await scheduler.next() == 2)
        scheduler.finish(0)
        #expect(await scheduler.next() == 1)
        #expect(scheduler.stop() == [3])
        #expect(await scheduler.next() == nil)
    }

    @Test(arguments: [
        (Int64?.none, 524_288),
        (Int64(2_000), 16_384),
        (Int64(0), 16_384),
        (Int64(100_000), 100_001),
        (Int64(524_287), 524_288),
        (Int64(524_288), 524_288),
        (Int64(5_000_000), 524_288),
        (Int64(-1), 524_288),
    ])
    func theReceiveBufferFitsAFileKnownToBeSmall(expected: Int64?, buffer: Int) {
        let request = TransferRequest(
            id: "x", url: "http://127.0.0.1/x", destination: "/tmp/x", expectedSize: expected)
        #expect(TransferEngine.receiveBuffer(512 << 10, for: request) == buffer)
    }
}
