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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        var arguments = ["-nostdin", "-v", "error", "-y", "-i", input, "-map", "0", "-c", "copy"]
        // The index at the front, so a player can start before it has read the whole file.
        if container == "mp4" { arguments += ["-movflags", "+faststart"] }
        process.arguments = arguments + ["-f", format, output]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw SyncError.configuration("ffmpeg (\(executable)) could not be started: \(error.localizedDescription)")
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            unlink(output)
            let last = String(decoding: message, as: UTF8.self).split(whereSeparator: \.isNewline).last.map(String.init)
            throw SyncError.invalidInput(
                "ffmpeg could not put the transcode into \(container) (\(last ?? "exit \(process.terminationStatus)"))")
        }
    }
}
