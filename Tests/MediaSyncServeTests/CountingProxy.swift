import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP relay in front of `serve`: it passes every byte on unchanged, keeps what clients sent (request
/// heads and small bodies) and counts the bytes `serve` answered with, so a test sees what a mirror asked of
/// `serve` and how much came back, from outside both processes.
final class CountingProxy: @unchecked Sendable {
    /// The port it listens on (127.0.0.1).
    private(set) var port: UInt16 = 0
    private let target: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var sent: [UInt8] = []
    private var answered: Int64 = 0
    private var accepted = 0
    /// While set, a connection that has relayed this many bytes of answers holds the rest back until
    /// ``releaseStalls()``: a download stops in the middle of its file, for as long as a test needs.
    private var stallAfter: Int64?
    private let released = DispatchSemaphore(value: 0)
    private var stalled = 0

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Listens on any free port of 127.0.0.1 and relays each connection to `127.0.0.1:target`.
    init(to target: UInt16) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "no socket") }
        self.listener = listener
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            Glibc.close(listener)
            throw Failure(description: "cannot listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                lock.withLock { accepted += 1 }
                relay(client)
            }
        }
    }

    var address: String { "http://127.0.0.1:\(port)" }

    /// Everything clients sent since the last ``reset()``, as text.
    var requests: String { lock.withLock { String(decoding: sent, as: UTF8.self) } }

    /// The bytes `serve` answered with since the last ``reset()``.
    var bytesAnswered: Int64 { lock.withLock { answered } }

    /// The connections accepted since the last ``reset()``, relayed or not (a closed target gets each one closed
    /// at once): how many attempts a client made.
    var connections: Int { lock.withLock { accepted } }

    /// Holds each connection's answers back once it has relayed `bytes` of them.
    func stall(after bytes: Int64) {
        lock.withLock { stallAfter = bytes }
    }

    /// Lets every held-back connection go on, and stalls no more.
    func releaseStalls() {
        let waiting = lock.withLock {
            stallAfter = nil
            defer { stalled = 0 }
            return stalled
        }
        for _ in 0..<waiting { released.signal() }
    }

    func reset() {
        lock.withLock {
            sent = []
            answered = 0
            accepted = 0
        }
    }

    /// Stops listening (connections under way end as their sides close them).
    func close() {
        releaseStalls()
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func relay(_ client: Int32) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: target)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard upstream >= 0, connected == 0 else {
            if upstream >= 0 { Glibc.close(upstream) }
            Glibc.close(client)
            return
        }
        let finished = DispatchGroup()
        for (from, to, isRequest) in [(client, upstream, true), (upstream, client, false)] {
            finished.enter()
            Thread.detachNewThread { [self] in
                pump(from: from, to: to, isRequest: isRequest)
                finished.leave()
            }
        }
        finished.notify(queue: .global()) {
            Glibc.close(client)
            Glibc.close(upstream)
        }
    }

    private func pump(from source: Int32, to destination: Int32, isRequest: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var relayed: Int64 = 0
        while true {
            let limit: Int64? = isRequest ? nil : lock.withLock { stallAfter }
            let room = limit.map { Int(clamping: max(0, $0 - relayed)) } ?? buffer.count
            if room == 0 {
                let hold = lock.withLock { () -> Bool in
                    guard stallAfter != nil else { return false }
                    stalled += 1
                    return true
                }
                if hold { released.wait() }
                continue
            }
            let count = buffer.withUnsafeMutableBytes {
                read(source, $0.baseAddress, min($0.count, room))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            relayed += Int64(count)
            lock.withLock {
                if isRequest { sent += buffer[0..<count] } else { answered += Int64(count) }
            }
            var offset = 0
            while offset < count {
                let written = buffer[offset..<count].withUnsafeBytes {
                    send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    shutdown(source, Int32(SHUT_RD))
                    return
                }
                offset += written
            }
        }
        shutdown(destination, Int32(SHUT_WR))
    }
}
