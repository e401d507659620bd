import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import MediaSyncJSON
import MediaSyncMirror
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How `mediasync serve` runs.
public struct ServeOptions: Sendable {
    public var root: MirrorRoot
    public var config: ConfigDirectory
    /// The address to listen on (`--listen HOST:PORT`).
    public var host: String
    /// 0: any free port (tests).
    public var port: Int
    /// Answer Jellyfin's UDP autodiscovery on port 7359 (`--discover`).
    public var discover: Bool
    /// The discovery port (7359; tests use another).
    public var discoveryPort: Int
    /// How the web page's calls to the home server (libraries, items, search, posters) connect and retry.
    public var homeServer: HomeServerAccess

    public init(
        root: MirrorRoot, config: ConfigDirectory, host: String = "127.0.0.1", port: Int = 8096,
        discover: Bool = false, discoveryPort: Int = 7359, homeServer: HomeServerAccess = HomeServerAccess()
    ) {
        self.root = root
        self.config = config
        self.host = host
        self.port = port
        self.discover = discover
        self.discoveryPort = discoveryPort
        self.homeServer = homeServer
    }
}

/// How the web page asks the home server: someone is waiting in front of the page, so by default one attempt with a
/// short connect timeout, and a server that cannot be reached is said within seconds instead of after a sync's
/// retries with backoff. A sync started from the page keeps the sync's own settings.
public struct HomeServerAccess: Sendable {
    /// The HTTP settings of the page's calls (the stored CA file and `insecure` are added to them).
    public var configuration: HTTPClientConfiguration
    /// How often a failed call is tried again.
    public var retryPolicy: RetryPolicy

    /// One attempt, a 3-second connect timeout and 30 seconds for a whole call.
    public init() {
        self.init(configuration: HTTPClientConfiguration(connectTimeout: 3, requestTimeout: 30), retryPolicy: .none)
    }

    public init(configuration: HTTPClientConfiguration, retryPolicy: RetryPolicy) {
        self.configuration = configuration
        self.retryPolicy = retryPolicy
    }
}

/// Why `serve` cannot start or a password cannot be set: one line for the user.
public struct ServeError: Error, CustomStringConvertible, Equatable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// `mediasync serve`: the mirror answered as a Jellyfin server, so the user's own Jellyfin clients browse and play
/// it offline. It only reads the media and the index; played state from its clients becomes the same offline
/// marks `mediasync played` records, which the next `sync` sends home once.
public final class MediaServe: Sendable {
    public let options: ServeOptions
    /// The mirror's own server id (`.mediasync/serve-id`): not the home server's, so clients keep the two apart.
    public let serverId: String
    public let serverName: String
    public let userName: String
    public let userId: String
    /// Whether a password is set (without one every sign-in is refused).
    public let hasPassword: Bool
    let state: ServeState

    /// Opens the mirror at `options.root` for reading and reads what it holds.
    /// - Throws: ``ServeError`` when a non-loopback address is asked for without a password; the mirror's errors.
    public init(options: ServeOptions) throws {
        self.options = options
        let password = ServePassword.load(from: options.config)
        guard password != nil || MediaServe.isLoopback(options.host) else {
            throw ServeError(
                "refusing to listen on \(options.host) without a password: set one with "
                    + "`mediasync serve --set-password` (or listen on 127.0.0.1)")
        }
        let mirror = try Mirror.openForReading(options.root)
        serverId = try MediaServe.serverId(root: options.root)
        let credentials = try? Credentials.load(from: options.config)
        userName = password?.user ?? credentials?.userName ?? "mediasync"
        userId =
            credentials.map { ServeIds.plain($0.userId) }
            ?? ServeIds.hex32("\(serverId):user:\(userName.lowercased())")
        serverName = credentials?.serverName.map { "\($0) (mediasync)" } ?? "mediasync"
        hasPassword = password != nil
        let dto = JellyfinDTO(
            serverId: serverId, serverName: serverName, version: JellyfinDTO.jellyfinVersion, userId: userId,
            userName: userName)
        state = try ServeState(
            root: options.root, index: mirror.index, dto: dto, password: password, book: mirror.playState,
            config: options.config, homeServer: options.homeServer)
    }

    /// Problems met reading the mirror (unreadable metadata), for the log.
    public var problems: [String] { state.catalog().problems }

