import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real TLS server on 127.0.0.1 with a self-signed certificate made at test time: `openssl s_server -WWW`
/// serving files from a folder (HTTP/1.0, one connection at a time).
///
/// The certificate is for `IP:127.0.0.1` and is its own CA: pass ``certificatePath`` as the CA file to trust it.
public final class TLSTestServer: @unchecked Sendable {
    /// The `openssl` command, nil when it is not installed (`Scripts/install-deps.sh` installs it).
    public static let openssl: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":") + ["/usr/bin"]).map { "\($0)/openssl" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    public static var isAvailable: Bool { openssl != nil }

    public let port: Int
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    /// The server's self-signed certificate (PEM): the CA file that makes it trusted.
    public let certificatePath: String
    public let folder: TemporaryDirectory
    private let process: Spawned

    public enum Failure: Error, CustomStringConvertible {
        case noOpenSSL
        case command(String)

        public var description: String {
            switch self {
            case .noOpenSSL: "openssl is not installed"
            case .command(let text): text
            }
        }
    }

    /// Makes a key and a certificate, writes `files` (relative path → bytes) and starts the server.
    public init(files: [String: [UInt8]]) throws {
        guard let openssl = Self.openssl else { throw Failure.noOpenSSL }
        folder = try TemporaryDirectory()
        let www = folder.file("www")
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        for (path, bytes) in files {
            try Data(bytes).write(to: URL(fileURLWithPath: www + "/" + path))
        }
        certificatePath = folder.file("server.pem")
        let key = folder.file("server.key")
        try Self.run(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", certificatePath, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                "subjectAltName=IP:127.0.0.1",
            ])
        let process = try Spawned(
            openssl, ["s_server", "-accept", "127.0.0.1:0", "-cert", certificatePath, "-key", key, "-WWW"],
            directory: www, errorIntoOutput: true)
        self.process = process
        // s_server prints `ACCEPT 127.0.0.1:PORT` once it listens.
        var found: Int?
        for _ in 0..<3_000 {
            if let line = process.outputSoFar.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0) })
            {
                found = port
                break
            }
            guard process.isRunning else { break }
            usleep(10_000)
        }
        guard let found else {
            Self.stop(process)
            folder.remove()
            throw Failure.command("openssl s_server did not start: \(process.outputSoFar)")
        }
        port = found
    }

    public func shutdown() {
        Self.stop(process)
        folder.remove()
    }

    /// SIGKILL: s_server has no clean way out, and nothing of its state is kept.
    private static func stop(_ process: Spawned) {
        process.send(SIGKILL)
        _ = process.finish()
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let finished = try Spawned(executable, arguments).finish()
        guard finished.status == 0 else {
            throw Failure.command("openssl \(arguments.first ?? "") failed: \(finished.stderr)")
        }
    }
}
