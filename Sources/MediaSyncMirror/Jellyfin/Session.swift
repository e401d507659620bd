import Foundation
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// A signed-in connection to the server, from the stored credentials.
public struct Session: Sendable {
    public let credentials: Credentials
    public let client: JellyfinClient
    public let http: HTTPClient

    /// Opens the session stored in `config`.
    /// - Parameters:
    ///   - configuration: the HTTP settings (the stored CA file and `insecure` are added to them).
    ///   - retryPolicy: how often a failed call is tried again (a sync's default; the web page asks once).
    /// - Throws: ``SyncError/notSignedIn`` when there are no credentials.
    public static func open(
        config: ConfigDirectory, configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) throws -> Session {
        guard let credentials = try Credentials.load(from: config) else { throw SyncError.notSignedIn }
        var configuration = configuration
        configuration.caFile = configuration.caFile ?? credentials.caFile
        configuration.insecure = configuration.insecure || credentials.insecure == true
        let http = HTTPClient(configuration: configuration, retryPolicy: retryPolicy)
        let client = try JellyfinClient(
            serverURL: credentials.serverURL, identity: try identity(config: config),
            accessToken: credentials.accessToken,
            userId: credentials.userId, http: http)
        return Session(credentials: credentials, client: client, http: http)
    }

    /// How this installation names itself to the server: the host name and a stable device id.
    public static func identity(config: ConfigDirectory) throws -> ClientIdentity {
        var buffer = [UInt8](repeating: 0, count: 256)
        let ok = buffer.withUnsafeMutableBufferPointer { pointer in
            pointer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: pointer.count) {
                    gethostname($0, pointer.count - 1) == 0
                }
            } ?? false
        }
        let host = ok ? String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self) : "linux"
        return ClientIdentity(device: host.isEmpty ? "linux" : host, deviceId: try config.deviceId())
    }
}
