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
    func mediaSource(
        only: Scope?, dryRun: Bool, report: inout SyncReport, whileListing: @escaping @Sendable () -> Void
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
            // The media-source cache is read and parsed while the first listing pages are on their way.
            let index = self.index
            let cache = Task.detached {
                let cache = try index.mediaSourceCache()
                // The index is free for the records to be read (it reads one thing at a time).
                whileListing()
                return cache
            }
            let items = try await SelectionExpander(
                server: server, pageSize: listingPageSize,
                pending: Dictionary(pending.map { ($0.itemId, $0) }, uniquingKeysWith: { _, last in last }), now: now(),
                loadingCache: cache
            ).expand(selections)
            report.rejected += items.rejected
            report.gone += items.gone
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
                }, items: items)
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
                    !tops.contains(($0.seriesId ?? $0.id).lowercased()) && !tops.contains($0.id.lowercased())
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
            return ConfirmationAnswer(
                gone: gone, outsideSelections: Set(asked.filter { outside.contains($0.lowercased()) }))
        } catch {
            return nil
        }
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
}
