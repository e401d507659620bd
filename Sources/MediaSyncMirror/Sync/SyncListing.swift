import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// A sync's first step: what the selections and subscriptions want now, listed from the server and the feeds, and
/// the server asked about the items a plan would delete.
extension MirrorSync {
    /// Lists the Jellyfin side. A failure to list leaves the media scope out of this run (nothing of it is
    /// fetched or deleted), unless only media was asked for, in which case it is thrown.
    /// - Parameter whileListing: called once what the listing reads of the index is read, while the pages come.
    /// - Parameter memoInputs: what the listing's outcome depends on besides the answers and the index, when the
    ///   listing memo may be used (see ``ListingMemo``); nil when it may not.
    func mediaSource(
        only: Scope?, dryRun: Bool, memoInputs: String?, report: inout SyncReport,
        whileListing: @escaping @Sendable () -> Void
    ) async throws -> Source? {
        // Play state recorded here goes first (even with nothing selected any more), so the listings show it; what
        // could not be sent is applied over them (the next-unplayed window and the metadata see it all the same).
        // `push` reports the server's errors in its outcome; what it throws is the index's.
        if let server, !dryRun {
            let pushed = try await PlayStateSync(index: index, server: server, now: now()).push()
            report.playStateSent = pushed.sent
            report.playState += pushed.lines
            report.sourceErrors += pushed.failures.map { "Jellyfin: \($0)" }
        }
        let selections = try index.selections()
        guard !selections.isEmpty else {
            // Nothing selected: whatever the mirror holds is left over.
            return Source(files: [], metadata: { _ in [] }, items: MirrorItems())
        }
        guard let server else {
            if only == .media { throw SyncError.notSignedIn }
            report.sourceErrors.append("Jellyfin: \(SyncError.notSignedIn.description)")
            report.needsSignIn = true
            return nil
        }
        do {
            let pending = PlayStatePlanner.latestPending(try index.playEvents(state: .pending)).latest
            if dryRun, !pending.isEmpty {
                report.planned += pending.map {
                    .init(action: "send", path: "item \($0.itemId)", reason: $0.kind.rawValue, from: nil, bytes: nil)
                }
            }
            // The questions the last complete sync asked, asked again: the same answers, with nothing in the index
            // changed and every held file in place, mean this side has nothing to do. Otherwise the answers are used
            // by the listing below as if it had asked them.
            var prefetched: [String: Result<ListingLog.Answer, HTTPError>] = [:]
            if let memoInputs, pending.isEmpty, selections.allSatisfy({ $0.deletePlayedAfter == nil }),
                let memo = try index.listingMemo(), memo.inputs == memoInputs
            {
                switch await replay(memo, server: server) {
                case .unchanged:
                    return Source(files: [], metadata: { _ in [] }, unchanged: memo.wanted)
                case .changed(let answers):
                    prefetched = answers
                case .unanswered:
                    break
                }
            }
            let log = ListingLog(prefetched: prefetched)
            // The media-source cache is read and parsed while the first listing pages are on their way.
            let index = self.index
            let cache = Task.detached {
                let cache = try index.mediaSourceCache()
                // The index is free for the records to be read (it reads one thing at a time).
                whileListing()
                return cache
            }
            let items = try await SelectionExpander(
                server: server.recording(into: log), followUps: server, pageSize: listingPageSize,
                pending: Dictionary(pending.map { ($0.itemId, $0) }, uniquingKeysWith: { _, last in last }), now: now(),
                loadingCache: cache
            ).expand(selections)
            report.rejected += items.rejected
            report.gone += items.gone
            report.empty += items.empty
            report.sourceErrors += items.failed.map { "Jellyfin: \($0)" }
            let (files, rejected) = MirrorFiles.files(for: items, server: server)
            report.rejected += rejected
            let root = self.root
            return Source(
                files: files,
                metadata: { entries in
                    MetadataComposer.files(
                        for: items, entries: entries,
                        previous: { path in
                            guard let absolute = root.absolute(path),
                                let data = FileManager.default.contents(atPath: absolute)
                            else {
                                return nil
                            }
                            return try? JSONDecoder().decode(DownloadMetadata.self, from: data)
                        }, wholeSources: { index.wholeMediaSourceFields(itemId: $0) })
                }, items: items, log: log)
        } catch let error as JellyfinError {
            if only == .media { throw error }
            report.sourceErrors.append("Jellyfin: \(error.description)")
            report.needsSignIn = report.needsSignIn || error.kind == .authenticationNeeded
            return nil
        }
    }

