import Foundation
import MediaSyncJSON

@testable import MediaSyncTestServer

#if canImport(Glibc)
    import Glibc
#endif

struct RawHTTPError: Error, CustomStringConvertible {
    var description: String
}

/// A parsed HTTP response read off a raw socket.
struct RawResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    var json: JSONValue? { JSONValue.parse(body) }
}

/// A tiny blocking HTTP/1.1 client over a raw loopback socket, so tests can observe
/// connection-level behaviour (keep-alive, resets, truncation, stalls).
final class RawHTTPConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        // Connect before `self` is fully initialised: a throwing init of a fully initialised class
        // object runs deinit, which would close the fd a second time (possibly someone else's by then).
        fd = try RawHTTPConnection.connectedSocket(port: port)
        setReceiveTimeout(10)
    }

    private static func connectedSocket(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw RawHTTPError(description: "connect failed errno \(code)")
        }
        return fd
    }

    deinit {
        Glibc.close(fd)
    }

    func setReceiveTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RawHTTPError(description: "send failed errno \(errno)") }
            offset += n
        }
    }

    /// Sends one request. `Host` is added; `Content-Length` is added when a body is given.
    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// Receives more bytes: >0 count, 0 EOF, <0 -errno.
    @discardableResult
    func receiveMore() -> Int {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return n
        }
        return n == 0 ? 0 : -Int(errno)
    }

    /// Reads just a response head.
    func readHead() throws -> (status: Int, headers: [String: String]) {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let text = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = text.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw RawHTTPError(description: "bad status line \(text)")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                        in: .whitespaces)
                }
                return (status, headers)
            }
            let n = receiveMore()
            guard n > 0 else { throw RawHTTPError(description: "connection ended before head (\(n))") }
        }
    }

    /// Reads a full response (Content-Length delimited or chunked; HEAD/304 have no body).
    func readResponse(isHead: Bool = false) throws -> RawResponse {
        let (status, headers) = try readHead()
        if !isHead, (headers["transfer-encoding"] ?? "").lowercased().contains("chunked") {
            return RawResponse(status: status, headers: headers, body: try readChunkedBody())
        }
        var length = Int(headers["content-length"] ?? "0") ?? 0
        if isHead || status == 304 || status < 200 { length = 0 }
        while buffer.count < length {
            let n = receiveMore()
            guard n > 0 else { throw RawHTTPError(description: "body ended after \(buffer.count)/\(length) (\(n))") }
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return RawResponse(status: status, headers: headers, body: body)
    }

    /// Reads a chunked body up to its zero-length chunk (trailers skipped).
    func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            guard let size = Int(line.split(separator: ";").first.map(String.init) ?? "", radix: 16), size >= 0 else {
                throw RawHTTPError(description: "bad chunk size line \(line)")
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            while buffer.count < size + 2 {
                let n = receiveMore()
                guard n > 0 else { throw RawHTTPError(description: "chunk ended early (\(n))") }
            }
            body.append(contentsOf: buffer[0..<size])
            buffer.removeFirst(size + 2)
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = find([13, 10]) {
                let line = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                return line
            }
            let n = receiveMore()
            guard n > 0 else { throw RawHTTPError(description: "connection ended in a chunk line (\(n))") }
        }
    }

    /// Reads until EOF or error; returns the bytes after what was already consumed and the end reason
    /// (0 = clean EOF, otherwise -errno, e.g. -ECONNRESET, -EAGAIN for a timeout).
    func readUntilEnd() -> (bytes: [UInt8], end: Int) {
        while true {
            let n = receiveMore()
            if n <= 0 {
                let bytes = buffer
                buffer.removeAll()
                return (bytes, n)
            }
        }
    }

    /// Takes whatever is buffered.
    func takeBuffered() -> [UInt8] {
        let bytes = buffer
        buffer.removeAll()
        return bytes
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count) where buffer[i] == needle[0] {
            if Array(buffer[i..<i + needle.count]) == needle { return i }
        }
        return nil
    }
}

/// Test conveniences.
enum TestSupport {
    static var fixturesDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/server")
    }

    static func makeServer(_ library: TestLibrary = TestLibrary()) throws -> TestServer {
        try TestServer(library: library, fixturesDirectory: fixturesDirectory)
    }

    /// One request on a fresh connection.
    /// `request(server, "/path")` is a GET; `request(server, "POST", "/path")` uses the given method.
    static func request(
        _ server: TestServer, _ first: String, _ second: String? = nil,
        headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> RawResponse {
        let method = second == nil ? "GET" : first
        let target = second ?? first
        let connection = try RawHTTPConnection(port: server.port)
        try connection.sendRequest(method, target, headers: headers + [("Connection", "close")], body: body)
        return try connection.readResponse(isHead: method == "HEAD")
    }

    static func authHeader(_ token: String) -> (String, String) {
        (
            "Authorization",
            "MediaBrowser Client=\"mediasync-tests\", Device=\"test\", DeviceId=\"dev-1\", Version=\"0.1\", Token=\"\(token)\""
        )
    }

    /// Runs a program to completion and returns its exit status.
    static func runProcess(_ path: String, _ arguments: [String]) throws -> Int32 {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let rc = posix_spawn(&pid, path, nil, nil, &argv, nil)
        guard rc == 0 else { throw RawHTTPError(description: "posix_spawn failed \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw RawHTTPError(description: "waitpid failed \(errno)") }
        }
        return (status >> 8) & 0xFF
    }

    /// Byte equality as a plain Bool: `#expect(a == b)` on multi-MB arrays makes Swift Testing
    /// compute a (very slow) collection diff when it fails.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a == b
    }

    static func same(_ a: [UInt8]?, _ b: [UInt8]) -> Bool {
        a == b
    }

    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 256) }
    }
}
