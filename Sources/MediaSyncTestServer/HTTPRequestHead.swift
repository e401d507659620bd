import Foundation

/// The parsed head (request line + headers) of one HTTP/1.x request.
struct HTTPRequestHead: Sendable {
    var method: String
    var target: String
    var version: String
    var headers: [String: String]
    /// Path as sent (still percent-encoded), without the query.
    var rawPath: String
    /// Percent-decoded path.
    var path: String
    /// Decoded query pairs (keys case preserved, last one wins).
    var query: [String: String]

    /// Parses the bytes before the blank line. Returns nil for a malformed head.
    init?(_ bytes: ArraySlice<UInt8>) {
        // Header bytes are treated as Latin-1-ish; we only need ASCII here.
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        // Tolerate leading empty lines (RFC 9112 §2.2).
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first else { return nil }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        method = parts[0]
        target = parts[1]
        version = parts[2]
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
        self.headers = headers
        var pathPart = target
        var queryPart = ""
        if let q = target.firstIndex(of: "?") {
            pathPart = String(target[..<q])
            queryPart = String(target[target.index(after: q)...])
        }
        // Absolute-form targets (proxies) → keep only the path.
        if pathPart.hasPrefix("http://") || pathPart.hasPrefix("https://"),
            let url = URL(string: pathPart)
        {
            pathPart = url.path.isEmpty ? "/" : url.path
        }
        rawPath = pathPart
        path = pathPart.removingPercentEncoding ?? pathPart
        query = HTTPRequestHead.parseQuery(queryPart)
    }

    /// Decodes an `application/x-www-form-urlencoded`-style query string.
    static func parseQuery(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = decodeComponent(String(kv[0]))
            let value = kv.count > 1 ? decodeComponent(String(kv[1])) : ""
            result[key] = value
        }
        return result
    }

    /// Percent-decodes a query component, treating `+` as a space.
    static func decodeComponent(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Whether the connection should stay open after the response.
    var wantsKeepAlive: Bool {
        let connection = (headers["connection"] ?? "").lowercased()
        let tokens = connection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }

    /// The declared body length (nil when absent or invalid).
    var contentLength: Int? {
        guard let value = headers["content-length"] else { return nil }
        return Int(value.trimmingCharacters(in: .whitespaces))
    }

    /// Whether the body uses chunked transfer coding.
    var isChunked: Bool {
        (headers["transfer-encoding"] ?? "").lowercased().contains("chunked")
    }
}
