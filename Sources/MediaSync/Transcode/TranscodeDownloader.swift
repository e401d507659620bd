import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// Fetches a server transcode as a resumable batch of segments and places the joined file like any other.
///
/// The master playlist is read and checked against the quality (its `CODECS` and `RESOLUTION`: a server that may
/// not transcode for this user copies the original instead), then the media playlist (it must end, and stay on the
/// server). The segments go through the transfer engine into a folder of their own in staging
/// (`.mediasync/staging/transcode-<version>/`, with a manifest of the transcode they belong to), so a killed or
/// failed run resumes at the first missing segment. Each must be MPEG-TS (sync byte 0x47). Joined in order into a
/// staging file, flushed, the file is moved to its final path and recorded by the executor. The server's encoding
/// is stopped whatever happens.
struct TranscodeDownloader: Sendable {
    let server: any MediaServer
    let client: HTTPClient
    let options: TransferOptions
    let root: MirrorRoot
    let executor: MirrorExecutor
    let now: @Sendable () -> Date

    /// Segments fetched at once: ahead of the encoder by a few segments at most (Jellyfin restarts an encoding
    /// asked for a segment far ahead of it, `DynamicHlsController`).
    static let segmentsInFlight = 4

    struct Placed {
        var path: String
        var bytes: Int64
    }

    func fetch(
        _ file: RemoteFile, quality: Quality, offer: TranscodeOffer, previous: IndexEntry?,
        progress: (@Sendable (BatchProgress) -> Void)?
    ) async throws -> Placed {
        do {
            let placed = try await transcode(
                file, quality: quality, offer: offer, previous: previous, progress: progress)
            await stop(offer)
            return placed
        } catch {
            await stop(offer)
            throw error
        }
    }

    private func stop(_ offer: TranscodeOffer) async {
        guard let session = offer.playSessionId else { return }
        try? await server.stopEncoding(playSessionId: session)
    }

    private func transcode(
        _ file: RemoteFile, quality: Quality, offer: TranscodeOffer, previous: IndexEntry?,
        progress: (@Sendable (BatchProgress) -> Void)?
    ) async throws -> Placed {
        guard let masterURL = offer.transcodingURL else {
            throw SyncError.invalidInput("the server offered no transcode")
        }
        let master = String(decoding: try await server.read(url: masterURL, what: "master playlist"), as: UTF8.self)
        let variant = try HLSPlaylist.variant(ofMaster: master)
        if let refusal = HLSPlaylist.refusal(variant, quality: quality) {
            throw SyncError.invalidInput(
                "the server cannot honour \(quality.description) (\(refusal)); nothing was placed")
        }
        guard let mediaURL = HLSPlaylist.resolve(variant.uri, against: masterURL) else {
            throw SyncError.invalidInput("the master playlist points to another host (\(variant.uri.prefix(80)))")
        }
        let media = String(decoding: try await server.read(url: mediaURL, what: "media playlist"), as: UTF8.self)
        let segments = try HLSPlaylist.segments(ofMedia: media)
        let urls = try segments.map { segment -> String in
            guard let url = HLSPlaylist.resolve(segment.uri, against: mediaURL) else {
                throw SyncError.invalidInput("the media playlist points to another host (\(segment.uri.prefix(80)))")
            }
            return url
        }

        // The segments' folder, kept across runs while it belongs to the same transcode.
        let name = "transcode-" + (SafeName.id(file.versionId ?? "") ?? SafeName.id(file.itemId) ?? "item")
        let folder = root.stagingDirectory + "/" + name
        let manifest = "\(file.signature)\n\(segments.count)\n"
        let manifestPath = folder + "/manifest"
        if (try? String(contentsOfFile: manifestPath, encoding: .utf8)) != manifest {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: manifestPath))
        }
        func segmentPath(_ index: Int) -> String {
            let number = String(index)
            return folder + "/" + String(repeating: "0", count: max(0, 6 - number.count)) + number + ".ts"
        }
        var headers = HTTPHeaders()
        let auth = server.authorizationHeader
        headers.add(name: auth.name, value: auth.value)
        let missing = urls.indices.filter { access(segmentPath($0), F_OK) != 0 }
        let requests = missing.map {
            TransferRequest(id: String($0), url: urls[$0], destination: segmentPath($0), headers: headers)
        }
        var segmentOptions = options
        segmentOptions.concurrency = min(max(1, options.concurrency), TranscodeDownloader.segmentsInFlight)
        segmentOptions.stagingDirectory = folder
        segmentOptions.durable = false
        if !requests.isEmpty {
            let result = await TransferEngine(client: client, options: segmentOptions).download(
                requests, progress: progress)
            if let failed = result.failed.first, let error = failed.error {
                if error.isFatal { throw SyncError.diskFull("\(error.description) (segment \(failed.request.id))") }
                throw SyncError.invalidInput(
                    "segment \((Int(failed.request.id) ?? 0) + 1) of \(segments.count) failed (\(error.description)); "
                        + "\(segments.count - result.failed.count) are kept for the next sync")
            }
        }
        // Every segment must be MPEG-TS: an HTML page or an error in its place is refused (and fetched again).
        for index in urls.indices {
            let first = try firstBytes(segmentPath(index))
            guard first.first == 0x47 else {
                unlink(segmentPath(index))
                let start = String(decoding: first.prefix(16), as: UTF8.self).debugDescription
                throw SyncError.invalidInput(
                    "segment \(index + 1) of \(segments.count) is not MPEG-TS (it starts with \(start)); nothing placed"
                )
            }
        }
        // Joined in order into one staging file, then placed and recorded through the executor.
        let joined = root.stagingDirectory + "/\(name).joining"
        let bytes = try join(urls.indices.map(segmentPath), into: joined)
        let relative = ".mediasync/staging/\(name).joining"
        let stem = file.path.lastIndex(of: ".").map { String(file.path[..<$0]) } ?? file.path
        let path = stem + "." + quality.container
        if let previous, previous.file.path != path {
            try executor.removeReplaced(previous.file.path)
        }
        let entry = IndexEntry(
            file: LocalFile(
                key: file.key, path: path, kind: .media, size: bytes, signature: file.signature, itemId: file.itemId),
            versionId: file.versionId, mediaSourceId: file.versionId, container: quality.container,
            downloadedAt: executor.timestampNow(now()), taskId: executor.newTaskId(),
            validator: Quality.transcodeValidatorPrefix + quality.signature)
        do {
            try executor.move(relative, as: entry)
        } catch {
            unlink(joined)
            throw error
        }
        try? FileManager.default.removeItem(atPath: folder)
        return Placed(path: path, bytes: bytes)
    }

    private func firstBytes(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SyncError.fileSystem("cannot read \(path)", errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return Array(buffer.prefix(max(0, count)))
    }

    /// Appends the files in order into `target` (flushed when durable); returns its size.
    private func join(_ parts: [String], into target: String) throws -> Int64 {
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
