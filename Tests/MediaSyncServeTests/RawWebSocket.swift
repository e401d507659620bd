import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The least of a WebSocket client (RFC 6455) over a blocking loopback socket: the upgrade, masked text frames
/// out, unmasked text frames in, pings answered. Reads wait up to 300 s (a bound for a loaded machine, not a timing
/// check).
final class RawWebSocket {
    let fd: Int32

    init(port: Int, path: String) throws {
        fd = try RawWebSocket.connect(port: port)
        let head = try RawWebSocket.upgrade(fd, port: port, path: path)
        guard head.hasPrefix("HTTP/1.1 101") else {
            Glibc.close(fd)
            throw ServeErrorText("no upgrade: \(head)")
        }
    }

    /// The status of an upgrade request's answer (101 when accepted).
    static func handshakeStatus(port: Int, path: String) throws -> Int {
        let fd = try connect(port: port)
        defer { Glibc.close(fd) }
        let head = try upgrade(fd, port: port, path: path)
        return Int(head.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 300, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw ServeErrorText("cannot connect")
        }
        return fd
    }

    /// Sends the upgrade request and reads the answer's head.
    private static func upgrade(_ fd: Int32, port: Int, path: String) throws -> String {
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try write(fd, Array(request.utf8))
        var head: [UInt8] = []
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
            head.append(contentsOf: try read(fd, 1))
        }
        return String(decoding: head, as: UTF8.self)
    }

    func sendText(_ text: String) throws {
        try send(opcode: 0x01, Array(text.utf8))
    }

    private func send(opcode: UInt8, _ payload: [UInt8]) throws {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        }
        let mask: [UInt8] = [1, 2, 3, 4]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try RawWebSocket.write(fd, frame)
    }

    /// The next text message (pings answered, other control frames skipped).
    func readText() throws -> String {
        while true {
            let header = try RawWebSocket.read(fd, 2)
            var length = Int(header[1] & 0x7f)
            if length == 126 {
                let extended = try RawWebSocket.read(fd, 2)
                length = Int(extended[0]) << 8 | Int(extended[1])
            } else if length == 127 {
                let extended = try RawWebSocket.read(fd, 8)
                length = extended.reduce(0) { $0 << 8 | Int($1) }
            }
            let payload = try RawWebSocket.read(fd, length)
            switch header[0] & 0x0f {
            case 1: return String(decoding: payload, as: UTF8.self)
            case 9: try send(opcode: 0x0a, payload)
            default: continue
            }
        }
    }

    func close() {
        Glibc.close(fd)
    }

    /// Sends all of `bytes`. `MSG_NOSIGNAL`: a connection the server already closed is an error here, not a SIGPIPE
    /// that ends the test process.
    static func write(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw ServeErrorText("write failed") }
            offset += written
        }
    }

    /// Everything the server sends until it closes the connection (or the receive timeout passes).
    static func readToEnd(_ fd: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got <= 0 { return received }
            received += buffer[0..<got]
        }
    }

    static func read(_ fd: Int32, _ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes[offset...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard got > 0 else { throw ServeErrorText("connection closed or timed out") }
            offset += got
        }
        return bytes
    }
}

struct ServeErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
