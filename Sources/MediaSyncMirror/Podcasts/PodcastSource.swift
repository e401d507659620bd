import Foundation
import MediaSyncCore
import MediaSyncFeeds
import MediaSyncHTTP

/// Turns subscriptions into the episode files to hold: fetches each feed (conditionally), keeps the last
/// good state when a feed fails, follows moves, and applies each podcast's retention.
struct PodcastSource: Sendable {
    let index: MirrorIndex
    let client: HTTPClient
    let now: @Sendable () -> Date
    /// The private feeds' credentials.
    var credentials: FeedCredentialStore?
    /// Episodes whose files played cleanup (`podcast add --delete-played`) lets go, and those it keeps for now
    /// (played within the grace period); filled by ``expand(report:)``.
    var released: Set<String> = []
    var keptPlayed: Set<String> = []
    /// What each fetch learned (validators, a move, the time and error of the check, the parsed feed), for the
    /// executor to store once the plan is made; filled by ``expand(report:)``. A dry run, which stops at the plan,
    /// stores none of it.
    var feedUpdates: [FeedUpdate] = []

    /// A subscription as checked now, and the feed to store with it (nil: keep the stored one).
    struct FeedUpdate: Sendable {
        var subscription: Subscription
        var feed: [UInt8]?
    }

    /// A subscription with the feed it currently stands for.
    struct Podcast: Sendable {
        var subscription: Subscription
        var feed: Feed
    }

    mutating func expand(report: inout SyncReport) async throws -> (files: [RemoteFile], podcasts: [Podcast]) {
        var files: [RemoteFile] = []
        var podcasts: [Podcast] = []
        // A podcast episode's play state stays here (no server): its latest event is the truth.
        let played = Dictionary(
            try index.playEvents(state: .local).map { ($0.itemId, $0) }, uniquingKeysWith: { _, last in last })
        for var subscription in try index.subscriptions() {
            let stored = try index.storedFeed(podcastId: subscription.id).flatMap { try? PodcastSource.decode($0) }
            var feed = stored
            var storeBytes: [UInt8]?
            subscription.lastChecked = WholeSecondTime.string(now())
            do {
                let outcome = try await FeedFetcher(client: client).fetch(
                    subscription.feedURL, etag: stored == nil ? nil : subscription.etag,
                    lastModified: stored == nil ? nil : subscription.lastModified,
                    credentials: try credentials?.credentials(podcastId: subscription.id))
                if case .notModified(let movedTo?) = outcome {
                    subscription.feedURL = movedTo
                }
                if case .fetched(let bytes, let etag, let lastModified, let movedTo, let document) = outcome {
                    let parsed = try document.parse(bytes)
                    // A feed that suddenly lists nothing is far more likely broken than emptied: keep the last
                    // good copy, so that a later `sync --delete` does not remove every episode.
                    if parsed.episodes.isEmpty, let stored, !stored.episodes.isEmpty {
                        throw SyncError.invalidInput(
                            "the feed now lists no episodes\(parsed.recoveredError.map { " (\($0))" } ?? "")")
                    }
                    feed = parsed
                    storeBytes = try PodcastSource.encode(parsed)
                    subscription.etag = etag
                    subscription.lastModified = lastModified
                    subscription.title = parsed.title ?? subscription.title
                    if let movedTo { subscription.feedURL = movedTo }
                    if let newURL = parsed.newFeedURL, newURL != subscription.feedURL,
                        newURL.lowercased().hasPrefix("http://") || newURL.lowercased().hasPrefix("https://")
                    {
                        // The feed says it moved: fetch the new address next time, without the old validators.
                        subscription.feedURL = newURL
                        subscription.etag = nil
                        subscription.lastModified = nil
                    }
                }
                subscription.lastError = nil
            } catch {
                let message = "\(error)"
                subscription.lastError = message
                report.sourceErrors.append(
                    "podcast \(subscription.title ?? subscription.id): \(message)"
                        + (stored == nil ? "" : " (keeping the last good copy of the feed)"))
            }
            feedUpdates.append(FeedUpdate(subscription: subscription, feed: storeBytes))
            guard let feed else { continue }
            podcasts.append(Podcast(subscription: subscription, feed: feed))
            let episodes = episodeFiles(subscription, feed: feed, played: played)
            files += episodes.files
            report.rejected += episodes.rejected
            released.formUnion(episodes.released)
            keptPlayed.formUnion(episodes.keptPlayed)
        }
        return (files, podcasts)
    }

