import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Serves the requests of one client connection (runs on its own thread).
final class ServerConnection: @unchecked Sendable {
    private let server: TestServer
    private let id: Int
    private let fd: Int32
    private var buffer: [UInt8] = []
    private static let maxHeadSize = 64 * 1024
    private static let chunkSize = 256 * 1024

    init(server: TestServer, id: Int, fd: Int32) {
        self.server = server
        self.id = id
        self.fd = fd
    }

    /// Whether the socket was already closed with an RST.
    private var closedByReset = false
    /// Body bytes of the current response that `send` accepted.
    private var bodyBytesSent = 0

    func run() {
        defer {
            if !closedByReset { server.closeConnection(id: id, fd: fd, reset: false) }
        }
        while !server.isShuttingDown {
            guard let head = readHead() else { return }
            server.requestStarted()
            let keepGoing = serve(head)
            server.requestFinished()
            if !keepGoing { return }
        }
    }

    /// Handles one request; returns whether the connection stays open.
    private func serve(_ head: HTTPRequestHead) -> Bool {
        let start = ServedResponse.monotonicNow()
        if (head.headers["expect"] ?? "").lowercased() == "100-continue",
            (head.contentLength ?? 0) > 0 || head.isChunked, buffer.isEmpty
        {
            guard sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return false }
        }
        let body: [UInt8]
        if head.isChunked {
            guard let chunked = readChunkedBody() else { return false }
            body = chunked
        } else if let length = head.contentLength {
            guard length >= 0, fill(length) else { return false }
            body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else {
            body = []
        }
        let request = RecordedRequest(
            method: head.method, path: head.path, query: head.query,
            headers: head.headers, body: body)
        let (response, cut) = server.handle(request)
        let keepAlive = head.wantsKeepAlive && cut == nil
        bodyBytesSent = 0
        let isHead = head.method == "HEAD"
        let written = write(response, isHead: isHead, keepAlive: keepAlive, cut: cut)
        let planned = isHead || response.suppressContentLength ? 0 : response.bodyRange.count
        server.responseEnded(request, status: response.status, planned: planned, sent: bodyBytesSent, start: start)
        return written && keepAlive
    }

    // MARK: Reading

