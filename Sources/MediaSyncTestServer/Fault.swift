/// A misbehaviour the test server can be told to perform for the next request(s) to a path.
public enum Fault: Sendable, Equatable {
    /// Send the headers and the first `bytes` body bytes, then reset the connection (SO_LINGER 0, then close → RST).
    case resetAfter(bytes: Int)
    /// Send the headers with the full Content-Length, `afterBytes` body bytes, then close cleanly (FIN).
    case truncate(afterBytes: Int)
    /// Answer with this status and an empty body.
    case status(Int)
    /// Answer with this status (typically 429 or 503), an empty body and `Retry-After: <seconds>`.
    case retryAfter(status: Int, seconds: Int)
    /// Send `afterBytes` body bytes, go silent for `seconds` (cut short by shutdown or by the client going away), then
    /// close.
    case stall(afterBytes: Int, seconds: Double)
    /// Answer 200 with the full body even when a Range header is sent.
    case ignoreRange
    /// Answer a Range request as if no If-Range had been sent, and without `ETag` and `Last-Modified` (a proxy or
    /// CDN that strips validators): the client cannot tell which version the bytes belong to.
    case rangeWithoutValidators
    /// Answer 416 with `Content-Range: bytes */<size>`.
    case rangeNotSatisfiable
    /// Answer with a redirect (301/302/307/308) to `location`.
    case redirect(location: String, status: Int)
    /// Answer with an arbitrary status, content type and body (e.g. non-JSON garbage).
    case body(status: Int, contentType: String, bytes: [UInt8])
    /// Answer normally, but with `TotalRecordCount` of a JSON listing replaced by `count` (a server that lies
    /// about the length of a paged listing).
    case totalRecordCount(Int)
}
