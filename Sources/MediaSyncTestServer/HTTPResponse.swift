import Foundation
import MediaSyncJSON

/// A response to write: status, headers and a slice of a (shared, copy-on-write) byte array.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    /// The backing bytes; only `bodyRange` is sent. Large files are shared, not copied.
    var body: [UInt8]
    var bodyRange: Range<Int>
    /// Size of the full representation (for a `rangeNotSatisfiable` fault), when it is a file.
    var representationSize: Int?
    /// When true, no Content-Length is sent (304, 1xx, 204).
    var suppressContentLength: Bool = false
    /// When true the body goes out with `Transfer-Encoding: chunked` and no Content-Length: a stream whose length
    /// the server does not know, as Kestrel sends a progressive transcode (`ProgressiveFileStream` cannot tell its
    /// length).
    var chunked: Bool = false

    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], representationSize: Int? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.bodyRange = 0..<body.count
        self.representationSize = representationSize
        self.suppressContentLength = status == 304 || status == 204 || status < 200
    }

    /// A JSON response (`application/json; charset=utf-8`, as Jellyfin sends).
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: value.serialized())
    }

    /// An empty-bodied response (e.g. 401 as recorded: `content-length: 0`, no WWW-Authenticate).
    static func empty(_ status: Int) -> HTTPResponse {
        HTTPResponse(status: status)
    }

    /// A plain text response.
    static func text(_ text: String, status: Int, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(text.utf8))
    }

    /// Standard reason phrases.
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Payload Too Large"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status \(status)"
        }
    }
}
