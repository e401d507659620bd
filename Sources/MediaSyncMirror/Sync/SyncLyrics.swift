import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

/// Tracks' lyrics: the server answers them parsed (`LyricDto`, `LyricsController` v10.9.11 L67–86), so each is read
/// whole, written as LRC, and placed through the executor like a `metadata.json`.
extension MirrorSync {
    /// Lyrics read at a time.
    static let lyricsInFlight = 4

    /// The lyrics among `files`, and the rest.
    static func splitLyrics(_ files: [RemoteFile]) -> (lyrics: [RemoteFile], others: [RemoteFile]) {
        var lyrics: [RemoteFile] = []
        var others: [RemoteFile] = []
        others.reserveCapacity(files.count)
        // Only a key that begins so is taken apart: a first sync passes 12,000 keys through here.
        let prefix = "lyrics:".utf8
        for file in files {
            if file.key.rawValue.utf8.starts(with: prefix), case .lyrics? = file.key.parts {
                lyrics.append(file)
            } else {
                others.append(file)
            }
        }
        return (lyrics, others)
    }

    /// Reads, converts and places these lyrics files; a failure is reported and fails nothing else (lyrics are not
    /// essential), a full disk stops the rest and is thrown.
    func fetchLyrics(
        _ files: [RemoteFile], entries: [FileKey: IndexEntry], events: (@Sendable (SyncEvent) -> Void)?,
        report: inout SyncReport
    ) async throws {
        guard let server, !files.isEmpty else { return }
        // `lyricsInFlight` asked at a time, the next as soon as one is answered; each answer placed as it comes.
        try await Parallel.inFlight(files.count, width: MirrorSync.lyricsInFlight) { position in
            guard case .download(let url, _) = files[position].content else {
                return Result<[UInt8], any Error>.failure(SyncError.invalidInput("lyrics without an address"))
            }
            do {
                return .success(try await server.read(url: url, what: "lyrics"))
            } catch {
                return .failure(error)
            }
        } each: { position, answer in
            try place(answer, as: files[position], entries: entries, events: events, report: &report)
        }
    }

    /// Converts and places one answer; a failure is reported (lyrics are not essential), a full disk is thrown.
    private func place(
        _ answer: Result<[UInt8], any Error>, as file: RemoteFile, entries: [FileKey: IndexEntry],
        events: (@Sendable (SyncEvent) -> Void)?, report: inout SyncReport
    ) throws {
        do {
            let body: [UInt8]
            switch answer {
            case .success(let bytes): body = bytes
            case .failure(let error as JellyfinError) where error.status == 404:
                throw SyncError.notFound("the server has no lyrics for this track now (404)")
            case .failure(let error): throw error
            }
            guard let text = LyricsText.lrc(fromLyricDto: body) else {
                throw SyncError.invalidInput("the server's lyrics for this track hold no line")
            }
            let bytes = Array(text.utf8)
            var written = entry(
                for: file, path: file.path, size: Int64(bytes.count), container: "lrc", previous: entries[file.key])
            written.contentHash = ContentHash.hex(of: bytes)
            try executor.write(bytes, as: written)
            report.downloaded.append(file.path)
            report.bytesDownloaded += Int64(bytes.count)
            events?(SyncEvent(action: "downloaded", path: file.path, bytes: Int64(bytes.count)))
        } catch let error as SyncError where error.isDiskFull {
            throw error
        } catch {
            report.failed.append(SyncReport.Failure(path: file.path, message: "\(error)", essential: false))
            events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: false))
        }
    }
}
