import Foundation
import MediaSyncJSON
import Testing

@testable import MediaSyncTestServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FaultTests {
    let bytes = TestSupport.pattern(100_000)

    func makeServer() throws -> TestServer {
        let server = try TestSupport.makeServer()
        server.setFile("/files/f.bin", contents: bytes)
        return server
    }

    @Test func statusFaultAppliesOnceThenNormalService() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.inject(.status(503), path: "/files/f.bin", count: 2)
        #expect(try TestSupport.request(server, "/files/f.bin").status == 503)
        #expect(try TestSupport.request(server, "/files/other").status == 404)
        let second = try TestSupport.request(server, "/files/f.bin")
        #expect(second.status == 503)
        #expect(second.headers["content-length"] == "0")
        #expect(try TestSupport.request(server, "/files/f.bin").status == 200)
        #expect(server.requests(to: "/files/f.bin").count == 3)
    }

    /// A fault's `then` (the file changes between a client's attempts) is one step with the fault firing.
    /// Here a second client asks for the file while `then` runs; it must get the changed file, never the old one.
    /// Before the routing gate it was served the old bytes (the fault matrix's "damaged" enclosure under TSan:
    /// the client's retry, sent after a low-speed timeout, got the complete old file and the change came after).
    @Test func aRequestRoutedAfterAFaultFiredSeesTheFaultsChange() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let changed = bytes.map { $0 ^ 0x5a }
        let other = ResponseBox()
        server.inject(.truncate(afterBytes: 10), path: "/files/f.bin") {
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                other.set(try? TestSupport.request(server, "/files/f.bin"))
                done.signal()
            }
            // Old behaviour: the second request is answered at once, from the file before the change. With the
            // gate it waits for this closure, so the wait runs out (it only bounds how long this test takes).
            _ = done.wait(timeout: .now() + 2)
            server.setFile("/files/f.bin", contents: changed, lastModified: Date(timeIntervalSince1970: 1_700_000_600))
        }
        #expect(throws: (any Error).self) { try TestSupport.request(server, "/files/f.bin") }
        for _ in 0..<2_000 where other.get() == nil { usleep(5_000) }
        let second = try #require(other.get())
        #expect(second.status == 200)
        // A Bool, not the arrays: Swift Testing would diff 100,000 bytes for the message.
        let seesTheChange = second.body == changed
        #expect(seesTheChange, "the second request was answered from the file before the fault's change")
    }

    @Test func wildcardRetryAfterRedirectBodyAndClear() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.inject(.retryAfter(status: 429, seconds: 7), path: "*")
        let limited = try TestSupport.request(server, "/anything")
        #expect(limited.status == 429)
        #expect(limited.headers["retry-after"] == "7")

        server.inject(.redirect(location: "/files/f.bin", status: 302), path: "/old")
        let moved = try TestSupport.request(server, "/old")
        #expect(moved.status == 302)
        #expect(moved.headers["location"] == "/files/f.bin")

        server.inject(
            .body(status: 200, contentType: "text/html", bytes: Array("<html>oops".utf8)), path: "/files/f.bin")
        let garbage = try TestSupport.request(server, "/files/f.bin")
        #expect(garbage.status == 200)
        #expect(garbage.headers["content-type"] == "text/html")
        #expect(garbage.text == "<html>oops")

        server.inject(.status(500), path: "/files/f.bin", count: 5)
        server.clearFaults()
        #expect(try TestSupport.request(server, "/files/f.bin").status == 200)
    }

    @Test func rangeFaults() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.inject(.ignoreRange, path: "/files/f.bin")
        let ignored = try TestSupport.request(server, "/files/f.bin", headers: [("Range", "bytes=10-")])
        #expect(ignored.status == 200)
        #expect(TestSupport.same(ignored.body, bytes))

        server.inject(.rangeNotSatisfiable, path: "/files/f.bin")
        let refused = try TestSupport.request(server, "/files/f.bin", headers: [("Range", "bytes=10-")])
        #expect(refused.status == 416)
        #expect(refused.headers["content-range"] == "bytes */100000")
    }

    @Test func truncateSendsFullLengthThenFin() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.inject(.truncate(afterBytes: 1000), path: "/files/f.bin")
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/files/f.bin")
        let head = try connection.readHead()
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "100000")
        let rest = connection.readUntilEnd()
        #expect(TestSupport.same(rest.bytes, Array(bytes[0..<1000])))
        #expect(rest.end == 0)
    }

    @Test func resetAfterSendsRst() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.inject(.resetAfter(bytes: 1000), path: "/files/f.bin")
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/files/f.bin", headers: [("Range", "bytes=0-")])
        let head = try connection.readHead()
        #expect(head.status == 206)
        let rest = connection.readUntilEnd()
        #expect(rest.end == -Int(ECONNRESET))
        #expect(rest.bytes.count <= 1000)
        #expect(TestSupport.same(rest.bytes, Array(bytes[0..<rest.bytes.count])))
    }

    @Test func stallGoesSilentThenCloses() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.inject(.stall(afterBytes: 500, seconds: 0.8), path: "/files/f.bin")
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/files/f.bin")
        _ = try connection.readHead()
        connection.setReceiveTimeout(0.3)
        let first = connection.readUntilEnd()
        #expect(TestSupport.same(first.bytes, Array(bytes[0..<500])))
        #expect(first.end == -Int(EAGAIN))  // silent: receive timed out
        connection.setReceiveTimeout(5)
        let start = Date()
        let second = connection.readUntilEnd()
        #expect(second.bytes.isEmpty)
        #expect(second.end == 0)
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func stallIsCutShortByShutdown() throws {
        let server = try makeServer()
        server.inject(.stall(afterBytes: 10, seconds: 30), path: "/files/f.bin")
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/files/f.bin")
        _ = try connection.readHead()
        usleep(100_000)
        let start = Date()
        server.shutdown()
        #expect(Date().timeIntervalSince(start) < 2)
        let rest = connection.readUntilEnd()
        #expect(rest.end <= 0)
        #expect(server.activeConnections == 0)
    }

    @Test func aListingCanLieAboutItsTotalAndAFaultCanChangeTheServerWhenItFires() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.setFile(
            "/list", contents: Array(#"{"Items":[{"Id":"a"}],"TotalRecordCount":1,"StartIndex":0}"#.utf8),
            contentType: "application/json")
        server.inject(.totalRecordCount(7), path: "/list")
        let lying = try TestSupport.request(server, "/list")
        #expect(
            lying.json == JSONValue.parse(Array(#"{"Items":[{"Id":"a"}],"TotalRecordCount":7,"StartIndex":0}"#.utf8)))
        #expect(lying.headers["content-length"] == String(lying.body.count))
        #expect(
            try TestSupport.request(server, "/list").json?.serializedString().contains("\"TotalRecordCount\":1") == true
        )

        // The action runs when the fault fires: the next request sees the change.
        server.inject(.status(503), path: "/files/f.bin") { server.setFile("/files/f.bin", contents: [1, 2, 3]) }
        #expect(try TestSupport.request(server, "/files/f.bin").status == 503)
        #expect(try TestSupport.request(server, "/files/f.bin").body == [1, 2, 3])
    }
}

/// A response handed from another thread.
final class ResponseBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: RawResponse?

    func set(_ response: RawResponse?) {
        lock.lock()
        value = response
        lock.unlock()
    }

    func get() -> RawResponse? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
