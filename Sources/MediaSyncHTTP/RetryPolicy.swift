/// When and how often a failed request is tried again: exponential backoff with jitter,
/// honouring the server's `Retry-After`.
public struct RetryPolicy: Sendable, Equatable {
    /// Total attempts, the first included. 1 means no retry.
    public var maxAttempts: Int
    /// The delay before the second attempt, in seconds; it doubles with each further attempt.
    public var baseDelay: Double
    /// The longest computed backoff, in seconds.
    public var maxDelay: Double
    /// The longest `Retry-After` honoured, in seconds; a server asking for more fails the item instead.
    public var maxRetryAfter: Double
    /// The share of each delay that is randomised (0 = none, 1 = "full jitter").
    public var jitter: Double

    public init(
        maxAttempts: Int = 5, baseDelay: Double = 1, maxDelay: Double = 60, maxRetryAfter: Double = 300,
        jitter: Double = 0.5
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.jitter = jitter
    }

    /// No retries at all.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The delay before the next attempt after `attempt` (1-based) failed with `error`, or nil to give up.
    ///
    /// - Parameters:
    ///   - attempt: the number of the attempt that just failed.
    ///   - error: its error; only retryable errors are tried again.
    ///   - random: a value in 0...1 that picks the jitter (pass a fixed value in tests).
    public func delay(afterAttempt attempt: Int, error: HTTPError, random: Double) -> Double? {
        guard error.isRetryable, attempt < maxAttempts else { return nil }
        if let retryAfter = error.retryAfter {
            return retryAfter <= maxRetryAfter ? max(0, retryAfter) : nil
        }
        let exponent = min(max(attempt - 1, 0), 30)
        let backoff = min(maxDelay, baseDelay * Double(1 << exponent))
        let spread = min(max(jitter, 0), 1)
        return backoff * (1 - spread) + backoff * spread * min(max(random, 0), 1)
    }

    /// Parses a `Retry-After` value: delay-seconds or an HTTP-date, relative to `now` (seconds since 1970).
    public static func parseRetryAfter(_ value: String?, now: Double) -> Double? {
        guard let value = value?.trimmed(of: " \t"), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return Double(max(0, seconds)) }
        guard let date = HTTPDate.parse(String(value)) else { return nil }
        return max(0, date - now)
    }
}
