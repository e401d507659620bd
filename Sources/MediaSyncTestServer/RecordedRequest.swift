/// One request as the test server received it (recorded in arrival order).
public struct RecordedRequest: Sendable, Equatable {
    /// The request method, e.g. `GET`.
    public var method: String
    /// The percent-decoded path without the query string.
    public var path: String
    /// Decoded query parameters; keys as sent (case preserved). For repeated keys the last one wins.
    public var query: [String: String]
    /// Request headers; names lowercased. Repeated headers are joined with `", "`.
    public var headers: [String: String]
    /// The request body (empty when none).
    public var body: [UInt8]

    /// Creates a recorded request.
    public init(method: String, path: String, query: [String: String], headers: [String: String], body: [UInt8]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// Looks up a query parameter case-insensitively (ASP.NET binds query keys that way).
    public func queryValue(_ name: String) -> String? {
        if let exact = query[name] { return exact }
        let lowered = name.lowercased()
        return query.first(where: { $0.key.lowercased() == lowered })?.value
    }

    /// Looks up a header by (case-insensitive) name.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
