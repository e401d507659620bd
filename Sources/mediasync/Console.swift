import Foundation
import MediaSync

#if canImport(Glibc)
    import Glibc
#endif

/// Prints progress and results: a live line on a terminal, plain lines otherwise.
final class Console: Sendable {
    private let quiet: Bool
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private let lastLine = Locked<Int>(0)
    /// When a live line was last drawn (uptime nanoseconds): at most ten a second, however many updates come.
    let lastDrawn = Locked<UInt64>(0)

    /// Whether a live line is due now (the last update of a run always is).
    func isDue(final: Bool) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return lastDrawn.withLock { last in
            guard final || now &- last >= 100_000_000 else { return false }
            last = now
            return true
        }
    }

    init(quiet: Bool) {
        self.quiet = quiet
    }

    /// Whether a live progress line is shown (on a terminal, without `--quiet`).
    var showsProgress: Bool { isTerminal && !quiet }

    func show(_ progress: BatchProgress) {
        guard !quiet, isTerminal, !progress.isFinished else { return }
        var line = String(
            format: "%3.0f%%  %d/%d files  %@ of %@  %@/s", progress.fraction * 100,
            progress.succeededItems + progress.failedItems, progress.totalItems, ByteCount.format(progress.bytesDone),
            progress.sizeKnown ? ByteCount.format(progress.bytesExpected) : "?",
            ByteCount.format(Int64(progress.bytesPerSecond)))
        if let eta = progress.estimatedSecondsRemaining { line += String(format: "  ETA %.0fs", eta) }
        lastLine.withLock { width in
            let padding = String(repeating: " ", count: max(0, width - line.count))
            FileHandle.standardError.write(Data(("\r" + line + padding).utf8))
            width = line.count
        }
    }

    /// Clears the live progress line.
    func clearLine() {
        if isTerminal && !quiet { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    func finish(_ result: BatchResult) {
        clearLine()
        for line in result.failureLines {
            Console.error("failed: \(line)")
        }
        guard !quiet else { return }
        Console.error(
            "\(result.succeeded.count) downloaded (\(ByteCount.format(result.bytesSucceeded))), \(result.failed.count) failed"
        )
    }

    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
