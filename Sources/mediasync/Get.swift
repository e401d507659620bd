import ArgumentParser
import Foundation
import MediaSyncHTTP

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

    @Option(name: .customLong("input-file"), help: "A file with one URL per line (blank lines and # comments skipped).")
    var inputFile: String?

    @Option(name: .customLong("output-dir"), help: "The folder to save into.")
    var outputDir: String

    @OptionGroup var transfer: TransferFlags

    @Flag(help: "Print only failures.")
    var quiet = false

    func validate() throws {
        if urls.isEmpty && inputFile == nil {
            throw ValidationError("give at least one URL or --input-file")
        }
        try transfer.validate()
    }

    func run() async throws {
        var list = urls
        if let inputFile {
            guard let text = try? String(contentsOfFile: inputFile, encoding: .utf8) else {
                throw ValidationError("cannot read --input-file \(inputFile)")
            }
            list += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        let root = URL(fileURLWithPath: outputDir).standardizedFileURL.path
        var seen: [String: String] = [:]
        var requests: [TransferRequest] = []
        for url in list {
            guard let name = Get.fileName(for: url) else {
                throw ValidationError("cannot name a file after \(url): its path has no usable last segment")
            }
            if let earlier = seen[name] {
                throw ValidationError("\(url) and \(earlier) would both be saved as \(name)")
            }
            seen[name] = url
            requests.append(TransferRequest(id: url, url: url, destination: root + "/" + name))
        }
        let engine = TransferEngine(client: HTTPClient(configuration: transfer.httpConfiguration), options: transfer.options)
        let console = Console(quiet: quiet)
        let result = await engine.download(requests) { progress in console.show(progress) }
        console.finish(result)
        if !result.allSucceeded {
            throw result.failed.contains { $0.error?.isFatal == true } || result.succeeded.isEmpty
                ? ExitCodes.fatal : ExitCodes.partialFailure
        }
    }

    /// The last path segment, percent-decoded, as a safe single file name; nil when there is none.
    static func fileName(for url: String) -> String? {
        guard let components = URLComponents(string: url.replacingOccurrences(of: " ", with: "%20")),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        let segment = components.path.split(separator: "/").last.map(String.init) ?? ""
        let decoded = segment.removingPercentEncoding ?? segment
        let cleaned = decoded.map { character -> Character in
            character == "/" || character == "\0" || character.isNewline ? "_" : character
        }
        let name = String(cleaned)
        guard !name.isEmpty, name != ".", name != "..", name.utf8.count <= 255 else { return nil }
        return name
    }
}
