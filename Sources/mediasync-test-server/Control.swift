import Foundation
import MediaSyncTestServer

/// The `--control` endpoints, for scripts that drive the server between runs of a client.
///
/// - `GET /__control/stats`: `{"inFlight", "responses", "bodyBytesSent", "generation", "mediaSourcesBuilt"}`
///   (`inFlight` counts this request too; `mediaSourcesBuilt`: items whose media sources were built so far).
/// - `POST|GET /__control/throttle?bytes=N`: caps each response body at N bytes/second (0: unlimited).
/// - `POST|GET /__control/change-media?count=N`: gives the next N media sources (round-robin over the library)
///   new bytes and a new ETag and Last-Modified, same size; answers the ids changed and bumps `generation`.
func installControl(on server: TestServer) {
    let state = ControlState()
    server.setHandler("/__control/stats") { _ in
        let body =
            "{\"inFlight\":\(server.requestsInFlight),\"responses\":\(server.responses.count),"
            + "\"bodyBytesSent\":\(server.bodyBytesSent),\"generation\":\(state.generation),"
            + "\"mediaSourcesBuilt\":\(server.counters.mediaSourcesBuilt)}"
        return TestServer.CustomResponse(body: Array(body.utf8))
    }
    server.setHandler("/__control/throttle") { request in
        guard let text = request.queryValue("bytes"), let bytes = Int(text), bytes >= 0 else {
            return TestServer.CustomResponse(
                status: 400, contentType: "text/plain", body: Array("bytes=N wanted\n".utf8))
        }
        server.setThrottle(bytesPerSecond: bytes == 0 ? nil : bytes)
        return TestServer.CustomResponse(body: Array("{\"throttle\":\(bytes)}".utf8))
    }
    server.setHandler("/__control/change-media") { request in
        let count = request.queryValue("count").flatMap { Int($0) } ?? 1
        let sources = server.library.allMediaSources.map(\.id)
        guard count >= 0, !sources.isEmpty else {
            return TestServer.CustomResponse(
                status: 400, contentType: "text/plain", body: Array("count=N wanted\n".utf8))
        }
        let chosen = state.next(count, of: sources)
        server.updateLibrary { library in
            for id in chosen { library.changeMediaContent(ofMediaSourceId: id) }
        }
        let list = chosen.map { "\"\($0)\"" }.joined(separator: ",")
        return TestServer.CustomResponse(body: Array("{\"changed\":[\(list)],\"generation\":\(state.generation)}".utf8))
    }
}

/// Which media source changes next, and how many changes were made.
final class ControlState: @unchecked Sendable {
    private let lock = NSLock()
    private var cursor = 0
    private var changes = 0

    var generation: Int {
        lock.lock()
        defer { lock.unlock() }
        return changes
    }

    func next(_ count: Int, of ids: [String]) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        var chosen: [String] = []
        for _ in 0..<min(count, ids.count) {
            chosen.append(ids[cursor % ids.count])
            cursor += 1
        }
        changes += 1
        return chosen
    }
}
