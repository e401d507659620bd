import MediaSyncTestServer
import Testing

@testable import MediaSyncHTTP

/// The shared libcurl loop's hand-over of operations.
@Suite struct CurlMultiLoopTests {
    /// A cancellation can reach the loop a round before its operation does (the task is cancelled between its
    /// check and the hand-over): the loop finishes such an operation as cancelled and never starts it.
    @Test func anOperationCancelledBeforeTheLoopAddsItIsNeverStarted() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/never", contents: Array(repeating: 1, count: 10))
        let url = server.baseURL + "/never"
        let operation = try CurlOperation(url: url, handler: MemoryCollector(limit: 100, url: url))
        operation.requestCancel()
        let completion = await CurlMultiLoop.shared.perform(operation)
        #expect(completion.abortError?.kind == HTTPError.cancelled(url: url).kind)
        #expect(server.requests(to: "/never").isEmpty)

        // The same loop still runs what is not cancelled.
        let running = try CurlOperation(url: url, handler: MemoryCollector(limit: 100, url: url))
        let done = await CurlMultiLoop.shared.perform(running)
        #expect(done.code == .ok && done.status == 200)
        #expect(server.requests(to: "/never").count == 1)
    }
}
