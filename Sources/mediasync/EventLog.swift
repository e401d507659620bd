import Foundation
import Logging
import MediaSync

#if canImport(Glibc)
    import Glibc
#endif

/// How log lines look: `text` (a timestamp, the level and the message) or `json` (one object per line).
enum LogFormat: String, CaseIterable {
    case text, json
}

/// A swift-log handler writing one line per message to standard error, as text or JSON, for people,
/// cron mail and log collectors.
struct LineLogHandler: LogHandler {
    let format: LogFormat
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level = event.level
        let message = event.message
        let extra = event.metadata
        let time = LogTime.now()
        var fields = metadata
        extra?.forEach { fields[$0.key] = $0.value }
        let text: String
        switch format {
        case .text:
            let details = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            text = "\(time) \(level) \(message)\(details.isEmpty ? "" : " " + details)"
        case .json:
            var object: [String: String] = ["time": time, "level": "\(level)", "message": "\(message)"]
            fields.forEach { object[$0.key] = "\($0.value)" }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            text = String(decoding: data, as: UTF8.self)
        }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// The time a log line carries (ISO 8601, UTC, whole seconds), made once a second: a sync logs a line per file, and
/// making an `ISO8601DateFormatter` loads ICU's calendar and patterns each time (it was a quarter of a first sync's
/// CPU, on the thread that drives the transfers).
final class LogTime: @unchecked Sendable {
    private static let shared = LogTime()
    // Guarded by `lock`.
    private let lock = NSLock()
    private var second = Int.min
    private var text = ""

    static func now() -> String { shared.text(for: Date()) }

    private func text(for date: Date) -> String {
        let second = Int(date.timeIntervalSince1970.rounded(.down))
        lock.lock()
        defer { lock.unlock() }
        if second != self.second {
            self.second = second
            text = ISO8601DateFormatter().string(from: date)
        }
        return text
    }
}

/// Turns a sync's events into lines: on a terminal a line per finished item above the progress line;
/// elsewhere timestamped log lines (`--log-format json` for collectors); with `--quiet` only failures.
final class EventLog: Sendable {
    private let logger: Logger
    private let console: Console
    private let quiet: Bool

    init(format: LogFormat, quiet: Bool, console: Console) {
        var logger = Logger(label: "mediasync") { _ in LineLogHandler(format: format) }
        logger.logLevel = quiet ? .error : .info
        self.logger = logger
        self.console = console
        self.quiet = quiet
    }

    func record(_ event: SyncEvent) {
        if event.action == "failed" {
            console.clearLine()
            let level: Logger.Level = event.essential ? .error : .warning
            // Optional files (images, subtitles) are reported, but --quiet keeps only essential failures.
            if quiet && !event.essential { return }
            logger.log(level: level, "failed \(event.path)", metadata: ["error": .string(event.message ?? "")])
            return
        }
        guard !quiet else { return }
        console.clearLine()
        var metadata: Logger.Metadata = [:]
        if let bytes = event.bytes { metadata["bytes"] = .stringConvertible(bytes) }
        if let message = event.message { metadata["detail"] = .string(message) }
        logger.info("\(event.action) \(event.path)", metadata: metadata)
    }
}
