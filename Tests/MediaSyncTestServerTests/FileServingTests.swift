import Foundation
import MediaSyncCore
import Testing

@testable import MediaSyncTestServer

@Suite struct FileServingTests {
    let lastModified = "Tue, 14 Nov 2023 22:13:20 GMT"

    @Test func fullGetHasValidatorsAndLength() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let bytes = TestSupport.pattern(1000)
        server.setFile("/files/a.bin", contents: bytes, contentDispositionFilename: "a.bin")
        let r = try TestSupport.request(server, "/files/a.bin?x=1")
        #expect(r.status == 200)
        #expect(TestSupport.same(r.body, bytes))
        #expect(r.headers["content-length"] == "1000")
        #expect(r.headers["last-modified"] == lastModified)
        #expect(r.headers["accept-ranges"] == "bytes")
        #expect(r.headers["etag"] == nil)
        #expect(r.headers["content-disposition"] == "attachment; filename=\"a.bin\"")
        #expect(r.headers["content-type"] == "application/octet-stream")

        let head = try TestSupport.request(server, "HEAD", "/files/a.bin")
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "1000")
        #expect(head.body.isEmpty)

        server.removeFile("/files/a.bin")
        #expect(try TestSupport.request(server, "/files/a.bin").status == 404)
    }

    @Test func rangeRequests() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let bytes = TestSupport.pattern(1000)
        server.setFile("/files/a.bin", contents: bytes)

        let middle = try TestSupport.request(server, "/files/a.bin", headers: [("Range", "bytes=100-199")])
        #expect(middle.status == 206)
        #expect(middle.headers["content-range"] == "bytes 100-199/1000")
        #expect(TestSupport.same(middle.body, Array(bytes[100..<200])))

        let open = try TestSupport.request(server, "/files/a.bin", headers: [("Range", "bytes=900-")])
        #expect(open.status == 206)
        #expect(open.headers["content-range"] == "bytes 900-999/1000")
        #expect(TestSupport.same(open.body, Array(bytes[900...])))

        let clamped = try TestSupport.request(server, "/files/a.bin", headers: [("Range", "bytes=990-5000")])
        #expect(clamped.headers["content-range"] == "bytes 990-999/1000")

        let suffix = try TestSupport.request(server, "/files/a.bin", headers: [("Range", "bytes=-10")])
        #expect(suffix.status == 206)
        #expect(TestSupport.same(suffix.body, Array(bytes[990...])))

        let beyond = try TestSupport.request(server, "/files/a.bin", headers: [("Range", "bytes=1000-")])
        #expect(beyond.status == 416)
        #expect(beyond.headers["content-range"] == "bytes */1000")
        #expect(beyond.body.isEmpty)

        let multi = try TestSupport.request(server, "/files/a.bin", headers: [("Range", "bytes=0-1,5-6")])
        #expect(multi.status == 200)
        #expect(multi.body.count == 1000)
    }

    @Test func ifRangeWithDate() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let bytes = TestSupport.pattern(500)
        server.setFile("/files/a.bin", contents: bytes)

        let match = try TestSupport.request(
            server, "/files/a.bin", headers: [("Range", "bytes=100-"), ("If-Range", lastModified)])
        #expect(match.status == 206)
        #expect(TestSupport.same(match.body, Array(bytes[100...])))

        let mismatch = try TestSupport.request(
            server, "/files/a.bin",
            headers: [("Range", "bytes=100-"), ("If-Range", "Tue, 14 Nov 2023 22:13:21 GMT")])
        #expect(mismatch.status == 200)
        #expect(TestSupport.same(mismatch.body, bytes))
    }

    @Test func ifRangeWithEntityTag() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let bytes = TestSupport.pattern(500)
        server.setFile("/files/noetag.bin", contents: bytes)
        server.setFile("/files/etag.bin", contents: bytes, etag: "abc")

        // ASP.NET quirk: the resource has no ETag, so an entity-tag If-Range is not checked at all → 206.
        let quirk = try TestSupport.request(
            server, "/files/noetag.bin", headers: [("Range", "bytes=100-"), ("If-Range", "\"stale\"")])
        #expect(quirk.status == 206)
        #expect(TestSupport.same(quirk.body, Array(bytes[100...])))

        let strong = try TestSupport.request(
            server, "/files/etag.bin", headers: [("Range", "bytes=100-"), ("If-Range", "\"abc\"")])
        #expect(strong.status == 206)
        #expect(strong.headers["etag"] == "\"abc\"")
        let other = try TestSupport.request(
            server, "/files/etag.bin", headers: [("Range", "bytes=100-"), ("If-Range", "\"zzz\"")])
        #expect(other.status == 200)
        let weak = try TestSupport.request(
            server, "/files/etag.bin", headers: [("Range", "bytes=100-"), ("If-Range", "W/\"abc\"")])
        #expect(weak.status == 200)
    }

    @Test func conditionalGets() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        server.setFile("/files/etag.bin", contents: TestSupport.pattern(10), etag: "\"v1\"")
        let hit = try TestSupport.request(server, "/files/etag.bin", headers: [("If-None-Match", "\"v1\"")])
        #expect(hit.status == 304)
        #expect(hit.body.isEmpty)
        #expect(
            try TestSupport.request(server, "/files/etag.bin", headers: [("If-None-Match", "\"v0\"")]).status == 200)
        #expect(
            try TestSupport.request(server, "/files/etag.bin", headers: [("If-Modified-Since", lastModified)]).status
                == 304)
        #expect(
            try TestSupport.request(
                server, "/files/etag.bin",
                headers: [("If-Modified-Since", "Tue, 14 Nov 2023 22:13:19 GMT")]
            ).status == 200)
    }

    @Test func largeBodyAndThrottle() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let big = SplitMix64.bytes(seed: 7, count: 12 * 1024 * 1024)
        server.setFile("/files/big.bin", contents: big)
        let full = try TestSupport.request(server, "/files/big.bin")
        #expect(TestSupport.same(full.body, big))

        server.setFile("/files/slow.bin", contents: TestSupport.pattern(100_000))
        server.setThrottle(bytesPerSecond: 400_000)
        let start = Date()
        let slow = try TestSupport.request(server, "/files/slow.bin")
        let elapsed = Date().timeIntervalSince(start)
        #expect(slow.body.count == 100_000)
        #expect(elapsed >= 0.2)
        server.setThrottle(bytesPerSecond: nil)
    }

    @Test func recordsRequests() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        server.setFile("/files/a b.bin", contents: [1, 2, 3])
        let r = try TestSupport.request(
            server, "POST", "/files/a%20b.bin?Name=x%20y&plus=a+b&empty", headers: [("X-Thing", "1")],
            body: Array("hello".utf8))
        #expect(r.status == 405)
        let recorded = server.requests(to: "/files/a b.bin")
        #expect(recorded.count == 1)
        #expect(recorded.first?.method == "POST")
        #expect(recorded.first?.query == ["Name": "x y", "plus": "a b", "empty": ""])
        #expect(recorded.first?.headers["x-thing"] == "1")
        #expect(TestSupport.same(recorded.first?.body, Array("hello".utf8)))
        #expect(server.allRequests.count == 1)
        server.resetStatistics()
        #expect(server.allRequests.isEmpty)
    }
}
