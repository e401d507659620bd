import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One response as the server wrote it: what was asked, what was answered, how many body bytes actually
/// went out (a client killed mid-body gets fewer than planned), and when, on the monotonic clock.
///
/// The torture scripts count bytes fetched again from these records.
public struct ServedResponse: Sendable, Equatable {
    /// Order of completion since start (1, 2, …).
    public var sequence: Int
    public var method: String
    /// The percent-decoded path without the query string.
    public var path: String
    /// The request's `Range` header, if any.
    public var range: String?
    public var status: Int
    /// Body bytes the response was to carry (the range's length for a 206).
    public var bodyBytesPlanned: Int
    /// Body bytes `send` accepted before the response ended (all of them, or fewer when the client went away
    /// or a fault cut the body).
    public var bodyBytesSent: Int
    /// `CLOCK_MONOTONIC` nanoseconds when the request head had been read and when the response ended.
    public var startNanoseconds: UInt64
    public var endNanoseconds: UInt64

    /// One JSON object on one line (the executable's `--request-log` format).
    public var jsonLine: String {
        func quoted(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        return "{\"seq\":\(sequence),\"method\":\(quoted(method)),\"path\":\(quoted(path)),"
            + "\"range\":\(range.map(quoted) ?? "null"),\"status\":\(status),\"planned\":\(bodyBytesPlanned),"
            + "\"sent\":\(bodyBytesSent),\"start_ns\":\(startNanoseconds),\"end_ns\":\(endNanoseconds)}"
    }

    /// `CLOCK_MONOTONIC` now, in nanoseconds (Python's `time.monotonic_ns()` reads the same clock).
    public static func monotonicNow() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
