#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Errors thrown while starting the test server.
public struct TestServerError: Error, Sendable, CustomStringConvertible {
    /// What failed (e.g. `bind`).
    public var operation: String
    /// The `errno` value at the time of failure.
    public var code: Int32

    /// Creates an error for `operation` with the current (or given) errno.
    public init(operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    /// Human-readable description, e.g. `bind failed: Address already in use (errno 98)`.
    public var description: String {
        "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
    }
}
