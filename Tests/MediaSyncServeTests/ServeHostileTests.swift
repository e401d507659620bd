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
                // The page is answered beside them too, and its image routes refuse what climbs out of a folder.
                let web = WebClient(base: http.base)
                #expect(try await web.send("GET", "/mediasync/image/held/..%2F..%2Fsecret").status == 401)
                let signedIn = try await web.send(
                    "POST", "/mediasync/sign-in", form: ["password": ServeFixture.password])
                #expect(signedIn.status == 303)
                #expect(try await web.send("GET", "/mediasync/image/held/..%2F..%2Fsecret").status == 404)
                #expect(try await web.send("GET", "/mediasync/image/held/%2E%2E").status == 404)
                #expect(try await web.send("GET", "/mediasync/image/server/..%2F..%2Fsecret").status == 400)
                #expect(try await web.send("GET", "/mediasync/").text.contains("<h1>Mirror</h1>"))
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

    /// A request head over the decoder's limits (80 KB) gets 431 and one that is not HTTP gets 400, each on a closed
    /// connection, as from a web server; before, such a client waited on an open connection for an answer that never
    /// came.
    @Test func aHeadTooLargeOrNotHTTPIsAnsweredAndClosed() async throws {
        let library = TestLibrary(
            movies: 1, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 1_000, seed: 72)
        try await ServeFixture.with(library) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try await fixture.serving { http in
                let port = Int(http.base.split(separator: ":").last ?? "0") ?? 0
                let large =
                    "GET /System/Info/Public HTTP/1.1\r\nHost: x\r\nX-Filler: \(String(repeating: "a", count: 100_000))\r\n\r\n"
                let garbage = "\u{16}\u{03}\u{01} not a request at all\r\n\r\n"
                for (request, status) in [(large, "431"), (garbage, "400")] {
                    let answer = try await offThePool { () throws -> String in
                        let fd = try RawWebSocket.connect(port: port)
                        defer { close(fd) }
                        // The server may close before it has read all of a head it refuses.
                        try? RawWebSocket.write(fd, Array(request.utf8))
                        return String(decoding: RawWebSocket.readToEnd(fd), as: UTF8.self)
                    }
                    #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer)")
                    #expect(answer.lowercased().contains("connection: close"), "\(answer)")
                }
                // The server goes on answering.
                #expect(try await http.send("GET", "/System/Info/Public").status == 200)
            }
        }
    }

    /// `serve` (the binary) stops on SIGTERM while a client that asked for a whole movie reads none of it: the stalled
    /// stream's connection is ended, not waited for.
    @Test func aStalledStreamDoesNotHoldTheShutdown() async throws {
        let library = TestLibrary(
            movies: 1, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, mediaSize: 16 << 20, seed: 73)
        try await ServeFixture.with(library) { fixture in
            let (process, address) = try await ServeCommandTests.serve(fixture)
            let http = ServeHTTP(base: address, serverId: "")
            let token = try await ServeClientRulesTests.signedIn(http)
            let port = Int(address.split(separator: ":").last ?? "0") ?? 0
            let request =
                "GET /Videos/\(library.movies[0].id)/stream?static=true HTTP/1.1\r\nHost: x\r\nX-Emby-Token: \(token)\r\n\r\n"
            let stalled = try await offThePool { () throws -> Int32 in
                let fd = try RawWebSocket.connect(port: port)
                try RawWebSocket.write(fd, Array(request.utf8))
                // The head has come: the body is under way, and stays so (16 MiB do not fit in the socket buffers).
                var head: [UInt8] = []
                while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                    head.append(contentsOf: try RawWebSocket.read(fd, 1))
                }
                return fd
            }
            defer { close(stalled) }
            process.send(SIGTERM)
            // A bound for a loaded machine, not a timing check: a shutdown the stream holds never ends.
            let ended = await offThePool { () -> Bool in
                for _ in 0..<60_000 where process.isRunning { usleep(10_000) }
                return !process.isRunning
            }
            if !ended { process.send(SIGKILL) }
            #expect(ended, "serve did not stop while a client held a stream")
            #expect(process.finish().status == 0)
        }
    }
}