    /// Asks the server about the items absent from the listings: gone (not returned by id, or virtual), still
    /// there within a selection (its movie or series is selected, or it is below a selected library), or still
    /// there outside every selection (deselected). Nil when the question failed: then nothing is confirmed.
    func confirm(_ absent: Set<String>, items: MirrorItems) async -> ConfirmationAnswer? {
        let tops = Set(items.selectedTops.map { $0.lowercased() })
        // Nothing selected that could hold them: every one of them was deselected or is gone.
        guard !tops.isEmpty || !items.libraries.isEmpty else {
            return ConfirmationAnswer(gone: [], outsideSelections: absent)
        }
        guard let server else { return nil }
        do {
            let asked = absent.sorted()
            let present = try await server.existingItems(ids: asked, below: nil).filter { !$0.isVirtual }
            let presentIds = Set(present.map { $0.id.lowercased() })
            let gone = Set(asked.filter { !presentIds.contains($0.lowercased()) })
            var outside = Set(
                present.filter {
                    !tops.contains(($0.seriesId ?? $0.albumId ?? $0.id).lowercased())
                        && !tops.contains($0.id.lowercased())
                }
                .map { $0.id.lowercased() })
            for library in items.libraries where !outside.isEmpty {
                do {
                    let below = try await server.existingItems(ids: outside.sorted(), below: library)
                    outside.subtract(below.map { $0.id.lowercased() })
                } catch {
                    // A library that cannot be asked (no longer accessible, no longer there) may hold any of them:
                    // every item still on the server stays; those gone are still confirmed gone.
                    outside = []
                }
            }
            // A list that could not be listed may hold any of them: those still on the server stay.
            if items.keepsUnlisted { outside = [] }
            return ConfirmationAnswer(
                gone: gone, outsideSelections: Set(asked.filter { outside.contains($0.lowercased()) }))
        } catch {
            return nil
        }
    }

    /// ``podcastSource(dryRun:report:)`` into a report of its own (its `rejected`, `sourceErrors` and `playState`).
    func podcastSourceReporting(dryRun: Bool) async throws -> (
        source: Source, accountExchanged: Bool, report: SyncReport
    ) {
        var report = SyncReport()
        let listed = try await podcastSource(dryRun: dryRun, report: &report)
        return (listed.source, listed.accountExchanged, report)
    }

    /// Lists the podcast side: the podcast account's exchange first, so the feeds it subscribes to are fetched in
    /// this run, then every feed.
    func podcastSource(dryRun: Bool, report: inout SyncReport) async throws -> (
        source: Source, accountExchanged: Bool
    ) {
        var accountExchanged = false
        if !dryRun, let config = feedCredentials?.config {
            accountExchanged = await PodcastAccountSync.run(
                config: config, index: index, root: root, http: client, credentials: feedCredentials, now: now,
                pull: true,
                report: &report)
        }
        var source = PodcastSource(index: index, client: client, now: now)
        source.credentials = feedCredentials
        let (files, podcasts) = try await source.expand(report: &report)
        return (
            Source(
                files: files, metadata: { PodcastSource.metadataFiles(podcasts, entries: $0) },
                released: source.released, keptPlayed: source.keptPlayed, feedUpdates: source.feedUpdates),
            accountExchanged
        )
    }

    /// What asking the last complete sync's questions again found.
    enum Replay {
        /// The same answers, nothing changed in the index since, and every held file in place.
        case unchanged
        /// Other answers (or errors), or a held file not as recorded: the answers, for the listing to use.
        case changed([String: Result<ListingLog.Answer, HTTPError>])
        /// Nothing was asked (the listing then asks as usual).
        case unanswered
    }

    /// Asks the memo's questions again and compares the answers (see ``ListingMemo``).
    func replay(_ memo: ListingMemo, server: any MediaServer) async -> Replay {
        let urls = memo.exchanges.map(\.url)
        // Only questions to this server: the token is never sent to an address a memo names.
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix(server.baseURL + "/") }) else { return .unanswered }
        // Every held file of this side on disk at the size it was recorded with (what planning would compare),
        // looked at while the answers come.
        let index = self.index
        let placer = executor.files
        let inPlace = Parallel.start { () -> Bool in
            let held = try index.mediaFileSizes()
            let sizes = placer.sizes(of: held.map(\.path))
            return held.allSatisfy { sizes[$0.path] == $0.size }
        }
        let replayed = await server.replay(urls)
        let same = memo.exchanges.allSatisfy { exchange in
            guard case .success(let answer)? = replayed[exchange.url] else { return false }
            return answer.response.status == exchange.status && answer.digest == exchange.digest
        }
        let filesInPlace = (try? await inPlace.value()) ?? false
        guard same, filesInPlace else { return .changed(replayed) }
        return .unchanged
    }

    /// What a Jellyfin side's outcome depends on besides the server's answers and the index: this build of
    /// mediasync (a new one lists again), the server and the credentials asked with, the page size, and the options
    /// that change a plan. (`--delete` does not: a memo is kept only after a run that left nothing over.)
    func memoInputs(_ options: SyncOptions) -> String? {
        guard let server else { return nil }
        var build = stat()
        let executable = stat("/proc/self/exe", &build) == 0 ? "\(build.st_size)-\(build.st_mtim.tv_sec)" : "?"
        let parts = [
            "listing-memo 1", MediaSyncVersion.string, executable, server.baseURL, server.authorizationHeader.value,
            "\(listingPageSize)", options.budget.map(String.init) ?? "-", "\(options.transcodes)",
        ]
        return "sha256:" + SHA256.hex(Array(parts.joined(separator: "\u{0}").utf8))
    }
}
