import Testing

@testable import MediaSyncHTTP

@Suite struct RetryPolicyTests {
    private let policy = RetryPolicy(maxAttempts: 4, baseDelay: 1, maxDelay: 5, maxRetryAfter: 60, jitter: 0.5)
    private let reset = HTTPError(.transport, "connection reset")

    @Test func backsOffExponentiallyWithJitterAndACap() {
        #expect(policy.delay(afterAttempt: 1, error: reset, random: 1) == 1)
        #expect(policy.delay(afterAttempt: 2, error: reset, random: 1) == 2)
        #expect(policy.delay(afterAttempt: 3, error: reset, random: 1) == 4)
        #expect(policy.delay(afterAttempt: 2, error: reset, random: 0) == 1)
        let capped = RetryPolicy(maxAttempts: 10, baseDelay: 1, maxDelay: 5, jitter: 0)
        #expect(capped.delay(afterAttempt: 8, error: reset, random: 0.3) == 5)
    }

    @Test func givesUpAfterMaxAttempts() {
        #expect(policy.delay(afterAttempt: 4, error: reset, random: 0.5) == nil)
        #expect(RetryPolicy.none.delay(afterAttempt: 1, error: reset, random: 0.5) == nil)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retriesTransientStatuses(status: Int) {
        let error = HTTPError.fromStatus(status, url: "http://x/", retryAfter: nil, bodyExcerpt: nil)
        #expect(error.isRetryable)
        #expect(policy.delay(afterAttempt: 1, error: error, random: 0) != nil)
    }

    @Test(arguments: [400, 401, 403, 404, 410, 416, 425, 501])
    func doesNotRetryClientErrors(status: Int) {
        let error = HTTPError.fromStatus(status, url: "http://x/", retryAfter: nil, bodyExcerpt: nil)
        #expect(!error.isRetryable)
        #expect(policy.delay(afterAttempt: 1, error: error, random: 0) == nil)
    }

    @Test func diskFullIsFatalAndNotRetried() {
        let error = HTTPError.fromErrno(28, operation: "write", path: "/x")
        #expect(error.kind == .diskFull)
        #expect(error.isFatal)
        #expect(policy.delay(afterAttempt: 1, error: error, random: 0) == nil)
    }

    @Test func honoursRetryAfterUpToTheLimit() {
        let asked = HTTPError.fromStatus(503, url: "http://x/", retryAfter: 7, bodyExcerpt: nil)
        #expect(policy.delay(afterAttempt: 1, error: asked, random: 0) == 7)
        let tooLong = HTTPError.fromStatus(429, url: "http://x/", retryAfter: 3600, bodyExcerpt: nil)
        #expect(policy.delay(afterAttempt: 1, error: tooLong, random: 0) == nil)
    }

    @Test func parsesRetryAfterSecondsAndDates() {
        #expect(RetryPolicy.parseRetryAfter("120", now: 0) == 120)
        #expect(RetryPolicy.parseRetryAfter("Tue, 14 Nov 2023 22:13:20 GMT", now: 1_699_999_990) == 10)
        #expect(RetryPolicy.parseRetryAfter("Tue, 14 Nov 2023 22:13:20 GMT", now: 1_800_000_000) == 0)
        #expect(RetryPolicy.parseRetryAfter("soon", now: 0) == nil)
        #expect(RetryPolicy.parseRetryAfter(nil, now: 0) == nil)
    }

    @Test func redactsQueriesAndCredentialsFromURLs() {
        let error = HTTPError(.transport, "x", url: "https://user:secret@example.org/a/b?api_key=SECRET#frag")
        #expect(error.url == "https://example.org/a/b")
        #expect(!error.description.contains("SECRET"))
    }

    @Test(
        "a stall is no byte in time or the whole request's time out, not a connection that was not made",
        arguments: [
            ("Operation too slow. Less than 1 bytes/sec transferred the last 120 seconds", true),
            ("Operation timed out after 600000 milliseconds with 0 bytes received", true),
            ("Connection timed out after 15001 milliseconds", false),
            ("Failed to connect to 10.0.0.9 port 8096 after 15000 ms: Timeout was reached", false),
        ])
    func stallsAreTold(_ detail: String, _ isStall: Bool) {
        #expect(HTTPError.fromCurl(.operationTimedOut, detail: detail, url: "http://h/").isStall == isStall)
    }

    @Test(
        "libcurl's word on whether the request went out decides, whatever its message says",
        arguments: [
            ("Resolving timed out after 5000 milliseconds", false, false),
            ("Operation timed out after 600000 milliseconds with 0 bytes received", true, true),
            ("Operation timed out after 600000 milliseconds with 0 bytes received", false, false),
            ("Connection timed out after 15001 milliseconds", false, false),
            ("Operation too slow. Less than 1 bytes/sec transferred the last 120 seconds", true, true),
        ])
    func aTimeOutBeforeTheRequestWentOutIsNoStall(_ detail: String, _ sent: Bool, _ isStall: Bool) {
        let error = HTTPError.fromCurl(.operationTimedOut, detail: detail, url: "http://h/", requestSent: sent)
        #expect(error.isStall == isStall)
    }
}
