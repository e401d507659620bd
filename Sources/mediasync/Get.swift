import ArgumentParser
import Foundation
import MediaSync

/// `mediasync get`: download URLs into a folder with the transfer engine.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download URLs into a folder: resumable, concurrent, never a partial file in place.",
        discussion: """
            Each URL is saved as OUTPUT-DIR/<last path segment of the URL>. Partial files wait in \
            OUTPUT-DIR/.mediasync-staging and resume on the next run.
            """
    )

    @Argument(help: "URLs to download.")
    var urls: [String] = []

    @Option(
        name: .customLong("input-file"),
        help:
            "A file with one URL per line, optionally followed by a tab and a relative path to save it as (blank lines and # comments skipped)."
    )
    var inputFile: String?

    @Option(name: .customLong("output-dir"), help: "The folder to save into.")
    var outputDir: String

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp("Send this header with every request.", valueName: "Name: value"))
    var headers: [String] = []

    @Flag(
        help: ArgumentHelp(
            "The URL is an HLS playlist (master or media, VOD): save its segments joined as one MPEG-TS file "
                + "(named after the playlist, or by the path after a tab in --input-file)."))
    var hls = false

    @OptionGroup var transfer: TransferFlags

    @Flag(help: "Print only failures.")
    var quiet = false

    func validate() throws {
        if urls.isEmpty && inputFile == nil {
            throw ValidationError("give at least one URL or --input-file")
        }
        for header in headers where Get.parseHeader(header) == nil {
            throw ValidationError("--header \(header.prefix(40)) is not of the form 'Name: value'")
        }
        try transfer.validate()
    }

    /// Splits `Name: value`; nil when there is no name or a line break would smuggle a second header.
    static func parseHeader(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":"), !text.contains(where: \.isNewline) else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !name.contains(" ") else { return nil }
        return (name, text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    func run() async throws {
        var list: [(url: String, path: String?)] = urls.map { ($0, nil) }
        if let inputFile {
            guard let text = try? String(contentsOfFile: inputFile, encoding: .utf8) else {
                throw ValidationError("cannot read --input-file \(inputFile)")
            }
            for line in text.split(whereSeparator: \.isNewline) {
                let fields = line.split(separator: "\t", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard let url = fields.first, !url.isEmpty, !url.hasPrefix("#") else { continue }
                list.append((url, fields.count > 1 ? fields[1] : nil))
            }
        }
        let console = Console(quiet: quiet)
        var progress: (@Sendable (BatchProgress) -> Void)?
        if console.showsProgress { progress = { @Sendable update in console.show(update) } }
        if hls {
            guard list.count == 1, let entry = list.first else { throw ValidationError("--hls takes one playlist") }
            try await reportingErrors {
                let placed = try await URLDownload.hls(
                    entry.url, into: outputDir, name: entry.path, headers: headers.compactMap(Get.parseHeader),
                    configuration: transfer.httpConfiguration, options: transfer.options, progress: progress)
                console.clearLine()
                if !quiet { print("Saved \(placed.path) (\(ByteCount.format(placed.size))).") }
            }
            return
        }
        let result: BatchResult
        do {
            result = try await URLDownload.run(
                list.map { URLDownload.Entry(url: $0.url, path: $0.path) }, into: outputDir,
                headers: headers.compactMap(Get.parseHeader), configuration: transfer.httpConfiguration,
                options: transfer.options, progress: progress)
        } catch let error as URLDownload.ListError {
            throw ValidationError(error.description)
        }
        console.finish(result)
        if !result.allSucceeded {
            throw result.stoppedByAFatalFailure || result.succeeded.isEmpty ? ExitCodes.fatal : ExitCodes.partialFailure
        }
    }

}