    /// Reads more bytes into `buffer`; false on EOF/error.
    private func receiveMore() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return true
            }
            if n < 0, errno == EINTR { continue }
            return false
        }
    }

    /// Ensures `buffer` holds at least `count` bytes.
    private func fill(_ count: Int) -> Bool {
        while buffer.count < count {
            guard receiveMore() else { return false }
        }
        return true
    }

    private func indexOfCRLF(from start: Int, double: Bool) -> Int? {
        let needle: [UInt8] = double ? [13, 10, 13, 10] : [13, 10]
        guard buffer.count >= needle.count else { return nil }
        var i = start
        while i + needle.count <= buffer.count {
            if buffer[i] == 13, buffer[i + 1] == 10, !double || (buffer[i + 2] == 13 && buffer[i + 3] == 10) {
                return i
            }
            i += 1
        }
        return nil
    }

    private func readHead() -> HTTPRequestHead? {
        var scanFrom = 0
        while true {
            if let end = indexOfCRLF(from: scanFrom, double: true) {
                let headBytes = buffer[0..<end]
                guard let head = HTTPRequestHead(headBytes) else {
                    _ = write(.empty(400), isHead: false, keepAlive: false, cut: nil)
                    return nil
                }
                buffer.removeFirst(end + 4)
                return head
            }
            if buffer.count > ServerConnection.maxHeadSize {
                _ = write(.empty(431), isHead: false, keepAlive: false, cut: nil)
                return nil
            }
            scanFrom = max(0, buffer.count - 3)
            guard receiveMore() else { return nil }
        }
    }

    private func readLine() -> String? {
        while true {
            if let end = indexOfCRLF(from: 0, double: false) {
                let line = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                return line
            }
            guard buffer.count < ServerConnection.maxHeadSize, receiveMore() else { return nil }
        }
    }

    private func readChunkedBody() -> [UInt8]? {
        var body: [UInt8] = []
        while true {
            guard let line = readLine() else { return nil }
            let sizeText = line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { return nil }
            if size == 0 {
                // Trailer section up to the empty line.
                while true {
                    guard let trailer = readLine() else { return nil }
                    if trailer.isEmpty { return body }
                }
            }
            guard fill(size + 2) else { return nil }
            body.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + 2)
        }
    }

    // MARK: Writing

    private func sendAll(_ bytes: [UInt8]) -> Bool {
        sendAll(bytes, range: 0..<bytes.count)
    }

    /// Sends `range` of `bytes`; `body` counts what `send` accepted in `bodyBytesSent`.
    private func sendAll(_ bytes: [UInt8], range: Range<Int>, body: Bool = false) -> Bool {
        guard !range.isEmpty else { return true }
        return bytes.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return false }
            var offset = range.lowerBound
            while offset < range.upperBound {
                let n = send(fd, base + offset, range.upperBound - offset, Int32(MSG_NOSIGNAL))
                if n > 0 {
                    offset += n
                    if body {
                        bodyBytesSent += n
                        server.countBodyBytes(n)
                    }
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }

    /// Writes a response; returns false when the connection is no longer usable.
    private func write(_ response: HTTPResponse, isHead: Bool, keepAlive: Bool, cut: BodyCut?) -> Bool {
        var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reason(response.status))\r\n"
        head += "Date: \(HTTPDate.format(Date()))\r\n"
        head += "Server: Kestrel\r\n"
        for (name, value) in response.headers {
            head += "\(name): \(value)\r\n"
        }
        let chunked = response.chunked && !isHead && !response.suppressContentLength
        if chunked {
            head += "Transfer-Encoding: chunked\r\n"
        } else if !response.suppressContentLength {
            head += "Content-Length: \(response.bodyRange.count)\r\n"
        }
        if !keepAlive && cut == nil {
            head += "Connection: close\r\n"
        }
        head += "\r\n"
        guard sendAll(Array(head.utf8)) else { return false }

        var range = response.bodyRange
        if isHead || response.suppressContentLength { range = range.lowerBound..<range.lowerBound }
        if let cut {
            if chunked {
                // Framed as the whole body would be, cut inside a chunk: no last chunk follows.
                _ = sendBody(response.body, range: range, chunked: true, limit: cut.afterBytes)
            } else {
                _ = sendBody(
                    response.body, range: range.lowerBound..<min(range.upperBound, range.lowerBound + cut.afterBytes))
            }
            switch cut {
            case .reset:
                closedByReset = true
                server.closeConnection(id: id, fd: fd, reset: true)
            case .truncate:
                _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            case .stall(_, let seconds):
                if stall(seconds) {
                    closedByReset = true
                    server.closeConnection(id: id, fd: fd, reset: true)
                }
            }
            return false
        }
        return sendBody(response.body, range: range, chunked: chunked)
    }

    /// Stays silent for `seconds`, returning early when the server shuts down or the client has gone (a killed
    /// client's connection is not held open for the rest of the stall). Returns true when
    /// ``TestServer/resetStalledResponses()`` asked for the connection to be reset.
    private func stall(_ seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        let resets = server.stallResets
        var byte: UInt8 = 0
        while !server.isShuttingDown, deadline.timeIntervalSinceNow > 0 {
            if server.stallResets != resets { return true }
            var peer = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&peer, 1, 10) > 0 {
                // Readable: either the client closed (recv gives 0 or an error) or it sent more, which a stalled
                // response does not read.
                let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { return false }
                usleep(10_000)
            }
        }
        return false
    }

    /// Sends `range` of `body` in chunks, pacing to the server's throttle. `chunked` frames each piece as an HTTP/1.1
    /// chunk (only the payload counts as body bytes) and ends with the zero-length chunk; with `limit` it stops after
    /// that many payload bytes, inside the chunk they fall in.
    private func sendBody(_ body: [UInt8], range: Range<Int>, chunked: Bool = false, limit: Int? = nil) -> Bool {
        var offset = range.lowerBound
        let start = Date()
        var sent = 0
        while offset < range.upperBound {
            if server.isShuttingDown { return false }
            let rate = server.throttle
            var chunk = ServerConnection.chunkSize
            if let rate { chunk = max(1, min(chunk, rate / 20)) }
            let n = min(chunk, range.upperBound - offset)
            let allowed = limit.map { max(0, min(n, $0 - sent)) } ?? n
            if chunked, !sendAll(Array((String(n, radix: 16) + "\r\n").utf8)) { return false }
            guard sendAll(body, range: offset..<(offset + allowed), body: true) else { return false }
            if allowed < n { return false }
            if chunked, !sendAll([13, 10]) { return false }
            offset += n
            sent += n
            if let rate {
                let due = Double(sent) / Double(rate) - Date().timeIntervalSince(start)
                if due > 0, !server.interruptibleSleep(due) { return false }
            }
        }
        if limit != nil { return false }
        if chunked { return sendAll(Array("0\r\n\r\n".utf8)) }
        return true
    }
}
