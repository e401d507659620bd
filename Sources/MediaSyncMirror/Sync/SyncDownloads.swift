import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// A sync's downloads: quality-capped versions asked about, then every file fetched in one batch by the transfer
/// engine, named and recorded by the executor as it completes.
extension MirrorSync {
    /// Fetches the plan's downloads: first asks the server what it would send of each quality-capped version (the
    /// original when it already fits), then fetches the files in one batch, then the transcodes, `transcodes` at a
    /// time.
    func download(
        _ plan: SyncPlan, placer: FilePlacer, entries: [FileKey: IndexEntry], qualities: [String: Quality],
        transcodes: Int, progress: (@Sendable (BatchProgress) -> Void)?, events: (@Sendable (SyncEvent) -> Void)?,
        report: inout SyncReport
    ) async throws {
        var files = plan.downloads
        var jobs: [(file: RemoteFile, quality: Quality, offer: TranscodeOffer)] = []
        if let server, !qualities.isEmpty {
            var mayTranscode: Bool??
            var kept: [RemoteFile] = []
            for file in files {
                guard file.kind == .media, Scope.of(key: file.key) == .media, let quality = qualities[file.itemId],
                    let versionId = file.versionId
                else {
                    kept.append(file)
                    continue
                }
                do {
                    let offer = try await TranscodeDownloader.offer(
                        server: server, file: file, quality: quality, versionId: versionId)
                    if offer.directPlay {
                        kept.append(file)
                        continue
                    }
                    if mayTranscode == nil { mayTranscode = .some(await server.userMayTranscode()) }
                    // The trap: without the permission 10.10/10.11 still offer a transcode whose stream copies the
                    // original video. Said once per item, nothing fetched.
                    if mayTranscode == .some(false) {
                        throw SyncError.invalidInput(
                            "this user may not have video transcoded (the server's "
                                + "Policy.EnableVideoPlaybackTranscoding is off): the server would send the original, "
                                + "not \(quality.description); nothing was placed")
                    }
                    jobs.append((file, quality, offer))
                } catch let error as SyncError where error.isDiskFull {
                    throw error
                } catch {
                    report.failed.append(SyncReport.Failure(path: file.path, message: "\(error)", essential: true))
                    events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: true))
                }
            }
            files = kept
        }
        let (lyrics, others) = MirrorSync.splitLyrics(files)
        // Tracks the server transcodes go `transcodes` at a time (each is an encoder running on the server), after
        // the files it only has to read.
        let audio = others.filter { $0.kind == .media && MirrorFiles.isAudioTranscode(signature: $0.signature) }
        let audioKeys = Set(audio.map(\.key))
        let plain = audio.isEmpty ? others : others.filter { !audioKeys.contains($0.key) }
        try await downloadFiles(
            plain, placer: placer, entries: entries, progress: progress, events: events, report: &report)
        var next = 0
        while next < audio.count {
            let batch = Array(audio[next..<min(audio.count, next + max(1, transcodes))])
            next += batch.count
            try await downloadFiles(
                batch, placer: placer, entries: entries, progress: progress, events: events, report: &report)
        }
        try await fetchLyrics(lyrics, entries: entries, events: events, report: &report)
        guard let server, !jobs.isEmpty else { return }
        let downloader = TranscodeDownloader(
            server: server, client: client, options: transferOptions, root: root, executor: executor, now: now)
        var start = 0
        while start < jobs.count {
            let batch = Array(jobs[start..<min(jobs.count, start + max(1, transcodes))])
            start += batch.count
            let outcomes = await withTaskGroup(of: (Int, Result<TranscodeDownloader.Placed, any Error>).self) { group in
                for (position, job) in batch.enumerated() {
                    group.addTask {
                        do {
                            return (
                                position,
                                .success(
                                    try await downloader.fetch(
                                        job.file, quality: job.quality, offer: job.offer,
                                        previous: entries[job.file.key], progress: progress))
                            )
                        } catch {
                            return (position, .failure(error))
                        }
                    }
                }
                var results: [(Int, Result<TranscodeDownloader.Placed, any Error>)] = []
                for await result in group { results.append(result) }
                return results.sorted { $0.0 < $1.0 }
            }
            for (position, outcome) in outcomes {
                let file = batch[position].file
                switch outcome {
                case .success(let placed):
                    report.downloaded.append(placed.path)
                    report.bytesDownloaded += placed.bytes
                    events?(SyncEvent(action: "downloaded", path: placed.path, bytes: placed.bytes))
                case .failure(let error as SyncError) where error.isDiskFull:
                    throw error
                case .failure(let error):
                    report.failed.append(SyncReport.Failure(path: file.path, message: "\(error)", essential: true))
                    events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: true))
                }
            }
        }
    }

    func downloadFiles(
        _ files: [RemoteFile], placer: FilePlacer, entries: [FileKey: IndexEntry],
        progress: (@Sendable (BatchProgress) -> Void)?,
        events: (@Sendable (SyncEvent) -> Void)?, report: inout SyncReport
    ) async throws {
        guard !files.isEmpty else { return }
        // The Jellyfin token goes with Jellyfin downloads only, never to a podcast's hosts.
        var serverHeaders = HTTPHeaders()
        if let auth = server?.authorizationHeader {
            serverHeaders.add(name: auth.name, value: auth.value)
        }
        var requests: [TransferRequest] = []
        var planned: [FileKey: RemoteFile] = [:]
        requests.reserveCapacity(files.count)
        planned.reserveCapacity(files.count)
        // Each folder is made once, before the batch, by the executor (a first sync makes thousands).
        let madeFolders = executor.makeFolders(for: files.map(\.path))
        for file in files {
            guard case .download(let url, let size) = file.content, let destination = root.absolute(file.path),
                placer.staysInside(file.path)
            else {
                report.failed.append(
                    SyncReport.Failure(
                        path: file.path, message: SyncError.unsafePath(file.path).description, essential: file.essential
                    ))
                continue
            }
            planned[file.key] = file
            let priority = file.kind == .media ? 2 : (file.kind == .subtitle ? 1 : 0)
            requests.append(
                TransferRequest(
                    id: file.key.rawValue, url: url, destination: destination,
                    headers: Scope.of(key: file.key) == .media ? serverHeaders : HTTPHeaders(), expectedSize: size,
                    priority: priority))
        }
        let engine = TransferEngine(client: client, options: transferOptions)
        // The engine hands each complete, verified file back; the executor names it (with the extension its
        // Content-Type calls for), then it is recorded in the index and reported: a run killed later in the batch
        // does not fetch it again.
        let plannedFiles = planned
        let executor = self.executor
        let placing: DownloadPlacing = { completed in
            guard let file = plannedFiles[FileKey(rawValue: completed.request.id)] else {
                throw SyncError.unsafePath(completed.request.destination)
            }
            // A transcode has no announced length to check: an empty one (the server's encoder failed after the
            // answer began) is never placed, and the next sync asks again.
            if completed.size == 0, file.kind == .media, MirrorFiles.isAudioTranscode(signature: file.signature) {
                throw SyncError.invalidInput("the server's transcode came back empty; nothing was placed")
            }
            return try executor.placeDownload(
                completed, at: MirrorSync.finalName(of: file, contentType: completed.contentType).path)
        }
        let placements = Locked<[FileKey: Result<String, any Error>]>([:])
        let onOutcome: @Sendable (TransferOutcome) -> Void = { outcome in
            guard let file = plannedFiles[FileKey(rawValue: outcome.request.id)] else { return }
            switch outcome.result {
            case .success(let success):
                let placed = Result { try self.record(file, success: success, previous: entries[file.key]) }
                placements.withLock { $0[file.key] = placed }
                switch placed {
                case .success(let path): events?(SyncEvent(action: "downloaded", path: path, bytes: success.size))
                case .failure(let error):
                    events?(
                        SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: file.essential))
                }
            case .failure(let error):
                // A full disk ends the run with one error (thrown below), not a line per file.
                guard !error.isFatal else { return }
                events?(
                    SyncEvent(action: "failed", path: file.path, message: error.description, essential: file.essential))
            }
        }
        let first = await engine.download(
            requests, progress: progress, placing: placing, madeFolders: madeFolders, finished: onOutcome)
        var result = Outcomes(outcomes: first.outcomes.map { Outcome(request: $0.request, result: $0.result) })
        // The served bytes are the truth: a Jellyfin media file whose complete body differs from MediaSource `Size`
        // (replaced on the server's disk before its next scan) is asked again with the size the server serves now,
        // once a one-byte probe shows media, not an error page. The engine discards the first body (its size check
        // is final), so such a file costs two transfers in this run, none in the next.
        var again: [TransferRequest] = []
        var refusals: [String: String] = [:]
        for outcome in result.outcomes where outcome.error?.kind == .sizeMismatch {
            guard let file = planned[FileKey(rawValue: outcome.request.id)], file.kind == .media,
                Scope.of(key: file.key) == .media
            else {
                continue
            }
            switch await servedSize(outcome.request) {
            case .success(let size):
                var request = outcome.request
                request.expectedSize = size
                again.append(request)
            case .failure(let error):
                refusals[outcome.request.id] = error.description
            }
        }
        if !again.isEmpty || !refusals.isEmpty {
            let second =
                again.isEmpty
                ? []
                : await engine.download(
                    again, placing: placing, madeFolders: madeFolders, finished: onOutcome
                ).outcomes
            let replaced = Dictionary(
                second.map { ($0.request.id, Outcome(request: $0.request, result: $0.result)) },
                uniquingKeysWith: { first, _ in first })
            result.outcomes = result.outcomes.map { replaced[$0.request.id] ?? $0 }
        }
        var refused = false
        for outcome in result.outcomes {
            guard let file = planned[FileKey(rawValue: outcome.request.id)] else { continue }
            switch outcome.result {
            case .failure(let error):
                let message = refusals[outcome.request.id].map { "\(error.description); \($0)" } ?? error.description
                report.failed.append(SyncReport.Failure(path: file.path, message: message, essential: file.essential))
                if error.status == 401, Scope.of(key: file.key) == .media { refused = true }
            case .success(let success):
                let placed =
                    placements.withLock { $0[file.key] }
                    ?? Result { try record(file, success: success, previous: entries[file.key]) }
                switch placed {
                case .success(let path):
                    report.downloaded.append(path)
                    report.bytesDownloaded += success.size
                    if success.attempts > 1, success.resumedFrom == 0,
                        MirrorFiles.isAudioTranscode(signature: file.signature)
                    {
                        report.restarted.append(
                            "\(path): the transcode broke off and was fetched again from the start (a transcode "
                                + "cannot be resumed)")
                    }
                case .failure(let error):
                    report.failed.append(
                        SyncReport.Failure(path: file.path, message: "\(error)", essential: file.essential))
                }
            }
        }
        // A 401 on a download wants a new sign-in only when `/Users/Me` refuses the token too (Jellyfin answers 401
        // for more than a bad token).
        if refused, let server, !(await server.signInIsValid()) { report.needsSignIn = true }
        // A full disk stopped the batch: the files placed so far are kept and recorded; the run ends here.
        let full = result.outcomes.filter { $0.error?.isFatal == true }
        if let first = full.first(where: { !($0.error?.message.hasPrefix("not started") ?? false) }) ?? full.first {
            let reason = first.error?.errno.map { String(cString: strerror($0)) } ?? "no space left"
            let path = planned[FileKey(rawValue: first.request.id)]?.path ?? first.request.destination
            throw SyncError.diskFull(
                "\(full.count) of \(result.outcomes.count) files not fetched (\(reason) writing \(path)); "
                    + "\(report.downloaded.count) fetched before it are kept")
        }
    }

    /// What the server serves now at a download URL, asked with `Range: bytes=0-0`: its total size, or why the answer
    /// is not media (an HTML or JSON page from a proxy, an answer that ignores the range).
    func servedSize(_ request: TransferRequest) async -> Result<Int64, SyncError> {
        var configuration = client.configuration
        configuration.maxBodySize = 64 * 1024
        let probe = HTTPClient(configuration: configuration, retryPolicy: RetryPolicy(maxAttempts: 2))
        var headers = request.headers
        headers.replaceOrAdd(name: "Range", value: "bytes=0-0")
        do {
            let response = try await probe.send(HTTPRequest(url: request.url, headers: headers))
            let type = (response.headers["Content-Type"] ?? "").lowercased()
            if type.hasPrefix("text/") || type.contains("json") || type.contains("html") {
                return .failure(SyncError.fileSystem("the server answered \(type) instead of the media"))
            }
            guard response.status == 206, let range = response.headers["Content-Range"],
                let total = range.split(separator: "/").last.flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) })
            else {
                return .failure(SyncError.fileSystem("the server's size for the media is unknown (no Content-Range)"))
            }
            return .success(total)
        } catch {
            return .failure(SyncError.fileSystem("the size probe failed: \(error)"))
        }
    }

    /// Where a download is named: its planned path, for media with the extension its `Content-Type` calls for
    /// (the container then recorded).
    static func finalName(of file: RemoteFile, contentType: String?) -> (path: String, container: String?) {
        guard file.kind == .media else { return (file.path, nil) }
        let planned = String(file.path[file.path.index(after: file.path.lastIndex(of: ".") ?? file.path.startIndex)...])
        let chosen = MediaExtension.choose(mimeType: contentType, container: planned)
        return (chosen == planned ? file.path : String(file.path.dropLast(planned.count)) + chosen, chosen)
    }

    /// Records a download at the path the executor named it (`success.path`, see ``finalName(of:contentType:)``),
    /// removing the file of an older version at another path.
    func record(_ file: RemoteFile, success: TransferSuccess, previous: IndexEntry?) throws -> String {
        let path = success.path
        let container = MirrorSync.finalName(of: file, contentType: success.contentType).container
        if let previous, previous.file.path != path {
            try executor.removeReplaced(previous.file.path)
        }
        // The served bytes are the truth: recorded with the size received, the validator they came with and their
        // content hash, whatever the server's MediaSource Size says (it stays stale until the server's next scan).
        // A track the server transcoded has no validator of its own: it is marked as a transcode (`isStatic: false`),
        // with the quality asked for.
        let transcoded = file.kind == .media && MirrorFiles.isAudioTranscode(signature: file.signature)
        var placed = entry(
            for: file, path: path, size: success.size, container: container, previous: nil,
            validator: transcoded
                ? Quality.transcodeValidatorPrefix + (file.signature.split(separator: "|").last.map(String.init) ?? "")
                : success.validator ?? success.etag ?? success.lastModified)
        placed.contentHash = success.contentHash
        try executor.record(placed)
        // An enclosure a tracking service redirects: the URL the bytes came from names the episode too (a phone
        // may report it to the podcast account).
        if file.kind == .media, case .podcastEpisode(_, let episodeId)? = file.key.parts,
            case .download(let url, _) = file.content, let effective = success.effectiveURL, effective != url
        {
            try index.recordEpisodeURL(effective, episodeId: episodeId, origin: .redirect)
        }
        return path
    }

    func entry(
        for file: RemoteFile, path: String, size: Int64, container: String?, previous: IndexEntry?,
        validator: String? = nil
    ) -> IndexEntry {
        let mediaSourceId = file.kind == .media || file.kind == .subtitle ? file.versionId : nil
        return IndexEntry(
            file: LocalFile(
                key: file.key, path: path, kind: file.kind, size: size, signature: file.signature, itemId: file.itemId),
            versionId: file.versionId, mediaSourceId: mediaSourceId, container: container ?? previous?.container,
            downloadedAt: previous?.downloadedAt ?? executor.timestampNow(now()),
            taskId: previous?.taskId ?? executor.newTaskId(), validator: validator ?? previous?.validator,
            contentHash: previous?.contentHash)
    }
}

/// One transfer's outcome, as the engine reported it or as a second attempt replaced it.
private struct Outcome {
    var request: TransferRequest
    var result: Result<TransferSuccess, HTTPError>
    var error: HTTPError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

private struct Outcomes {
    var outcomes: [Outcome]
}