    /// The files of the episodes the retention keeps; the guid is the identity (a new enclosure URL with the
    /// same guid is the same episode, fetched from its new address only if the file is missing).
    ///
    /// An episode whose enclosure is not an http(s) URL (`file:`, `ftp:`, `data:`…) is refused with one line in
    /// `rejected`, when the retention would keep it (so a long back catalogue does not repeat itself every run).
    /// - Parameter played: the latest play event of each episode (by episode id), for played cleanup.
    func episodeFiles(_ subscription: Subscription, feed: Feed, played: [String: PlayEvent] = [:]) -> (
        files: [RemoteFile], rejected: [String], released: Set<String>, keptPlayed: Set<String>
    ) {
        func isHTTP(_ episode: MediaSyncFeeds.Episode) -> Bool {
            guard let url = episode.enclosure?.url.lowercased() else { return false }
            return url.hasPrefix("http://") || url.hasPrefix("https://")
        }
        let enclosed = feed.episodes.filter { $0.enclosure != nil }
        let candidates = enclosed.filter(isHTTP)
        var rejected: [String] = []
        if candidates.count < enclosed.count {
            let podcast = subscription.title ?? subscription.id
            for position in subscription.retention.keep(published: enclosed.map { $0.published?.timeIntervalSince1970 })
            where !isHTTP(enclosed[position]) {
                let episode = enclosed[position]
                let url = episode.enclosure?.url ?? ""
                let scheme = url.firstIndex(of: ":").map { String(url[..<$0].prefix(16)) } ?? "no scheme"
                rejected.append(
                    "podcast \(podcast): episode \((episode.guid ?? episode.title ?? "?").debugDescription) has an "
                        + "enclosure that is not an http(s) URL (\(scheme.debugDescription)); skipped")
            }
        }
        let kept = subscription.retention.keep(published: candidates.map { $0.published?.timeIntervalSince1970 })
        var seen = Set<String>()
        var files: [RemoteFile] = []
        var released = Set<String>()
        var keptPlayed = Set<String>()
        for position in kept {
            let episode = candidates[position]
            guard let enclosure = episode.enclosure, let guid = episode.guid else { continue }
            let episodeId = PodcastLayout.episodeId(guid: guid)
            guard seen.insert(episodeId).inserted else { continue }
            if let grace = subscription.deletePlayedAfter, let event = played[episodeId] {
                let state = ServerPlayState(
                    played: event.kind == .played, positionTicks: event.positionTicks, lastPlayed: event.at)
                switch PlayStatePlanner.release(server: state, pending: nil, grace: grace, now: now()) {
                case .wanted: break
                case .kept:
                    keptPlayed.insert(episodeId)
                    continue
                case .released:
                    released.insert(episodeId)
                    continue
                }
            }
            let path = PodcastLayout.episode(
                podcastId: subscription.id, episodeId: episodeId,
                fileExtension: PodcastLayout.fileExtension(type: enclosure.type, url: enclosure.url))
            files.append(
                RemoteFile(
                    key: .podcastEpisode(podcastId: subscription.id, episodeId: episodeId), path: path, kind: .media,
                    content: .download(url: enclosure.url, expectedSize: nil), signature: "guid:\(guid)",
                    itemId: subscription.id, versionId: episodeId, essential: true, sizeHint: enclosure.length))
            files += extraFiles(episode, podcastId: subscription.id, episodeId: episodeId)
        }
        return (files, rejected, released, keptPlayed)
    }

