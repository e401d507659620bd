import Foundation
import MediaSyncHTTP

/// The one error type of the Jellyfin client: a clear, one-line message plus its kind.
///
/// New kinds can be added without breaking clients; compare kinds with the static members, for example
/// `error.kind == .authenticationNeeded`. Messages never contain the access token.
public struct JellyfinError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case invalidServerURL, notJellyfin, authenticationNeeded, invalidCredentials, forbidden, notFound
            case serverStarting, serverError, requestRejected, transport, invalidResponse, invalidID
            case quickConnectDisabled, quickConnectTimedOut, userNotFound, notSignedIn, cancelled
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The server address is not an `http` or `https` URL with a host.
        public static let invalidServerURL = Kind(.invalidServerURL)
        /// Whatever answers at the address is not a Jellyfin server.
        public static let notJellyfin = Kind(.notJellyfin)
        /// The server no longer accepts the stored sign-in (401): sign in again.
        public static let authenticationNeeded = Kind(.authenticationNeeded)
        /// The user name and password (or Quick Connect secret, or API key) were refused at sign-in.
        public static let invalidCredentials = Kind(.invalidCredentials)
        /// The user may not do this (403), for example download.
        public static let forbidden = Kind(.forbidden)
        /// The item or resource does not exist on the server (404).
        public static let notFound = Kind(.notFound)
        /// The server is starting up or briefly unavailable (503).
        public static let serverStarting = Kind(.serverStarting)
        /// The server failed (5xx other than 503).
        public static let serverError = Kind(.serverError)
        /// The server refused the request (4xx other than 401, 403, 404).
        public static let requestRejected = Kind(.requestRejected)
        /// The connection failed, timed out or broke; the message is the HTTP layer's.
        public static let transport = Kind(.transport)
        /// The answer is not the expected JSON (truncated, HTML, wrong shape) or a listing never ends.
        public static let invalidResponse = Kind(.invalidResponse)
        /// An id or name from the server cannot be used in a URL (`/`, `..`, NUL, too long).
        public static let invalidID = Kind(.invalidID)
        /// Quick Connect is turned off on the server.
        public static let quickConnectDisabled = Kind(.quickConnectDisabled)
        /// Nobody approved the Quick Connect code in time.
        public static let quickConnectTimedOut = Kind(.quickConnectTimedOut)
        /// No user of that name (API key sign-in).
        public static let userNotFound = Kind(.userNotFound)
        /// The client has no user id or token for a call that needs one.
        public static let notSignedIn = Kind(.notSignedIn)
        /// The task was cancelled.
        public static let cancelled = Kind(.cancelled)

        /// The kind's name, such as `authenticationNeeded`.
        public var description: String { code.rawValue }
    }

    /// The kind of failure.
    public let kind: Kind
    /// A human-readable, one-line message.
    public let message: String
    /// The HTTP status behind the failure, when there was one.
    public let status: Int?
    /// What the server itself said, when its error answer had a text body (a 401 for a library the user may no
    /// longer access says so: `"<user> is not permitted to access Library <name>."`).
    public let detail: String?
    /// Whether the answer did not come in time (no byte for the stall limit, or the request's timeout): a listing
    /// asks for a smaller page then.
    public let isStall: Bool
    private let retryable: Bool

    init(
        _ kind: Kind, _ message: String, status: Int? = nil, retryable: Bool = false, detail: String? = nil,
        isStall: Bool = false
    ) {
        self.kind = kind
        self.message = message
        self.status = status
        self.retryable = retryable
        self.detail = detail
        self.isStall = isStall
    }

    /// The message.
    public var description: String { message }

    /// Whether another attempt later may succeed: a server starting up, 5xx, connection failures.
    public var isRetryable: Bool { retryable }

    /// Whether the failure should stop the whole run rather than just one item (a refused sign-in, a wrong
    /// server): every other request would fail the same way.
    public var isFatal: Bool {
        kind == .authenticationNeeded || kind == .invalidCredentials || kind == .notJellyfin
            || kind == .invalidServerURL || kind == .notSignedIn
    }

    // MARK: Constructors

    /// An error for an answer that is not the expected JSON.
    static func invalidResponse(_ message: String) -> JellyfinError {
        JellyfinError(.invalidResponse, message)
    }

    /// Quick Connect is turned off.
    static let quickConnectOff = JellyfinError(
        .quickConnectDisabled,
        "Quick Connect is turned off on this server: an administrator can turn it on in the dashboard, "
            + "or sign in with a password or an API key")

    /// The standard message for a refused stored sign-in.
    static let signInAgain = "the server no longer accepts this sign-in: sign in again with `mediasync login`"

    /// Maps an error of the HTTP layer to a clear message about what was being done.
    ///
    /// - Parameters:
    ///   - error: the HTTP layer's error.
    ///   - action: what was being done, as a verb phrase that completes "this user may not …" and
    ///     "could not …", such as `download` or `list the items`.
    ///   - resource: what a 404 means is missing, such as `item 0599…`; nil when a 404 means the URL is wrong.
    ///   - signingIn: whether the request was a sign-in, where 401 means wrong credentials.
    public static func from(
        _ error: HTTPError, action: String, resource: String? = nil, signingIn: Bool = false
    ) -> JellyfinError {
        if error.kind == .status, let status = error.status {
            switch status {
            case 401 where signingIn:
                return JellyfinError(
                    .invalidCredentials, "the server did not accept these credentials (401 Unauthorized)",
                    status: status)
            case 401:
                return JellyfinError(.authenticationNeeded, signInAgain, status: status, detail: error.message)
            case 403:
                return JellyfinError(.forbidden, "this user may not \(action) (403 Forbidden)", status: status)
            case 404:
                if let resource {
                    return JellyfinError(.notFound, "not found: the server has no \(resource) (404)", status: status)
                }
                let place = error.url.map { " at \($0)" } ?? ""
                return JellyfinError(
                    .notFound, "could not \(action): the server has nothing\(place) (404 Not Found)", status: status)
            case 503:
                return JellyfinError(
                    .serverStarting, "the server is starting up; try again shortly (503 Service Unavailable)",
                    status: status, retryable: true)
            case 500...599:
                return JellyfinError(
                    .serverError, "the server failed to \(action): \(error.description)", status: status,
                    retryable: error.isRetryable)
            default:
                return JellyfinError(
                    .requestRejected, "the server refused to \(action): \(error.description)", status: status,
                    retryable: error.isRetryable)
            }
        }
        switch error.kind {
        case .cancelled:
            return JellyfinError(.cancelled, "cancelled while trying to \(action)")
        case .invalidResponse:
            return JellyfinError(
                .invalidResponse, "the server's answer to \(action) is not usable: \(error.description)")
        case .invalidURL:
            return JellyfinError(.invalidServerURL, "could not \(action): \(error.description)")
        default:
            return JellyfinError(
                .transport, "could not \(action): \(error.description)", retryable: error.isRetryable,
                isStall: error.isStall)
        }
    }

    /// This error with every occurrence of `secret` replaced, so a token echoed by a server never shows.
    func redacting(_ secret: String?) -> JellyfinError {
        guard let secret, secret.count >= 4, message.contains(secret) || detail?.contains(secret) == true else {
            return self
        }
        return JellyfinError(
            kind, message.replacingOccurrences(of: secret, with: "<token>"), status: status, retryable: retryable,
            detail: detail?.replacingOccurrences(of: secret, with: "<token>"), isStall: isStall)
    }
}
