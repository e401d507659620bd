import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where credentials and the device id live: `$MEDIASYNC_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mediasync`
/// (`~/.config/mediasync`). Files there are created with mode 0600 and the folder with 0700.
public struct ConfigDirectory: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) -> ConfigDirectory {
        if let directory = environment["MEDIASYNC_CONFIG_DIR"], !directory.isEmpty {
            return ConfigDirectory(path: directory)
        }
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        return ConfigDirectory(path: base + "/mediasync")
    }

    public var credentialsPath: String { path + "/credentials.json" }
    public var deviceIdPath: String { path + "/device-id" }

    /// The stable device id of this installation, created on first use.
    public func deviceId() throws -> String {
        if let data = FileManager.default.contents(atPath: deviceIdPath),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty
        {
            return text
        }
        let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try writePrivate(Data((id + "\n").utf8), to: deviceIdPath)
        return id
    }

    /// Writes a file readable by the owner only, atomically.
    public func writePrivate(_ data: Data, to target: String) throws {
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = target + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SyncError.configuration("cannot write \(target): \(String(cString: strerror(errno)))")
        }
        var failed = false
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    failed = true
                    return
                }
                offset += written
            }
        }
        if fsync(fd) != 0 { failed = true }
        close(fd)
        guard !failed, rename(temporary, target) == 0 else {
            unlink(temporary)
            throw SyncError.configuration("cannot write \(target): \(String(cString: strerror(errno)))")
        }
    }
}
