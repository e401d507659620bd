internal import CCurl

/// A libcurl easy-interface result code (`CURLcode`), named so that it reads well.
///
/// The description comes from libcurl. The corresponding C function is `curl_easy_strerror`.
public struct CurlCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ code: CURLcode) {
        self.rawValue = Int32(code.rawValue)
    }

    public static let ok = CurlCode(CURLE_OK)
    public static let unsupportedProtocol = CurlCode(CURLE_UNSUPPORTED_PROTOCOL)
    public static let urlMalformed = CurlCode(CURLE_URL_MALFORMAT)
    public static let couldNotResolveProxy = CurlCode(CURLE_COULDNT_RESOLVE_PROXY)
    public static let couldNotResolveHost = CurlCode(CURLE_COULDNT_RESOLVE_HOST)
    public static let couldNotConnect = CurlCode(CURLE_COULDNT_CONNECT)
    public static let partialFile = CurlCode(CURLE_PARTIAL_FILE)
    public static let writeError = CurlCode(CURLE_WRITE_ERROR)
    public static let operationTimedOut = CurlCode(CURLE_OPERATION_TIMEDOUT)
    public static let abortedByCallback = CurlCode(CURLE_ABORTED_BY_CALLBACK)
    public static let tooManyRedirects = CurlCode(CURLE_TOO_MANY_REDIRECTS)
    public static let gotNothing = CurlCode(CURLE_GOT_NOTHING)
    public static let sendError = CurlCode(CURLE_SEND_ERROR)
    public static let receiveError = CurlCode(CURLE_RECV_ERROR)
    public static let peerFailedVerification = CurlCode(CURLE_PEER_FAILED_VERIFICATION)
    public static let sslConnectError = CurlCode(CURLE_SSL_CONNECT_ERROR)
    public static let sslCACertBadFile = CurlCode(CURLE_SSL_CACERT_BADFILE)
    public static let badContentEncoding = CurlCode(CURLE_BAD_CONTENT_ENCODING)
    public static let http2 = CurlCode(CURLE_HTTP2)
    public static let http2Stream = CurlCode(CURLE_HTTP2_STREAM)
    public static let weirdServerReply = CurlCode(CURLE_WEIRD_SERVER_REPLY)
    public static let rangeError = CurlCode(CURLE_RANGE_ERROR)

    /// libcurl's own one-line description of the code.
    public var description: String {
        guard let text = curl_easy_strerror(CURLcode(UInt32(bitPattern: rawValue))) else {
            return "libcurl error \(rawValue)"
        }
        return String(cString: text)
    }

    /// Whether the failure is worth another attempt: the network or the server may behave next time.
    public var isTransient: Bool {
        switch self {
        case .couldNotResolveHost, .couldNotResolveProxy, .couldNotConnect, .partialFile, .operationTimedOut,
            .gotNothing, .sendError, .receiveError, .sslConnectError, .http2, .http2Stream, .weirdServerReply:
            return true
        default:
            return false
        }
    }
}
