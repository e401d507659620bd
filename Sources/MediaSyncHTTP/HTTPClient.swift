internal import CCurl
import Foundation

/// Sends API requests over libcurl and returns their responses in memory.
///
/// All requests of the process share one libcurl multi loop and its connection cache.
/// Idempotent requests that fail for a retryable reason are tried again per ``retryPolicy``.
public final class HTTPClient: Sendable {
    /// The settings for every request.
    public let configuration: HTTPClientConfiguration
    /// How failed idempotent requests are retried.
    public let retryPolicy: RetryPolicy
    let loop: CurlMultiLoop

    public init(
        configuration: HTTPClientConfiguration = HTTPClientConfiguration(), retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.configuration = configuration
        self.retryPolicy = retryPolicy
        self.loop = CurlMultiLoop.shared
    }

    /// Sends a request, following redirects, and returns the final response.
    ///
    /// - Returns: the response for any status below 400 (a 304 included).
    /// - Throws: ``HTTPError``: of kind ``HTTPError/Kind/status`` for 4xx/5xx answers, or a transport,
    ///   timeout, TLS or cancellation error.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var attempt = 1
        while true {
            do {
                return try await sendOnce(request)
            } catch let error as HTTPError {
                guard request.isIdempotent, request.retriesStalls || !error.isStall,
                    let delay = retryPolicy.delay(afterAttempt: attempt, error: error, random: Double.random(in: 0...1))
                else { throw error }
                do {
                    try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                } catch {
                    throw HTTPError.cancelled(url: request.url)
                }
                attempt += 1
            }
        }
    }

    private func sendOnce(_ request: HTTPRequest) async throws -> HTTPResponse {
        let collector = MemoryCollector(limit: configuration.maxBodySize, url: request.url)
        let operation = try CurlOperation(url: request.url, handler: collector)
        try operation.configure(configuration)
        // An empty value lets libcurl offer every encoding it supports and decode the answer.
        try operation.set(CURLOPT_ACCEPT_ENCODING, "")
        try operation.set(CURLOPT_TIMEOUT_MS, Int((request.timeout ?? configuration.requestTimeout) * 1000))
        if let stallTime = request.stallTime {
            try operation.set(CURLOPT_LOW_SPEED_TIME, stallTime)
        }
        if !request.followRedirects {
            try operation.set(CURLOPT_FOLLOWLOCATION, 0)
        }
        if let credentials = request.credentials {
            // Basic or Digest, whichever the server's challenge asks for (libcurl first asks without them).
            try operation.set(CURLOPT_USERNAME, credentials.username)
            try operation.set(CURLOPT_PASSWORD, credentials.password)
            try operation.set(CURLOPT_HTTPAUTH, ccurl_auth_basic_or_digest())
        }
        var headers = request.headers
        if headers["Accept"] == nil {
            headers.add(name: "Accept", value: "application/json")
        }
        // No "Expect: 100-continue" round trip for small bodies.
        headers.replaceOrAdd(name: "Expect", value: "")
        try operation.setHeaders(headers)
        let method = request.method.uppercased()
        if let body = request.body {
            try operation.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count))
            try body.withUnsafeBytes { buffer in
                // COPYPOSTFIELDS copies the bytes, so the buffer may go away afterwards.
                try operation.set(
                    CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
            }
            if method != "POST" {
                try operation.set(CURLOPT_CUSTOMREQUEST, method)
            }
        } else if method == "HEAD" {
            try operation.set(CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            try operation.set(CURLOPT_CUSTOMREQUEST, method)
        }
        let completion = await loop.perform(operation)
        if let error = completion.abortError {
            throw error
        }
        guard completion.code == .ok else {
            throw HTTPError.fromCurl(
                completion.code, detail: completion.detail, url: request.url, requestSent: completion.requestSent)
        }
        if completion.status >= 400 {
            let retryAfter = RetryPolicy.parseRetryAfter(
                completion.headers["Retry-After"], now: Date().timeIntervalSince1970)
            throw HTTPError.fromStatus(
                completion.status, url: request.url, retryAfter: retryAfter,
                bodyExcerpt: HTTPError.excerpt(collector.excerpt, withoutCredentialsOf: request.headers))
        }
        return HTTPResponse(
            status: completion.status, headers: completion.headers, body: collector.body,
            effectiveURL: completion.effectiveURL)
    }
}

/// Keeps a response body in memory, up to a limit.
final class MemoryCollector: CurlResponseHandler, @unchecked Sendable {
    private(set) var body: [UInt8] = []
    private let limit: Int
    private let url: String

    init(limit: Int, url: String) {
        self.limit = limit
        self.url = url
    }

    func didReceiveHead(status: Int, headers: HTTPHeaders, contentLength: Int64?) -> HTTPError? {
        if let contentLength, contentLength > Int64(limit) {
            return tooLarge()
        }
        if let contentLength, contentLength > 0 {
            body.reserveCapacity(Int(contentLength))
        }
        return nil
    }

    func didReceive(_ bytes: UnsafeRawBufferPointer) -> HTTPError? {
        guard body.count + bytes.count <= limit else { return tooLarge() }
        body.append(contentsOf: bytes)
        return nil
    }

    /// The start of an error body, printable, on one line.
    var excerpt: String? {
        HTTPError.excerpt(body)
    }

    private func tooLarge() -> HTTPError {
        HTTPError(.invalidResponse, "the response is larger than \(limit) bytes", url: url)
    }
}
