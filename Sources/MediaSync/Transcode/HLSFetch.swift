import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The segments of an HLS VOD stream fetched into a folder of their own and joined in order: shared by a server
/// transcode (``TranscodeDownloader``) and `mediasync get --hls` (``HLSDownload``).
///
/// The folder keeps a manifest of what the segments belong to; a folder of another stream is emptied first. Segments
/// already there are not fetched again, so a killed or failed run resumes at the first missing one. Each segment must
/// be MPEG-TS (sync byte 0x47): an HTML page or an error in its place is refused and removed.
struct HLSFetch: Sendable {
    let client: HTTPClient
    let options: TransferOptions
    let headers: HTTPHeaders

    /// Segments fetched at once: ahead of an encoder by a few segments at most (Jellyfin restarts an encoding asked
    /// for a segment far ahead of it, `DynamicHlsController`).
    static let segmentsInFlight = 4

    /// Fetches the missing segments; returns the paths of all of them, in order.
    /// - Throws: ``SyncError``: a segment that failed (the others are kept), one that is not MPEG-TS, a full disk.
    func download(
        _ urls: [String], into folder: String, manifest: String, progress: (@Sendable (BatchProgress) -> Void)?
    ) async throws -> [String] {
        let manifestPath = folder + "/manifest"
        if (try? String(contentsOfFile: manifestPath, encoding: .utf8)) != manifest {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: manifestPath))
        }
        let paths = urls.indices.map { index -> String in
            let number = String(index)
            return folder + "/" + String(repeating: "0", count: max(0, 6 - number.count)) + number + ".ts"
        }
        let requests = urls.indices.filter { access(paths[$0], F_OK) != 0 }.map {
            TransferRequest(id: String($0), url: urls[$0], destination: paths[$0], headers: headers)
        }
        var segmentOptions = options
        segmentOptions.concurrency = min(max(1, options.concurrency), HLSFetch.segmentsInFlight)
        segmentOptions.stagingDirectory = folder
        segmentOptions.durable = false
        if !requests.isEmpty {
            let result = await TransferEngine(client: client, options: segmentOptions).download(
                requests, progress: progress)
            if let failed = result.failed.first, let error = failed.error {
                if error.isFatal { throw SyncError.diskFull("\(error.description) (segment \(failed.request.id))") }
                throw SyncError.invalidInput(
                    "segment \((Int(failed.request.id) ?? 0) + 1) of \(urls.count) failed (\(error.description)); "
                        + "\(urls.count - result.failed.count) are kept for the next run")
            }
        }
        for (index, path) in paths.enumerated() {
            let first = try firstBytes(path)
            guard first.first == 0x47 else {
                unlink(path)
                let start = String(decoding: first.prefix(16), as: UTF8.self).debugDescription
                throw SyncError.invalidInput(
                    "segment \(index + 1) of \(urls.count) is not MPEG-TS (it starts with \(start)); nothing placed")
            }
        }
        return paths
    }

    private func firstBytes(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SyncError.fileSystem("cannot read \(path)", errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return Array(buffer.prefix(max(0, count)))
    }

    /// Appends the files in order into `target` (flushed when durable); returns its size. Nothing is left at
    /// `target` when it fails.
    func join(_ parts: [String], into target: String) throws -> Int64 {
        let out = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw SyncError.fileSystem("cannot create \(target)", errno) }
        var total: Int64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        do {
            defer { close(out) }
            for part in parts {
                let input = open(part, O_RDONLY | O_CLOEXEC)
                guard input >= 0 else { throw SyncError.fileSystem("cannot read \(part)", errno) }
                defer { close(input) }
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    guard count >= 0 else { throw SyncError.fileSystem("cannot read \(part)", errno) }
                    if count == 0 { break }
                    var offset = 0
                    while offset < count {
                        let written = buffer.withUnsafeBytes {
                            write(out, $0.baseAddress?.advanced(by: offset), count - offset)
                        }
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else { throw SyncError.fileSystem("cannot write \(target)", errno) }
                        offset += written
                    }
                    total += Int64(count)
                }
            }
            if options.durable, fsync(out) != 0 { throw SyncError.fileSystem("cannot flush \(target)", errno) }
        } catch {
            unlink(target)
            throw error
        }
        return total
    }
}

/// `mediasync get --hls`: an HLS VOD stream (a master or a media playlist) saved as one file.
public enum HLSDownload {
    /// Fetches the playlist's segments (resuming those already in `staging`) and places the joined file at
    /// `destination` atomically. Returns its size.
    /// - Throws: ``SyncError`` (a bad playlist, a segment that failed or is not MPEG-TS, another host), HTTP errors.
    public static func run(
        url: String, destination: String, staging: String, client: HTTPClient, options: TransferOptions,
        headers: HTTPHeaders = HTTPHeaders(), progress: (@Sendable (BatchProgress) -> Void)? = nil
    ) async throws -> Int64 {
        func text(_ address: String) async throws -> String {
            String(decoding: try await client.send(HTTPRequest(url: address, headers: headers)).body, as: UTF8.self)
        }
        var mediaURL = url
        var playlist = try await text(url)
        if playlist.contains("#EXT-X-STREAM-INF") {
            let variant = try HLSPlaylist.variant(ofMaster: playlist)
            guard let resolved = HLSPlaylist.resolve(variant.uri, against: url) else {
                throw SyncError.invalidInput("the master playlist points to another host")
            }
            mediaURL = resolved
            playlist = try await text(mediaURL)
        }
        let urls = try HLSPlaylist.segments(ofMedia: playlist).map { segment -> String in
            guard let resolved = HLSPlaylist.resolve(segment.uri, against: mediaURL) else {
                throw SyncError.invalidInput("the media playlist points to another host")
            }
            return resolved
        }
        let fetch = HLSFetch(client: client, options: options, headers: headers)
        let folder = staging + "/hls-" + String(ContentHash.hex(of: Array(url.utf8)))
        let parts = try await fetch.download(
            urls, into: folder, manifest: "\(url)\n\(urls.count)\n", progress: progress)
        let joining = folder + ".joining"
        let size = try fetch.join(parts, into: joining)
        guard rename(joining, destination) == 0 else {
            let number = errno
            unlink(joining)
            throw SyncError.fileSystem("cannot place \(destination)", number)
        }
        try? FileManager.default.removeItem(atPath: folder)
        return size
    }
}
