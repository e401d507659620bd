import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The one error type of mediasync's HTTP layer: a clear message plus a retryable/fatal class.
///
/// New kinds of failure can be added without breaking clients; compare with the static members,
/// for example `error.kind == .status`.
public struct HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case invalidURL, transport, timedOut, stalled, status, tooManyRedirects, tls
            case fileSystem, diskFull, sizeMismatch, checksumMismatch, cancelled, invalidResponse
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The URL could not be used.
        public static let invalidURL = Kind(.invalidURL)
        /// The connection failed or broke (reset, refused, truncated body).
        public static let transport = Kind(.transport)
        /// The connect or request timeout ran out.
        public static let timedOut = Kind(.timedOut)
        /// The transfer fell below the low-speed limit for too long.
        public static let stalled = Kind(.stalled)
        /// The server answered with an HTTP error status (see ``HTTPError/status``).
        public static let status = Kind(.status)
        /// More redirects than allowed.
        public static let tooManyRedirects = Kind(.tooManyRedirects)
        /// The TLS handshake or certificate verification failed.
        public static let tls = Kind(.tls)
        /// A local file operation failed (see ``HTTPError/errno``).
        public static let fileSystem = Kind(.fileSystem)
        /// The disk (or quota) is full.
        public static let diskFull = Kind(.diskFull)
        /// The downloaded size differs from the expected size.
        public static let sizeMismatch = Kind(.sizeMismatch)
        /// The downloaded bytes do not have the expected checksum.
        public static let checksumMismatch = Kind(.checksumMismatch)
        /// The transfer was cancelled.
        public static let cancelled = Kind(.cancelled)
        /// The response could not be understood (for example, a body that is not the expected JSON).
        public static let invalidResponse = Kind(.invalidResponse)

        public var description: String { code.rawValue }
    }

    /// The kind of failure.
    public let kind: Kind
    /// A human-readable, one-line message.
    public let message: String
    /// The URL involved, without credentials or query, when known.
    public let url: String?
    /// The HTTP status, for ``Kind/status`` errors.
    public let status: Int?
    /// The server's `Retry-After`, in seconds, when it sent one.
    public let retryAfter: Double?
    /// The libcurl code behind a transport failure.
    public let curlCode: CurlCode?
    /// The `errno` behind a file-system failure.
    public let errno: Int32?
    /// For a time-out: whether the request had gone out (nil when not known).
    public let requestSent: Bool?

    init(
        _ kind: Kind, _ message: String, url: String? = nil, status: Int? = nil, retryAfter: Double? = nil,
        curlCode: CurlCode? = nil, errno: Int32? = nil, requestSent: Bool? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url.map(HTTPError.redact)
        self.status = status
        self.retryAfter = retryAfter
        self.curlCode = curlCode
        self.errno = errno
        self.requestSent = requestSent
    }

    public var description: String {
        if let url { return "\(message) (\(url))" }
        return message
    }

    /// Whether another attempt may succeed: connection resets, timeouts, stalls, 5xx, 408 and 429 (no other 4xx).
    public var isRetryable: Bool {
        switch kind {
        case .transport, .timedOut, .stalled:
            return true
        case .status:
            guard let status else { return false }
            return status == 408 || status == 429 || (status >= 500 && status != 501 && status != 505)
        default:
            return false
        }
    }

    /// Whether the answer did not come in time: no byte for the stall limit, or the whole-request timeout once the
    /// request had gone out. A name that did not resolve or a connection not made in time is not a stall (it is
    /// retried as it is); when libcurl did not say whether the request went out, its message tells.
    public var isStall: Bool {
        kind == .stalled || (kind == .timedOut && (requestSent ?? !message.lowercased().contains("connect")))
    }

    /// Whether the failure should stop the whole run rather than just this item (a full disk).
    public var isFatal: Bool {
        kind == .diskFull
    }

    /// Removes the query and any user information from a URL before it is shown or logged.
    static func redact(_ url: String) -> String {
        var text = url
        if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            text = String(text[..<query])
        }
        if let schemeEnd = text.utf8.firstRange(of: "://".utf8) {
            let rest = text[schemeEnd.upperBound...]
            let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            if let at = rest[..<hostEnd].lastIndex(of: "@") {
                text = String(text[..<schemeEnd.upperBound]) + String(rest[rest.index(after: at)...])
            }
        }
        return text
    }

    // MARK: Constructors used across the module

    static func fromStatus(_ status: Int, url: String, retryAfter: Double?, bodyExcerpt: String?) -> HTTPError {
        var message = "the server answered \(status) \(HTTPError.reasonPhrase(status))"
        if let bodyExcerpt, !bodyExcerpt.isEmpty {
            message += ": \(bodyExcerpt)"
        }
        return HTTPError(.status, message, url: url, status: status, retryAfter: retryAfter)
    }

    static func fromCurl(_ code: CurlCode, detail: String, url: String, requestSent: Bool? = nil) -> HTTPError {
        let text = detail.isEmpty ? code.description : detail
        switch code {
        case .operationTimedOut:
            if text.lowercased().contains("too slow") {
                return HTTPError(.stalled, "the transfer stalled: \(text)", url: url, curlCode: code)
            }
            return HTTPError(.timedOut, "timed out: \(text)", url: url, curlCode: code, requestSent: requestSent)
        case .tooManyRedirects:
            return HTTPError(.tooManyRedirects, "too many redirects: \(text)", url: url, curlCode: code)
        case .peerFailedVerification, .sslCACertBadFile:
            return HTTPError(
                .tls, "TLS verification failed: \(text) (pass --ca-file for a private CA, or --insecure)", url: url,
                curlCode: code)
        case .unsupportedProtocol, .urlMalformed:
            return HTTPError(.invalidURL, "invalid URL: \(text)", url: url, curlCode: code)
        case .abortedByCallback:
            return HTTPError(.cancelled, "cancelled", url: url, curlCode: code)
        default:
            if code.isTransient || code == .rangeError {
                return HTTPError(.transport, "connection failed: \(text)", url: url, curlCode: code)
            }
            return HTTPError(.transport, "transfer failed: \(text)", url: url, curlCode: code)
        }
    }

    static func fromErrno(_ number: Int32, operation: String, path: String) -> HTTPError {
        let reason = String(cString: strerror(number))
        if number == ENOSPC || number == EDQUOT {
            return HTTPError(.diskFull, "disk full while \(operation) \(path): \(reason)", errno: number)
        }
        return HTTPError(.fileSystem, "could not \(operation) \(path): \(reason)", errno: number)
    }

    /// The start of an error body as one printable line; nil for empty or HTML bodies (an error page says
    /// nothing the status does not).
    static func excerpt(_ body: [UInt8]) -> String? {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        let line = text.split(whereSeparator: { $0.isNewline || $0 == "\t" }).joined(separator: " ")
            .trimmed(of: " ")
        guard !line.isEmpty, !line.hasPrefix("<") else { return nil }
        return String(line)
    }

    /// `excerpt` without the credentials the request sent: a server that echoes a token from its `Authorization`
    /// header in an error body must not put the token into a message or a log line. The credentials are the
    /// parameters named `token`, `key`, `password` or `secret` of an `Authorization` value with parameters
    /// (`MediaBrowser …, Token="…"`), else everything after its scheme (`Bearer …`, `Basic …`); the whole of an
    /// `X-…-Token` value; cookie values. Each (also percent-decoded) becomes `<redacted>`.
    static func excerpt(_ excerpt: String?, withoutCredentialsOf headers: HTTPHeaders) -> String? {
        guard var text = excerpt else { return nil }
        var secrets: [String] = []
        for field in headers {
            let name = field.name.lowercased()
            let value = field.value.trimmed(of: " ")
            if name == "authorization" || name == "proxy-authorization" {
                let credentials = value.drop { $0 != " " }.dropFirst()
                let parameters = credentials.split(separator: ",").compactMap { part -> (String, String)? in
                    let pair = part.split(separator: "=", maxSplits: 1)
                    guard pair.count == 2 else { return nil }
                    let key = pair[0].trimmed(of: " ").lowercased()
                    return (key, String(pair[1].trimmed(of: " \"")))
                }
                if parameters.isEmpty {
                    secrets.append(String(credentials))
                } else {
                    secrets += parameters.filter { key, _ in
                        ["token", "key", "password", "secret"].contains { key.contains($0) }
                    }.map(\.1)
                }
            } else if name.hasPrefix("x-") && name.hasSuffix("token") {
                secrets.append(String(value))
            } else if name == "cookie" {
                secrets += value.split(separator: ";").compactMap { cookie in
                    cookie.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init)
                }
            }
        }
        for secret in secrets where secret.count >= 4 {
            for form in Set([secret, secret.removingPercentEncoding ?? secret]) where text.contains(form) {
                text = text.replacingOccurrences(of: form, with: "<redacted>")
            }
        }
        return text
    }

    /// A redirect that cannot be followed (no Location, a loop, too many hops).
    public static func redirect(_ message: String, url: String) -> HTTPError {
        HTTPError(.tooManyRedirects, message, url: url)
    }

    static func notStarted(_ request: TransferRequest) -> HTTPError {
        HTTPError(.cancelled, "not started: another transfer in the batch is invalid", url: request.url)
    }

    public static func cancelled(url: String?) -> HTTPError {
        HTTPError(.cancelled, "cancelled", url: url)
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 410: return "Gone"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
