import Foundation
import MediaSyncHTTP

/// `mediasync get`: URLs saved into a folder by the transfer engine (resumable, concurrent, never a partial file at
/// a final name). Each URL is saved as `<folder>/<path>`, or its last path segment when no path is given.
public enum URLDownload {
    /// One URL to fetch, and the relative path to save it as (nil: the URL's last path segment).
    public struct Entry: Sendable, Equatable {
        public var url: String
        public var path: String?
        public init(url: String, path: String? = nil) {
            self.url = url
            self.path = path
        }
    }

    /// A list that cannot be fetched as given: nothing is fetched.
    public struct ListError: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// Fetches every entry into `folder`, each request with `headers`.
    /// - Throws: ``ListError`` when an entry has no safe relative path or two entries would be saved as one file.
    public static func run(
        _ entries: [Entry], into folder: String, headers: [(name: String, value: String)],
        configuration: HTTPClientConfiguration, options: TransferOptions,
        progress: (@Sendable (BatchProgress) -> Void)? = nil
    ) async throws -> BatchResult {
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path
        var extra = HTTPHeaders()
        for (name, value) in headers { extra.add(name: name, value: value) }
        var seen: [String: String] = [:]
        var requests: [TransferRequest] = []
        for entry in entries {
            guard let name = entry.path.map(relativePath) ?? fileName(for: entry.url) else {
                throw ListError(
                    description:
                        "cannot save \(entry.url) as \(entry.path ?? "its last path segment"): not a safe relative path"
                )
            }
            if let earlier = seen[name] {
                throw ListError(description: "\(entry.url) and \(earlier) would both be saved as \(name)")
            }
            seen[name] = entry.url
            requests.append(
                TransferRequest(id: entry.url, url: entry.url, destination: root + "/" + name, headers: extra))
        }
        let engine = TransferEngine(client: HTTPClient(configuration: configuration), options: options)
        return await engine.download(requests, progress: progress)
    }

    /// Saves an HLS VOD stream (a master or media playlist at `url`) as one MPEG-TS file in `folder`: named `name`
    /// (a safe relative path) or after the playlist (`master.m3u8` → `master.ts`). Segments wait in
    /// `folder/.mediasync-staging` and resume on the next run. Returns the path and size of the file placed.
    /// - Throws: ``ListError`` for an unusable name; ``SyncError`` and HTTP errors for the stream.
    public static func hls(
        _ url: String, into folder: String, name: String?, headers: [(name: String, value: String)],
        configuration: HTTPClientConfiguration, options: TransferOptions,
        progress: (@Sendable (BatchProgress) -> Void)? = nil
    ) async throws -> (path: String, size: Int64) {
        let root = URL(fileURLWithPath: folder).standardizedFileURL.path
        let base = fileName(for: url).map { $0.hasSuffix(".m3u8") ? String($0.dropLast(5)) + ".ts" : $0 + ".ts" }
        guard let file = name.map(relativePath) ?? base else {
            throw ListError(
                description: "cannot save \(url) as \(name ?? "its last path segment"): not a safe relative path")
        }
        var extra = HTTPHeaders()
        for (name, value) in headers { extra.add(name: name, value: value) }
        let destination = root + "/" + file
        try FileManager.default.createDirectory(
            atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let staging = root + "/.mediasync-staging"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        let size = try await HLSDownload.run(
            url: url, destination: destination, staging: staging, client: HTTPClient(configuration: configuration),
            options: options, headers: extra, progress: progress)
        return (destination, size)
    }

    /// A relative path inside the output folder; nil for absolute paths, `..`, `.`, empty or NUL-bearing parts.
    public static func relativePath(_ text: String) -> String? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard !text.hasPrefix("/"), !parts.isEmpty,
            parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\0") && $0.utf8.count <= 255 })
        else { return nil }
        return text
    }

    /// The last path segment, percent-decoded, as a safe single file name; nil when there is none.
    public static func fileName(for url: String) -> String? {
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

extension BatchResult {
    /// The bytes of the transfers that succeeded.
    public var bytesSucceeded: Int64 {
        succeeded.reduce(Int64(0)) { total, outcome in
            if case .success(let success) = outcome.result { return total + success.size }
            return total
        }
    }

    /// One line per failed transfer.
    public var failureLines: [String] {
        failed.map { $0.error?.description ?? $0.request.id }
    }

    /// Whether a failure stopped the batch (a full disk), so nothing after it was tried.
    public var stoppedByAFatalFailure: Bool {
        failed.contains { $0.error?.isFatal == true }
    }
}
