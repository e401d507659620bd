import Foundation
import Testing

@testable import MediaSyncTestServer

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ConnectionTests {
    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        server.setFile("/files/a", contents: [1, 2, 3])
        server.setFile("/files/b", contents: [4, 5])
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest("GET", "/files/a")
        let first = try connection.readResponse()
        #expect(first.body == [1, 2, 3])
        #expect(first.headers["connection"] == nil)
        try connection.sendRequest("HEAD", "/files/b")
        let second = try connection.readResponse(isHead: true)
        #expect(second.headers["content-length"] == "2")
        // Pipelined: two requests in one write.
        try connection.send(
            Array(
                "GET /files/b HTTP/1.1\r\nHost: x\r\n\r\nGET /files/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .utf8))
        #expect(try connection.readResponse().body == [4, 5])
        let last = try connection.readResponse()
        #expect(last.body == [1, 2, 3])
        #expect(last.headers["connection"] == "close")
        #expect(connection.readUntilEnd().end == 0)
        #expect(server.allRequests.count == 4)
    }

    @Test func curlReusesTheConnection() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        server.setFile("/files/a", contents: [1, 2, 3])
        // posix_spawn + waitpid rather than Foundation.Process (whose waitUntilExit can hang on Linux).
        let logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("curl-reuse-\(server.port)-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let status = try TestSupport.runProcess(
            "/usr/bin/curl",
            [
                "-sv", "--stderr", logPath, "-o", "/dev/null", "-o", "/dev/null",
                "\(server.baseURL)/files/a", "\(server.baseURL)/files/a",
            ])
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        #expect(status == 0)
        #expect(log.lowercased().contains("re-using existing") || log.lowercased().contains("reusing existing"))
        #expect(server.requests(to: "/files/a").count == 2)
    }

    @Test func chunkedAndExpectContinueBodies() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.send(
            Array(
                "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
                    .utf8))
        #expect(try connection.readResponse().status == 404)
        try connection.send(
            Array("POST /upload2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n".utf8))
        #expect(try connection.readHead().status == 100)
        try connection.send([7, 8, 9])
        #expect(try connection.readResponse().status == 404)
        #expect(server.requests(to: "/upload").first?.body == Array("hello world".utf8))
        #expect(server.requests(to: "/upload2").first?.body == [7, 8, 9])
    }

    @Test func countsConnectionsAndConcurrentRequests() async throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        server.setFile("/files/slow", contents: TestSupport.pattern(40_000))
        server.setThrottle(bytesPerSecond: 100_000)  // each response ≈ 0.4 s
        let port = server.port
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let connection = try RawHTTPConnection(port: port)
                    try connection.sendRequest("GET", "/files/slow")
                    return try connection.readResponse().body.count
                }
            }
            for try await count in group { #expect(count == 40_000) }
        }
        #expect(server.maxConcurrentRequests >= 2)
        #expect(server.maxConcurrentRequests <= 3)
        server.resetStatistics()
        #expect(server.maxConcurrentRequests == 0)

        let idle = try RawHTTPConnection(port: port)
        try idle.sendRequest("GET", "/nothing")
        _ = try idle.readResponse()
        #expect(server.activeConnections >= 1)
    }

    @Test func shutdownClosesEverything() throws {
        let server = try TestSupport.makeServer()
        let idle = try RawHTTPConnection(port: server.port)
        let busy = try RawHTTPConnection(port: server.port)
        try busy.sendRequest("GET", "/files/none")
        _ = try busy.readResponse()
        // Wait until the server has registered both connections.
        for _ in 0..<100 where server.activeConnections < 2 { usleep(10_000) }
        #expect(server.activeConnections == 2)
        server.shutdown()
        server.shutdown()  // idempotent
        #expect(server.activeConnections == 0)
        #expect(idle.readUntilEnd().end == 0)
        #expect(busy.readUntilEnd().end == 0)
        #expect(throws: RawHTTPError.self) { _ = try RawHTTPConnection(port: server.port) }
    }

    @Test func malformedRequestGets400() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let connection = try RawHTTPConnection(port: server.port)
        try connection.send(Array("NONSENSE\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 400)
        #expect(connection.readUntilEnd().end == 0)
    }

    @Test func httpDateRoundTrip() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(HTTPDate.format(date) == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.parse("Tue, 14 Nov 2023 22:13:20 GMT") == date)
        #expect(HTTPDate.parse("Tuesday, 14-Nov-23 22:13:20 GMT") == date)
        #expect(HTTPDate.parse("\"etag\"") == nil)
    }
}