    /// How many of each kind are listed, by Jellyfin type (`Movie`, `Series`, `Episode`, `MusicVideo`, `Video`,
    /// `MusicArtist`, `Playlist`, `BoxSet`, `AudioBook`, `Book`), except that `MusicAlbum` and `Audio` count the
    /// podcasts and their episodes only (as this count always has), `Album` and `Track` the music library's albums and
    /// tracks, and `AudioBook` each audiobook once (a book in parts is one).
    public var counts: [String: Int] {
        let catalog = state.catalog()
        let podcasts = Catalog.viewId(serverId: serverId, collectionType: "music")
        var counts: [String: Int] = [:]
        let books = Catalog.viewId(serverId: serverId, collectionType: "books")
        for item in catalog.items.values {
            var key = item.type
            // An audiobook counts once: the book of one file, or the folder of its parts (not each part).
            if key == "AudioBook", item.parentId != books { continue }
            if key == "Folder", item.viewId == books { key = "AudioBook" }
            if item.viewId != podcasts {
                if key == "MusicAlbum" { key = "Album" } else if key == "Audio" { key = "Track" }
            }
            counts[key, default: 0] += 1
        }
        return counts
    }

    /// Serves until the task is cancelled (or the process gets SIGINT/SIGTERM with `gracefulShutdown`).
    /// - Parameter onListening: called with the bound `host:port` once the server accepts connections.
    public func run(
        gracefulShutdown: Bool = false, logger: Logger? = nil,
        onListening: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws {
        let state = self.state
        let host = options.host
        let discovery = DiscoveryBox()
        let discover = options.discover
        let discoveryPort = options.discoveryPort
        let serverId = self.serverId
        let serverName = self.serverName
        var quiet = Logger(label: "mediasync.serve")
        quiet.logLevel = .warning
        let app = Application(
            responder: ServeResponder(state: state),
            server: HTTPServerBuilder { responder in
                AnsweringUpgradeChannel(
                    inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: .init()) { head, _, _ in
                        ServeSocket.shouldUpgrade(head, state: state)
                    })
            },
            configuration: ApplicationConfiguration(address: .hostname(host, port: options.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                let shown = MediaServe.advertisedHost(host)
                let address = shown.contains(":") ? "[\(shown)]:\(port)" : "\(shown):\(port)"
                state.advertisedAddress.withLock { $0 = address }
                if discover {
                    let responder = DiscoveryResponder(
                        port: discoveryPort, serverId: serverId, serverName: serverName, address: "http://\(address)")
                    responder.start()
                    discovery.responder.withLock { $0 = responder }
                }
                onListening(address)
            },
            logger: logger ?? quiet)
        defer { discovery.responder.withLock { $0?.stop() } }
        if gracefulShutdown {
            var group = ServiceGroupConfiguration(
                services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger ?? quiet)
            // Responses under way get this long to end; then their connections are cut: a client that stopped reading
            // a stream would otherwise hold the shutdown for ever.
            group.maximumGracefulShutdownDuration = .seconds(5)
            try await ServiceGroup(configuration: group).run()
        } else {
            try await app.run()
        }
    }

    /// The address clients are told: the listening one, or this host's name when listening on every address.
    static func advertisedHost(_ host: String) -> String {
        guard host == "0.0.0.0" || host == "::" else { return host }
        return ProcessInfo.processInfo.hostName
    }

    /// Reads `HOST:PORT`, `[IPv6]:PORT`, `:PORT` or `HOST`.
    public static func parseListen(_ text: String) -> (host: String, port: Int)? {
        var host = text
        var port = 8096
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = String(text[..<colon])
            guard let value = Int(text[text.index(after: colon)...]) else { return nil }
            port = value
        }
        if host.isEmpty { host = "0.0.0.0" }
        guard (0...65_535).contains(port) else { return nil }
        return (host, port)
    }

    /// Whether `host` is the loopback interface only.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The mirror's server id, made once (32 hex digits) and kept in `.mediasync/serve-id`.
    static func serverId(root: MirrorRoot) throws -> String {
        let path = root.stateDirectory + "/serve-id"
        if let data = FileManager.default.contents(atPath: path) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.count == 32, text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) {
                return text
            }
        }
        let id = ServeIds.random32()
        let temporary = path + ".tmp-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: Data((id + "\n").utf8)),
            rename(temporary, path) == 0
        else {
            unlink(temporary)
            throw ServeError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return id
    }

    /// `mediasync serve --set-password`: stores `password` for `user` (default: the signed-in Jellyfin user's name).
    /// Returns the user name stored.
    @discardableResult
    public static func setPassword(_ password: String, user: String?, config: ConfigDirectory) throws -> String {
        guard !password.isEmpty else {
            throw ServeError("the password is empty (it is read from the first line of stdin)")
        }
        guard let name = user ?? (try? Credentials.load(from: config))?.userName, !name.isEmpty else {
            throw ServeError("name the user with --user (no Jellyfin sign-in to take the name from)")
        }
        try ServePassword.make(user: name, password: password).save(to: config)
        // A new password signs every client out: the tokens given under the old one are forgotten.
        ServeTokens.forgetAll(in: config)
        return name
    }
}

/// The discovery responder started once the server listens (held outside the closure that starts it).
private final class DiscoveryBox: Sendable {
    let responder = Mutex<DiscoveryResponder?>(nil)
}
