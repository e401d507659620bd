import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Puts a joined MPEG-TS transcode into an MP4 or Matroska file without re-encoding (`ffmpeg -c copy`).
public struct Remuxer: Sendable {
    /// The ffmpeg executable.
    public let executable: String

    /// The containers a transcode can be kept in besides `ts`, with ffmpeg's name for each.
    public static let formats = ["mp4": "mp4", "mkv": "matroska"]

    /// ffmpeg from `PATH`; nil when it is not installed.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> Remuxer? {
        ExternalProgram.find("ffmpeg", environment: environment).map(Remuxer.init(executable:))
    }

    public init(executable: String) {
        self.executable = executable
    }

    /// Remuxes `input` into `output` (replaced if there) as `container` (`mp4` or `mkv`): every stream copied.
    /// - Throws: ``SyncError`` with ffmpeg's last line when it fails; nothing is left at `output` then.
    func remux(_ input: String, to output: String, container: String) throws {
        guard let format = Remuxer.formats[container] else {
            throw SyncError.invalidInput("\(container) is not a container a transcode can be put in (mp4, mkv)")
        }
        var arguments = ["-nostdin", "-v", "error", "-y", "-i", input, "-map", "0", "-c", "copy"]
        // The index at the front, so a player can start before it has read the whole file.
        if container == "mp4" { arguments += ["-movflags", "+faststart"] }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw SyncError.fileSystem("cannot make a pipe for ffmpeg", errno) }
        // Neither end is inherited by other children started meanwhile (ffmpeg gets its own copy of the write end).
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let process: ChildProcess
        do {
            defer { close(pipeEnds[1]) }
            process = try ChildProcess(
                name: "ffmpeg", executable: executable, arguments: arguments + ["-f", format, output], output: .null,
                error: .descriptor(pipeEnds[1]))
        } catch {
            close(pipeEnds[0])
            throw error
        }
        // ffmpeg's messages, kept to the last 64 KiB (it is told to print errors only).
        var message: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            message += buffer[0..<count]
            if message.count > 64 << 10 { message.removeFirst(message.count - (64 << 10)) }
        }
        close(pipeEnds[0])
        let status = process.wait()
        guard status == 0 else {
            unlink(output)
            let last = String(decoding: message, as: UTF8.self).split(whereSeparator: \.isNewline).last.map(String.init)
            throw SyncError.invalidInput(
                "ffmpeg could not put the transcode into \(container) (\(last ?? "exit \(status)"))")
        }
    }
}
