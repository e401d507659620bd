import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a LAN-facing server meets: connections that never say anything, a client that asks for a stream and never
/// reads it, ids with a NUL in them. Every other client is still served, and each bad request gets its status.
@Suite struct ServeHostileTests {
    @Test func idleAndStalledConnectionsLeaveEveryOtherClientServed() async throws {
        // Big enough that a stream does not fit in the socket buffers of a client that never reads.
        let library = TestLibrary(
            movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 1, mediaSize: 8 << 20, seed: 71)
        try await ServeFixture.with(library) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let movie = library.movies[0]
            let episode = library.episodes[0]
            let bytes = library.mediaBytes(forMediaSourceId: episode.mediaSources[0].id) ?? []
            // The server runs in this process: room for both ends of 1,000 connections.
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            if limit.rlim_cur < 4096 {
                limit.rlim_cur = min(4096, limit.rlim_max)
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
            let idleCount = limit.rlim_cur >= 4096 ? 1_000 : Int(limit.rlim_cur / 4)
            try await fixture.serving { http in
                let token = try await ServeClientRulesTests.signedIn(http)
                let port = Int(http.base.split(separator: ":").last ?? "0") ?? 0
                // Blocking socket calls run off Swift's cooperative pool: the server runs on it in this process.
                let idle = try await offThePool {
                    try (0..<idleCount).map { _ in try RawWebSocket.connect(port: port) }
                }
                defer { idle.forEach { close($0) } }
                // A client that asks for the whole movie and never reads a byte of it.
                let request =
                    "GET /Videos/\(movie.id)/stream?static=true HTTP/1.1\r\nHost: x\r\nX-Emby-Token: \(token)\r\n\r\n"
                let stalled = try await offThePool { () throws -> Int32 in
                    let fd = try RawWebSocket.connect(port: port)
                    try RawWebSocket.write(fd, Array(request.utf8))
                    return fd
                }
                defer { close(stalled) }

                #expect(try await http.send("GET", "/System/Info/Public").status == 200)
                let whole = try await http.send("GET", "/Items/\(episode.id)/Download", token: token)
                #expect(whole.status == 200)
                #expect(whole.body == bytes)
                let range = try await http.send(
                    "GET", "/Videos/\(episode.id)/stream", token: token, headers: ["Range": "bytes=1000-1999"])
                #expect(range.body == Array(bytes[1000...1999]))
                // A NUL, encoded, in an id; ids that climb out of a folder.
                #expect(try await http.send("GET", "/Items/abc%00def", token: token).status == 400)
                #expect(try await http.send("GET", "/Items/%2E%2E", token: token).status == 400)
                #expect(try await http.send("GET", "/Items/\(movie.id)/Images/..%2F..%2Fsecret").status == 404)
                // The stalled client is still there and can read its answer's head now.
                let head = try await offThePool { () throws -> [UInt8] in
                    var head: [UInt8] = []
                    while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                        head.append(contentsOf: try RawWebSocket.read(stalled, 1))
                    }
                    return head
                }
                #expect(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            }
        }
    }
}