    /// An episode's optional extras (their failure never fails the episode): its Podcasting 2.0 transcript (the
    /// first SRT or WebVTT one, else the first), its chapters (JSON) and its own image, beside it in the podcast's
    /// folder. Only http(s) URLs; a changed URL is fetched again.
    func extraFiles(_ episode: MediaSyncFeeds.Episode, podcastId: String, episodeId: String) -> [RemoteFile] {
        func isHTTP(_ url: String) -> Bool {
            let lowered = url.lowercased()
            return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
        }
        var files: [RemoteFile] = []
        func add(_ what: String, url: String, suffix: String, kind: RemoteFile.Kind) {
            files.append(
                RemoteFile(
                    key: .podcastExtra(podcastId: podcastId, episodeId: episodeId, what: what),
                    path: PodcastLayout.extra(podcastId: podcastId, episodeId: episodeId, suffix: suffix), kind: kind,
                    content: .download(url: url, expectedSize: nil), signature: "url:\(url)", itemId: podcastId,
                    versionId: episodeId, essential: false))
        }
        let transcripts = episode.transcripts.filter { isHTTP($0.url) }
        let preferred =
            transcripts.first {
                ["srt", "vtt"].contains(PodcastLayout.transcriptExtension(type: $0.type, url: $0.url))
            } ?? transcripts.first
        if let transcript = preferred {
            let fileExtension = PodcastLayout.transcriptExtension(type: transcript.type, url: transcript.url)
            add("transcript", url: transcript.url, suffix: "transcript.\(fileExtension)", kind: .subtitle)
        }
        if let chapters = episode.chaptersURL, isHTTP(chapters) {
            add("chapters", url: chapters, suffix: "chapters.json", kind: .subtitle)
        }
        if let image = episode.imageURL, isHTTP(image) {
            add("image", url: image, suffix: "image.\(PodcastLayout.imageExtension(url: image))", kind: .image)
        }
        return files
    }

    /// The podcasts' `metadata.json` files, from the episodes the index holds.
    static func metadataFiles(_ podcasts: [Podcast], entries: [IndexEntry]) -> [MetadataComposer.Composed] {
        var files: [MetadataComposer.Composed] = []
        var heldByPodcast: [String: [IndexEntry]] = [:]
        // Extras by podcast and episode, then what they are (transcript, chapters, image).
        var extras: [String: [String: String]] = [:]
        // By position: only the podcasts' records are copied, not every record looked at.
        for position in entries.indices where entries[position].file.key.isPodcast {
            let entry = entries[position]
            switch entry.file.key.parts {
            case .podcastExtra(let podcastId, let episodeId, let what):
                extras["\(podcastId):\(episodeId)", default: [:]][what] = String(
                    entry.file.path.split(separator: "/").last ?? "")
            case .podcastEpisode(let podcastId, _) where entry.file.kind == .media:
                heldByPodcast[podcastId, default: []].append(entry)
            default:
                break
            }
        }
        for podcast in podcasts {
            let id = podcast.subscription.id
            guard let held = heldByPodcast[id], !held.isEmpty else { continue }
            var byId: [String: MediaSyncFeeds.Episode] = [:]
            for episode in podcast.feed.episodes {
                guard let guid = episode.guid else { continue }
                let episodeId = PodcastLayout.episodeId(guid: guid)
                if byId[episodeId] == nil { byId[episodeId] = episode }
            }
            let episodes = held.sorted { $0.file.path < $1.file.path }.map { entry -> PodcastMetadata.Episode in
                let episodeId = entry.versionId ?? ""
                let episode = byId[episodeId]
                let held = extras["\(id):\(episodeId)"] ?? [:]
                return PodcastMetadata.Episode(
                    episodeID: episodeId, title: episode?.title ?? episodeId,
                    fileName: String(entry.file.path.split(separator: "/").last ?? ""), fileSize: entry.file.size,
                    downloadDate: entry.downloadedAt, guid: episode?.guid,
                    published: episode?.published.map(WholeSecondTime.string),
                    transcriptFile: held["transcript"], chaptersFile: held["chapters"], imageFile: held["image"])
            }
            let metadata = PodcastMetadata(
                podcastID: id, podcastTitle: podcast.feed.title ?? podcast.subscription.title ?? id,
                feedURL: podcast.subscription.feedURL, episodes: episodes)
            files.append(
                MetadataComposer.file(
                    metadata, key: .podcastMetadata(podcastId: id), path: PodcastLayout.metadata(id), itemId: id))
        }
        return files
    }

    static func encode(_ feed: Feed) throws -> [UInt8] {
        [UInt8](try JSONEncoder().encode(feed))
    }

    static func decode(_ bytes: [UInt8]) throws -> Feed {
        try JSONDecoder().decode(Feed.self, from: Data(bytes))
    }
}
