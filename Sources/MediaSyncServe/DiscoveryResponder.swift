import Foundation
import MediaSyncJSON
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Jellyfin's UDP autodiscovery (`AutoDiscoveryHost`, v10.10.7): a datagram containing "who is JellyfinServer?"
/// on port 7359 is answered with `{"Address","Id","Name","EndpointAddress":null}`.
final class DiscoveryResponder: Sendable {
    let port: Int
    let answer: [UInt8]
    private let socket = Mutex<Int32>(-1)

    init(port: Int, serverId: String, serverName: String, address: String) {
        self.port = port
        answer = JSONWriter.compactBytes(
            .object(
                JSONObject([
                    JSONMember("Address", .string(address)), JSONMember("Id", .string(serverId)),
                    JSONMember("Name", .string(serverName)), JSONMember("EndpointAddress", .null),
                ])))
    }

    /// Whether a datagram asks for Jellyfin servers.
    static func isQuestion(_ bytes: [UInt8]) -> Bool {
        String(decoding: bytes, as: UTF8.self).lowercased().contains("who is jellyfinserver?")
    }

    func start() {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: INADDR_ANY)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            return
        }
        socket.withLock { $0 = fd }
        let answer = self.answer
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 2048)
            while true {
                var from = sockaddr_storage()
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let count = withUnsafeMutablePointer(to: &from) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, &buffer, buffer.count, 0, $0, &length)
                    }
                }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return }
                guard DiscoveryResponder.isQuestion(Array(buffer[0..<count])) else { continue }
                _ = withUnsafePointer(to: &from) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, answer, answer.count, 0, $0, length)
                    }
                }
            }
        }
        thread.start()
    }

    func stop() {
        let fd = socket.withLock { fd -> Int32 in
            let old = fd
            fd = -1
            return old
        }
        guard fd >= 0 else { return }
        // Wakes the thread's recvfrom, which then ends.
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
