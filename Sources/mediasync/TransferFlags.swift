import ArgumentParser
import MediaSync

/// Options shared by every command that downloads.
struct TransferFlags: ParsableArguments {
    @Option(help: "Transfers at the same time.")
    var concurrency = 4

    @Option(name: .customLong("per-host"), help: "Transfers at the same time to one host (default: --concurrency).")
    var perHost: Int?

    @Flag(name: .customLong("no-durable"), help: "Skip fsync before each rename (faster; for throwaway mirrors).")
    var noDurable = false

    @Option(name: .customLong("limit-rate"), help: "Cap the total download rate, e.g. 500K, 20M (bytes per second).")
    var limitRate: String?

    @Option(help: "Attempts per file, the first included.")
    var attempts = 5

    @Option(name: .customLong("ca-file"), help: "Trust the CA certificates in this PEM file.")
    var caFile: String?

    @Flag(help: "Do not verify TLS certificates (dangerous).")
    var insecure = false

    @Option(
        name: .customLong("stall-timeout"),
        help: "Seconds without a byte (below 1 byte/s) after which a transfer counts as stalled and is retried.")
    var stallTimeout = 30

    func validate() throws {
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1") }
        guard attempts >= 1 else { throw ValidationError("--attempts must be at least 1") }
        guard stallTimeout >= 1 else { throw ValidationError("--stall-timeout must be at least 1 second") }
        if let limitRate, TransferFlags.parseRate(limitRate) == nil {
            throw ValidationError("--limit-rate \(limitRate) is not a rate such as 500K or 20M")
        }
    }

    var httpConfiguration: HTTPClientConfiguration {
        HTTPClientConfiguration(lowSpeedTime: stallTimeout, caFile: caFile, insecure: insecure)
    }

    var options: TransferOptions {
        TransferOptions(
            concurrency: concurrency, perHostLimit: perHost, durable: !noDurable,
            retryPolicy: RetryPolicy(maxAttempts: attempts), bandwidthLimit: limitRate.flatMap(TransferFlags.parseRate))
    }

    /// Parses `123`, `500K`, `20M`, `1G` (powers of 1024) into bytes per second.
    static func parseRate(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = text.uppercased().last else { return nil }
        if let unit = units[last] {
            guard let value = Double(text.dropLast()), value > 0 else { return nil }
            return Int(value * Double(unit))
        }
        guard let value = Int(text), value > 0 else { return nil }
        return value
    }
}
