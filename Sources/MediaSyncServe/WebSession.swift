import Foundation
import MediaSyncMirror
import Synchronization

/// The page's signed-in browsers: a session id (the cookie) with the CSRF token the page holds, kept in memory
/// (a restart of `serve` signs every browser out).
final class WebState: Sendable {
    struct PageSession: Sendable, Equatable {
        let id: String
        let csrf: String
        /// The password's hash when it was issued: a changed password ends it.
        let password: [UInt8]
        var expires: Date
    }

    /// How long a session lasts without being used.
    static let lifetime: TimeInterval = 30 * 86_400
    /// Sessions kept at most; opening one more forgets the one used longest ago.
    static let mostSessions = 1_000
    /// The session cookie's name.
    static let cookie = "mediasync_session"
    /// How long a wrong password is answered after (besides the hash's own time): a guesser gets one try a second.
    static let wrongPasswordDelay: Duration = .seconds(1)

    let root: MirrorRoot
    /// Where the password, the Jellyfin sign-in and the feeds' credentials are (nil: the password given).
    let config: ConfigDirectory?
    /// How the page's own calls to the home server connect and retry (not a sync's).
    let homeServer: HomeServerAccess
    private let givenPassword: ServePassword?
    private let sessions = Mutex<[String: PageSession]>([:])

    init(root: MirrorRoot, config: ConfigDirectory?, password: ServePassword?, homeServer: HomeServerAccess) {
        self.root = root
        self.config = config
        self.givenPassword = password
        self.homeServer = homeServer
    }

    /// The password as stored now (it may have been changed since `serve` started).
    func currentPassword() -> ServePassword? {
        guard let config else { return givenPassword }
        return ServePassword.load(from: config)
    }

    /// A new session under the current password.
    func open(password: ServePassword?) -> PageSession {
        let session = PageSession(
            id: WebState.randomToken(), csrf: WebState.randomToken(), password: password?.hash ?? [],
            expires: Date().addingTimeInterval(WebState.lifetime))
        sessions.withLock { sessions in
            let now = Date()
            sessions = sessions.filter { $0.value.expires > now }
            // Bounded: without a password every browser without the cookie opens one (a client that never keeps
            // cookies would open one a request). The one used longest ago goes first.
            if sessions.count >= WebState.mostSessions,
                let oldest = sessions.min(by: { $0.value.expires < $1.value.expires })?.key
            {
                sessions[oldest] = nil
            }
            sessions[session.id] = session
        }
        return session
    }

    /// The live session `id` names (its lifetime renewed), nil when unknown, expired or issued under another
    /// password.
    func session(_ id: String?, password: ServePassword?) -> PageSession? {
        guard let id, !id.isEmpty else { return nil }
        let hash = password?.hash ?? []
        return sessions.withLock { sessions -> PageSession? in
            guard var session = sessions[id] else { return nil }
            guard session.expires > Date(), session.password == hash else {
                sessions[id] = nil
                return nil
            }
            session.expires = Date().addingTimeInterval(WebState.lifetime)
            sessions[id] = session
            return session
        }
    }

    func close(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// 32 random bytes as hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return ServeIds.hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Whether two tokens are equal, compared in constant time.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference: UInt8 = x.count == y.count ? 0 : 1
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }

    /// The value of cookie `name` in a `Cookie` header.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0].trimmingCharacters(in: .whitespaces) == name {
                return pair[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    // MARK: Sync

    /// What pressing "Sync now" did.
    enum SyncStart: Equatable {
        case started
        /// Another sync holds the root's lock (started here, from the CLI or by the timer).
        case alreadyRunning
        case failed(String)
    }

    /// Starts `mediasync sync` (with the stored budget) under the root's lock, in the background; the sync's
    /// progress file says how it goes.
    func startSync() -> SyncStart {
        let mirror: Mirror
        do {
            mirror = try Mirror.open(root)
        } catch let error as SyncError where error.isAlreadyRunning {
            return .alreadyRunning
        } catch {
            return .failed(String(describing: error))
        }
        let config = self.config
        let root = self.root
        Task.detached {
            let configuration = HTTPClientConfiguration()
            let sync: MirrorSync
            let budget: Int64?
            do {
                let session =
                    try config.flatMap { try Credentials.load(from: $0) } == nil
                    ? nil : try config.map { try Session.open(config: $0, configuration: configuration) }
                sync = mirror.sync(
                    session: session, configuration: configuration, transferOptions: TransferOptions(),
                    feedCredentials: config.map { FeedCredentialStore(config: $0) })
                budget = try StoredBudget.read(mirror.index)
            } catch {
                // Before the sync started (the sign-in unreadable): said in the progress file as the sync says its own.
                SyncProgressFile.recordFailure(root, String(describing: error))
                return
            }
            // The sync records how it ended, thrown or not, in the progress file.
            _ = try? await sync.run(options: SyncOptions(budget: budget))
            withExtendedLifetime(mirror) {}
        }
        return .started
    }
}
