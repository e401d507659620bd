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
/// (`.mediasync/staging/transcode-<version>/`, see ``HLSFetch``), so a killed or failed run resumes at the first
/// missing segment. Joined in order into a staging file, flushed, the file is moved to its final path and recorded
/// by the executor. The server's encoding is stopped whatever happens.
///
/// Asking the server what it would send (``offer(server:file:quality:versionId:)``) backs off while it answers
/// busy (503, or 429 from a proxy in front of it), twice at most.
struct TranscodeDownloader: Sendable {
    let server: any MediaServer
    let client: HTTPClient
    let options: TransferOptions
    let root: MirrorRoot
    let executor: MirrorExecutor
    let now: @Sendable () -> Date

    /// What the server would send of a version under the quality, asked up to three times while it answers busy.
    static func offer(server: any MediaServer, file: RemoteFile, quality: Quality, versionId: String) async throws
        -> TranscodeOffer
    {
        var delay: UInt64 = 500_000_000
        for attempt in 1...3 {
            do {
                return try await server.playbackOffer(
                    itemId: file.itemId, mediaSourceId: versionId, profile: quality.deviceProfile,
                    maxBitrate: quality.maxBitrate)
            } catch let error as JellyfinError where (error.isRetryable || error.status == 429) && attempt < 3 {
                try await Task.sleep(nanoseconds: delay)
                delay *= 2
            }
        }
        throw SyncError.invalidInput("the server stayed busy")
    }

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
        let server = self.server
        let urls = try await HLSPlaylist.segmentURLs(
            at: masterURL, requireMaster: true,
            read: { String(decoding: try await server.read(url: $0, what: $1), as: UTF8.self) },
            check: { variant in
                if let refusal = HLSPlaylist.refusal(variant, quality: quality) {
                    throw SyncError.invalidInput(
                        "the server cannot honour \(quality.description) (\(refusal)); nothing was placed")
                }
            })

        // The segments' folder, kept across runs while it belongs to the same transcode.
        let name = "transcode-" + (SafeName.id(file.versionId ?? "") ?? SafeName.id(file.itemId) ?? "item")
        let folder = root.stagingDirectory + "/" + name
        var headers = HTTPHeaders()
        let auth = server.authorizationHeader
        headers.add(name: auth.name, value: auth.value)
        let fetch = HLSFetch(client: client, options: options, headers: headers)
        let joinedFile = try await fetch.download(
            urls, into: folder, manifest: "\(file.signature)\n\(urls.count)\n", progress: progress)
        // In MP4 or Matroska when asked for: remuxed by ffmpeg (`-c copy`) beside it in staging.
        var bytes = joinedFile.size
        var relative = ".mediasync/staging/\(name)/joined.ts"
        if quality.container != "ts" {
            guard let remuxer = Remuxer.locate() else {
                throw SyncError.configuration(
                    "ffmpeg is not installed (Debian: `apt install ffmpeg`): the transcode cannot be put into "
                        + "\(quality.container); it is kept in staging for when it is, or select it with --container ts"
                )
            }
            let remuxed = folder + "/remuxed." + quality.container
            try remuxer.remux(joinedFile.path, to: remuxed, container: quality.container)
            var info = stat()
            guard stat(remuxed, &info) == 0 else { throw SyncError.fileSystem("cannot read \(remuxed)", errno) }
            bytes = Int64(info.st_size)
            relative = ".mediasync/staging/\(name)/remuxed.\(quality.container)"
        }
        // The file is moved to its final path and recorded through the executor.
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
        // A failed move keeps the joined file and its mark: the next run places it without fetching again.
        try executor.move(relative, as: entry)
        try? FileManager.default.removeItem(atPath: folder)
        return Placed(path: path, bytes: bytes)
    }
}
