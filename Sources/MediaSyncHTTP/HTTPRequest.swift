import Foundation

/// An HTTP request for an API call whose response body is kept in memory.
public struct HTTPRequest: Sendable {
    /// The method, such as `GET` or `POST`.
    public var method: String
    /// The absolute URL.
    public var url: String
    /// Extra header fields.
    public var headers: HTTPHeaders
    /// The request body, if any.
    public var body: [UInt8]?
    /// A whole-request timeout in seconds, overriding the client's configuration.
    public var timeout: Double?
    /// Seconds below the configured low speed (no byte, for an answer the server builds before sending it) before
    /// the attempt fails as stalled, overriding the client's configuration.
    public var stallTime: Int?
    /// Whether an attempt that stalled or timed out is sent again as it is. False when the caller has a better
    /// answer than the same request again (a listing asks for a smaller page).
    public var retriesStalls = true
    /// Whether redirects are followed (up to the configured limit). When false, a 3xx answer is returned as
    /// the response, so a caller can tell permanent redirects from temporary ones.
    public var followRedirects: Bool
    /// A user name and password for HTTP authentication: libcurl answers the server's Basic or Digest challenge.
    public var credentials: HTTPCredentials?

    public init(
        method: String = "GET", url: String, headers: HTTPHeaders = [:], body: [UInt8]? = nil, timeout: Double? = nil,
        followRedirects: Bool = true, credentials: HTTPCredentials? = nil
    ) {
        self.credentials = credentials
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.followRedirects = followRedirects
    }

    /// A request with a JSON body and `Content-Type: application/json`.
    /// - Throws: `EncodingError` when the value cannot be encoded.
    public static func json<Body: Encodable>(
        method: String = "POST", url: String, body: Body, headers: HTTPHeaders = [:]
    ) throws -> HTTPRequest {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        let data = try JSONEncoder().encode(body)
        return HTTPRequest(method: method, url: url, headers: headers, body: [UInt8](data))
    }

    /// Whether a failed attempt may be sent again without side effects.
    var isIdempotent: Bool {
        ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"].contains(method.uppercased())
    }
}

/// A complete HTTP response with its body in memory.
public struct HTTPResponse: Sendable {
    /// The final status code (after redirects).
    public var status: Int
    /// The final response's header fields.
    public var headers: HTTPHeaders
    /// The body, decompressed.
    public var body: [UInt8]
    /// The URL that answered, after redirects.
    public var effectiveURL: String

    public init(status: Int, headers: HTTPHeaders, body: [UInt8], effectiveURL: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.effectiveURL = effectiveURL
    }

    /// Decodes the body as JSON.
    /// - Throws: ``HTTPError`` of kind ``HTTPError/Kind/invalidResponse`` naming what was expected.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        do {
            return try decoder.decode(type, from: Data(body))
        } catch {
            let start = String(decoding: body.prefix(80), as: UTF8.self)
                .replacingOccurrences(of: "\n", with: " ")
            throw HTTPError(
                .invalidResponse,
                "the server's answer is not the expected \(type) JSON (\(HTTPResponse.describe(error))); it starts with: \(start)",
                url: effectiveURL)
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing field \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): return "wrong type at \(path(context))"
        case DecodingError.valueNotFound(_, let context): return "null at \(path(context))"
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "bad value at \(path(context))"
        default: return "\(error)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map(\.stringValue).joined(separator: ".")
    }
}

/// A user name and password for a server that asks for HTTP authentication (a private feed).
public struct HTTPCredentials: Codable, Equatable, Sendable, CustomStringConvertible {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// The user name only: the password never reaches a message.
    public var description: String { "credentials of \(username)" }
}
