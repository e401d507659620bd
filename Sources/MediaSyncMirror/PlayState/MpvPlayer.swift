import Foundation
import MediaSyncCore
import MediaSyncJSON

#if canImport(Glibc)
    import Glibc
#endif

/// Plays a file in mpv and follows where it is through mpv's JSON IPC socket (`--input-ipc-server`): the last
/// `time-pos` and the `duration` it reported when it exits, closes, or is killed.
public struct MpvPlayer: Sendable {
    /// The mpv executable.
    public let executable: String

    /// mpv from `PATH`; nil when it is not installed.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> MpvPlayer? {
        ExternalProgram.find("mpv", environment: environment).map(MpvPlayer.init(executable:))
    }

    public init(executable: String) {
        self.executable = executable
    }

    /// Where playback ended.
    public struct Session: Sendable, Equatable {
        /// The last position mpv reported, in 100 ns ticks; nil when it reported none.
        public var position: Int64?
        /// The file's length as mpv read it, in ticks; nil when unknown.
        public var duration: Int64?
        /// mpv's exit status (or the signal that ended it, negated).
        public var status: Int32
        /// Whether mpv played to the end of the file (an `end-file` event with reason `eof`).
        public var reachedEnd = false
    }

    /// Plays `path` (blocking until mpv ends), starting at `start` when given.
    /// - Parameter arguments: more mpv options (`--vo=null`, `--speed=4`…).
    /// - Throws: ``SyncError`` when mpv cannot be started.
    public func play(path: String, start: Int64? = nil, arguments: [String] = []) throws -> Session {
        let socketPath =
            FileManager.default.temporaryDirectory.path
            + "/mediasync-mpv-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { unlink(socketPath) }
        var options = ["--input-ipc-server=\(socketPath)"]
        if let start, start > 0 { options.append("--start=\(Double(start) / 10_000_000)") }
        let process = try ChildProcess(
            name: "mpv", executable: executable, arguments: options + arguments + ["--", path])
        var session = Session(position: nil, duration: nil, status: 0)
        // mpv makes the socket once it has started: connect as soon as it is there, for as long as mpv runs.
        var descriptor: Int32 = -1
        while process.isRunning {
            descriptor = MpvPlayer.connect(socketPath)
            if descriptor >= 0 { break }
            usleep(20_000)
        }
        if descriptor >= 0 {
            defer { close(descriptor) }
            let observe =
                #"{"command":["observe_property",1,"time-pos"]}"# + "\n"
                + #"{"command":["observe_property",2,"duration"]}"# + "\n"
            _ = observe.withCString { write(descriptor, $0, strlen($0)) }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    MpvPlayer.apply(Array(pending[..<newline]), to: &session)
                    pending.removeSubrange(...newline)
                }
            }
        }
        let status = process.wait()
        // Positions come a few times a second: at the end of the file the last one can be short of it.
        if session.reachedEnd, let duration = session.duration { session.position = duration }
        session.status = status
        return session
    }

    /// Reads one IPC line: a `property-change` of `time-pos` or `duration` (seconds) updates the session, an
    /// `end-file` with reason `eof` marks the end reached.
    static func apply(_ line: [UInt8], to session: inout Session) {
        guard let message = try? JSONValue(parsing: line) else { return }
        if message["event"]?.stringValue == "end-file", message["reason"]?.stringValue == "eof" {
            session.reachedEnd = true
            return
        }
        guard message["event"]?.stringValue == "property-change",
            case .number(let seconds)? = message["data"], seconds.isFinite, seconds >= 0, seconds < 1e8
        else { return }
        let ticks = Int64((seconds * 10_000_000).rounded())
        switch message["name"]?.stringValue {
        case "time-pos": session.position = ticks
        case "duration": session.duration = ticks
        default: break
        }
    }

    private static func connect(_ path: String) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(descriptor)
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (offset, byte) in bytes.enumerated() { raw[offset] = byte }
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }
}
