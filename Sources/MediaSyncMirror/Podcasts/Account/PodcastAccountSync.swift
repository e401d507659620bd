import Foundation
import MediaSyncCore
import MediaSyncHTTP

/// One exchange with the podcast account, run by `mediasync sync` before the feeds are fetched: subscriptions both
/// ways, then episode actions both ways.
///
/// Exactly once: outgoing actions wait in the index (`account_outbox`) until the server answered; each is marked
/// `sending` before its POST, and one whose answer was lost is looked for among the server's actions before it is
/// sent again. Pulled actions are applied once (their keys are kept), and the `since` times are stored only after
/// what they cover was applied.
struct PodcastAccountSync {
    let index: MirrorIndex
    /// Where the held files are (their own length stands in for a feed's missing duration).
    let root: MirrorRoot?
    let client: GPodderClient
    let http: HTTPClient
    let credentials: FeedCredentialStore?
    let now: @Sendable () -> Date

    /// How far before the stored time actions are asked for again. Both servers filter on the actions' own
    /// timestamps (mygpo `timestamp__gte=since`, Nextcloud `timestamp_epoch > since`), so an action a phone uploads
    /// late with an older timestamp would otherwise never be seen; the applied keys keep the overlap harmless.
    static let overlap: Int64 = 7 * 86_400
    /// Actions per POST.
    static let batchSize = 200

    /// What an exchange did, for the sync's report.
    struct Outcome: Sendable, Equatable {
        var subscribed: [String] = []
        var unsubscribed: [String] = []
        var sent = 0
        var applied = 0
        /// Actions for episodes this mirror never saw.
        var ignored = 0
        /// Conflicts (which side won), rewrites refused, subscriptions that failed.
        var lines: [String] = []
    }

    /// Runs the account's part of a sync when an account is linked: lines go into the report, a failure into its
    /// source errors (the feeds still sync; the exit code is then 3).
    /// - Returns: whether the exchange finished.
    @discardableResult
    static func run(
        config: ConfigDirectory, index: MirrorIndex, root: MirrorRoot? = nil, http: HTTPClient,
        credentials: FeedCredentialStore?, now: @escaping @Sendable () -> Date, pull: Bool, report: inout SyncReport
    ) async -> Bool {
        let account: PodcastAccount
        do {
            guard let stored = try PodcastAccountStore(config: config).load() else { return false }
            account = stored
        } catch {
            report.sourceErrors.append("podcast account: \(error)")
            return false
        }
        let exchange = PodcastAccountSync(
            index: index, root: root, client: GPodderClient(account: account, http: http), http: http,
            credentials: credentials, now: now)
        var outcome = Outcome()
        var finished = true
        do {
            try await exchange.exchange(pull: pull, outcome: &outcome)
        } catch {
            finished = false
            report.sourceErrors.append("podcast account \(account.server): \(describe(error))")
        }
        report.playState += outcome.lines.map { "podcast account: \($0)" }
        var summary: [String] = []
        if !outcome.subscribed.isEmpty { summary.append("subscribed to \(outcome.subscribed.count) feeds") }
        if !outcome.unsubscribed.isEmpty { summary.append("unsubscribed from \(outcome.unsubscribed.count)") }
        if outcome.sent > 0 { summary.append("sent \(outcome.sent) episode actions") }
        if outcome.applied > 0 { summary.append("applied \(outcome.applied) from other devices") }
        if outcome.ignored > 0 { summary.append("ignored \(outcome.ignored) for episodes this mirror never saw") }
        if !summary.isEmpty { report.playState.append("podcast account: " + summary.joined(separator: ", ")) }
        return finished
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPError, error.status == nil {
            return "the server cannot be reached (\(error.message)); the next sync finishes the exchange"
        }
        return "\(error)"
    }

    /// The exchange. `pull` false only announces and sends what changed here (after a sync's downloads).
    func exchange(pull: Bool, outcome: inout Outcome) async throws {
        if !pull {
            try enqueueLocal(try catalog(), outcome: &outcome)
            guard try !index.outgoingActions(state: .pending).isEmpty else { return }
        }
        try await client.login()
        if pull {
            try await exchangeSubscriptions(outcome: &outcome)
        }
        let catalog = try self.catalog()
        try enqueueLocal(catalog, outcome: &outcome)
        try await readBack(catalog)
        if pull {
            try await pullActions(catalog, outcome: &outcome)
        }
        try await send(catalog, outcome: &outcome)
        try index.setAccountSetting("lastExchange", EpisodeAction.timestamp(now()) + "Z")
    }

    // MARK: Subscriptions

    private func exchangeSubscriptions(outcome: inout Outcome) async throws {
        let since = try index.accountSetting("subscriptionsSince").flatMap { Int64($0) }
        let changes = try await client.subscriptions(since: since)
        let subscriptions = try index.subscriptions()
        let local = try subscriptions.map {
            AccountPlanner.LocalFeed(id: $0.id, urls: [$0.feedURL] + (try index.aliases(podcastId: $0.id)))
        }
        let agreed = try index.agreedFeeds()
        let plan = AccountPlanner.subscriptions(
            local: local, agreed: agreed, added: changes.add, removed: changes.remove, firstLink: since == nil)
        try index.agree(plan.agree)
        // Feeds the group added that are still to be subscribed here: this exchange's and an earlier one's that
        // failed (its row waits without a podcast id).
        let removedNow = Set(changes.remove).subtracting(changes.add)
        let waiting = agreed.filter { $0.podcastId == nil && !removedNow.contains($0.url) }.map(\.url)
        try index.disagree(urls: agreed.filter { $0.podcastId == nil && removedNow.contains($0.url) }.map(\.url))
        try index.agree(plan.subscribe.map { AccountPlanner.AgreedFeed(url: $0, podcastId: nil) })
        let adder = Subscriptions(index: index, client: http, credentialStore: credentials)
        for url in plan.subscribe + waiting.filter({ !plan.subscribe.contains($0) }) {
            do {
                let subscription = try await adder.add(url: url, retention: .defaultForNewSubscriptions)
                try index.agree([AccountPlanner.AgreedFeed(url: url, podcastId: subscription.id)])
                outcome.subscribed.append(url)
            } catch {
                outcome.lines.append("could not subscribe to \(url), added on another device: \(error)")
            }
        }
        for id in plan.unsubscribe {
            guard let subscription = try index.subscription(matching: id) else { continue }
            try index.unsubscribe(id: id)
            try credentials?.remove(podcastId: id)
            try index.disagree(urls: [], podcastIds: [id])
            outcome.unsubscribed.append(subscription.feedURL)
        }
        if !plan.pushAdd.isEmpty || !plan.pushRemove.isEmpty {
            let answer = try await client.upload(add: plan.pushAdd.map(\.url), remove: plan.pushRemove)
            try index.agree(plan.pushAdd)
            try index.disagree(urls: plan.pushRemove)
            try await adopt(answer.updateURLs, outcome: &outcome)
        }
        if let timestamp = changes.timestamp {
            try index.setAccountSetting("subscriptionsSince", String(timestamp))
        }
    }

    /// Applies the server's URL rewrites (`update_urls`) to stored feed URLs, once per URL: the new URL must answer
    /// as a feed; the old one stays an alias, and the podcast keeps its id and folder.
    private func adopt(_ rewrites: [[String]], outcome: inout Outcome) async throws {
        for pair in rewrites where pair.count == 2 && pair[0] != pair[1] && !pair[1].isEmpty {
            let (old, new) = (pair[0], pair[1])
            guard try index.accountSetting("rewrite:" + old) == nil,
                var subscription = try index.subscription(matching: old), subscription.feedURL == old
            else { continue }
            let lowered = new.lowercased()
            var adopted = false
            if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
                do {
                    let fetched = try await FeedFetcher(client: http).fetch(
                        new, etag: nil, lastModified: nil,
                        credentials: try credentials?.credentials(podcastId: subscription.id))
                    if case .fetched(let bytes, _, _, _, let document) = fetched {
                        adopted = !(try document.parse(bytes)).episodes.isEmpty
                    }
                } catch {
                    adopted = false
                }
            }
            try index.setAccountSetting("rewrite:" + old, new)
            guard adopted else {
                outcome.lines.append(
                    "the server rewrote \(old) to \(new), which does not answer as a feed; kept \(old)")
                continue
            }
            subscription.feedURL = new
            subscription.etag = nil
            subscription.lastModified = nil
            try index.save(subscription)
            try index.agree([AccountPlanner.AgreedFeed(url: new, podcastId: subscription.id)])
            try index.disagree(urls: [old])
        }
    }

    // MARK: Episodes

    /// The episodes this mirror knows (from the stored feeds), and each podcast's id by every URL it answers to.
    struct Catalog {
        var podcasts: [String: String] = [:]
        var feedURL: [String: String] = [:]
        var episodes: [AccountPlanner.KnownEpisode] = []
        var byId: [String: AccountPlanner.KnownEpisode] = [:]
    }

    func catalog() throws -> Catalog {
        var catalog = Catalog()
        // The URLs a download was redirected to and those the server rewrote an enclosure URL to name the episode
        // too; the feed's own URL stays first (it is the one sent).
        let aliases = try index.episodeURLs()
        for subscription in try index.subscriptions() {
            catalog.feedURL[subscription.id] = subscription.feedURL
            for url in [subscription.feedURL] + (try index.aliases(podcastId: subscription.id)) {
                catalog.podcasts[url] = subscription.id
            }
            guard let bytes = try index.storedFeed(podcastId: subscription.id),
                let feed = try? PodcastSource.decode(bytes)
            else { continue }
            for episode in feed.episodes {
                guard let guid = episode.guid, let enclosure = episode.enclosure else { continue }
                let id = PodcastLayout.episodeId(guid: guid)
                guard catalog.byId[id] == nil else { continue }
                let known = AccountPlanner.KnownEpisode(
                    podcastId: subscription.id, episodeId: id, guid: guid,
                    enclosureURLs: [enclosure.url] + (aliases[id] ?? []).filter { $0 != enclosure.url },
                    durationSeconds: episode.durationSeconds)
                catalog.byId[id] = known
                catalog.episodes.append(known)
            }
        }
        for feed in try index.agreedFeeds() {
            if let id = feed.podcastId, catalog.podcasts[feed.url] == nil { catalog.podcasts[feed.url] = id }
        }
        return catalog
    }

    /// Takes what changed here into the queue, in one transaction: the latest play mark of each episode since the
    /// last look (not those the account itself set), and the downloads and deletions since the last exchange.
    ///
    /// A `play` carries `total` from the feed's duration, else from the held file's own length (MP3 and MP4/M4A
    /// headers); when neither is known a position is sent without `total`, and a played mark (which needs
    /// `position == total`) is not sent, with a line saying so.
    private func enqueueLocal(_ catalog: Catalog, outcome: inout Outcome) throws {
        let device = client.account.kind == .mygpo ? client.account.device : nil
        var batch = MirrorIndex.Enqueued()
        let watermark = try index.accountSetting("playSeq").flatMap { Int64($0) } ?? 0
        let fromAccount = try index.appliedPlaySeqs()
        let events = try index.playEvents(state: .local).filter { $0.seq > watermark }
        batch.playSeq = events.map(\.seq).max()
        var latest: [String: PlayEvent] = [:]
        for event in events where !fromAccount.contains(event.seq) { latest[event.itemId] = event }
        let at = now()
        let files = try index.heldEpisodeFiles()
        // The feed's duration, else the held file's own (read from its headers); nil when neither is known.
        func total(_ episode: AccountPlanner.KnownEpisode) -> Int? {
            if let seconds = episode.durationSeconds, seconds > 0 { return seconds }
            guard let path = files[episode.episodeId], let absolute = root?.absolute(path) else { return nil }
            return MediaDuration.seconds(ofFileAt: absolute)
        }
        func action(_ episode: AccountPlanner.KnownEpisode, _ name: String, _ date: Date) -> EpisodeAction? {
            guard let podcast = catalog.feedURL[episode.podcastId], let url = episode.enclosureURLs.first else {
                return nil
            }
            return EpisodeAction(
                podcast: podcast, episode: url, guid: episode.guid, action: name,
                timestamp: EpisodeAction.timestamp(AccountPlanner.sane(date, now: at)), device: device)
        }
        for event in latest.values.sorted(by: { $0.seq < $1.seq }) {
            guard let episode = catalog.byId[event.itemId], var play = action(episode, "play", event.at) else {
                continue
            }
            switch event.kind {
            case .unplayed:
                play.action = "new"
            case .played, .position:
                guard
                    let fields = AccountPlanner.playFields(
                        played: event.kind == .played, positionSeconds: Int(event.positionTicks / 10_000_000),
                        total: total(episode))
                else {
                    outcome.lines.append(
                        "\(episode.episodeId): played here, not sent: neither the feed nor a held file gives its length"
                    )
                    continue
                }
                play.started = 0
                play.position = fields.position
                play.total = fields.total
            }
            batch.actions.append((event.itemId, play))
        }
        let held = Set(files.keys)
        let announced = try index.announcedEpisodes()
        for id in held.subtracting(announced.keys).sorted() {
            guard let episode = catalog.byId[id], let download = action(episode, "download", at) else { continue }
            batch.actions.append((id, download))
            batch.announced.append((id, download))
        }
        // Named as their download was: the podcast may be gone from the subscriptions by now.
        for (id, known) in announced.sorted(by: { $0.key < $1.key }) where !held.contains(id) {
            batch.actions.append(
                (
                    id,
                    EpisodeAction(
                        podcast: known.podcast, episode: known.episode, guid: known.guid, action: "delete",
                        timestamp: EpisodeAction.timestamp(at), device: device)
                ))
            batch.withdrawn.append(id)
        }
        try index.enqueue(batch)
    }

    /// Settles actions whose POST's answer never came (a killed run, a timeout): those the server shows are sent,
    /// the others go back to pending. An action is recognised by its episode (as this mirror matches it), what it
    /// did, its time and its position: the server may name the episode by a URL it rewrote, give it its own guid
    /// (mygpo answers the guid of its own copy of the feed), write the action in capitals (Nextcloud) or the time
    /// with a zone.
    private func readBack(_ catalog: Catalog) async throws {
        let unsure = try index.outgoingActions(state: .sending)
        guard !unsure.isEmpty else { return }
        let earliest = unsure.compactMap { $0.action.date.map { Int64($0.timeIntervalSince1970) } }.min()
        let since = [unsure.compactMap(\.since).min(), earliest.map { $0 - 1 }].compactMap { $0 }.min()
        let answer = try await client.actions(since: since.map { max(0, $0) })
        let device = client.account.kind == .mygpo ? client.account.device : nil
        func identity(_ action: EpisodeAction, episodeId: String) -> String {
            [
                "episode", episodeId, action.action.lowercased(),
                action.date.map { String(Int64($0.timeIntervalSince1970)) } ?? action.timestamp ?? "",
                action.position.map(String.init) ?? "", action.total.map(String.init) ?? "",
            ].joined(separator: "\u{1F}")
        }
        var there = Set<String>()
        for action in answer.actions where device == nil || action.device == device {
            there.insert(action.key)
            if let episode = AccountPlanner.match(
                podcast: action.podcast, episode: action.episode, guid: action.guid, podcasts: catalog.podcasts,
                episodes: catalog.episodes)
            {
                there.insert(identity(action, episodeId: episode.episodeId))
            }
        }
        let found = unsure.filter {
            there.contains($0.action.key) || there.contains(identity($0.action, episodeId: $0.episodeId))
        }
        let seqs = Set(found.map(\.seq))
        try index.setOutgoing(found.map(\.seq), to: .sent)
        try index.setOutgoing(unsure.filter { !seqs.contains($0.seq) }.map(\.seq), to: .pending)
    }

    private func pullActions(_ catalog: Catalog, outcome: inout Outcome) async throws {
        let stored = try index.accountSetting("actionsSince").flatMap { Int64($0) }
        let answer = try await client.actions(since: stored.map { max(0, $0 - PodcastAccountSync.overlap) })
        let applied = try index.appliedKeys()
        let device = client.account.kind == .mygpo ? client.account.device : nil
        let outgoing = try index.outgoingActions()
        let ownKeys = Set(outgoing.map(\.action.key))
        let at = now()
        var keys: [String] = []
        var events: [(key: String, event: PlayEvent)] = []
        var lost: [Int64] = []
        // The latest state here of each episode: its last local play event, then what this exchange applies.
        var here = Dictionary(
            try index.playEvents(state: .local).map { ($0.itemId, $0) }, uniquingKeysWith: { _, last in last })
        let ordered = answer.actions.enumerated().map { ($0.element.date ?? .distantPast, $0.offset, $0.element) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var seen = Set<String>()
        for (date, _, action) in ordered {
            let key = action.key + "\u{1F}" + (action.device ?? "")
            guard !applied.contains(key), seen.insert(key).inserted else { continue }
            keys.append(key)
            // This device's own actions come back too.
            if let device, action.device == device { continue }
            if device == nil, ownKeys.contains(action.key) { continue }
            guard
                let episode = AccountPlanner.match(
                    podcast: action.podcast, episode: action.episode, guid: action.guid, podcasts: catalog.podcasts,
                    episodes: catalog.episodes)
            else {
                outcome.ignored += 1
                continue
            }
            guard action.action == "play" || action.action == "new" else { continue }
            let when = AccountPlanner.sane(date == .distantPast ? at : date, now: at)
            let event: PlayEvent
            if action.action == "new" {
                event = PlayEvent(itemId: episode.episodeId, kind: .unplayed, at: when, state: .local)
            } else {
                switch AccountPlanner.playState(position: action.position ?? 0, total: action.total) {
                case .played:
                    event = PlayEvent(itemId: episode.episodeId, kind: .played, at: when, state: .local)
                case .position(let seconds):
                    event = PlayEvent(
                        itemId: episode.episodeId, kind: .position, positionTicks: Int64(seconds) * 10_000_000,
                        at: when, state: .local)
                }
            }
            var recorded = event
            recorded.note = "from \(action.device ?? "the account")"
            let current = here[episode.episodeId]
            switch AccountPlanner.winner(group: when, here: current?.at) {
            case .group, .nothingHere:
                // Only the last state of an episode is recorded: the ones before it would be superseded at once.
                events.removeAll { $0.event.itemId == recorded.itemId }
                events.append((key, recorded))
                here[episode.episodeId] = recorded
                outcome.applied += 1
                for pending in outgoing
                where pending.state == .pending && pending.episodeId == episode.episodeId
                    && ["play", "new"].contains(pending.action.action) && !lost.contains(pending.seq)
                {
                    lost.append(pending.seq)
                    outcome.lines.append(
                        "\(episode.episodeId): \(describe(recorded)) on \(action.device ?? "another device") is newer "
                            + "than the mark here (\(pending.action.timestamp ?? "?")); the mark here is not sent")
                }
            case .here:
                if let current, current.kind != recorded.kind || current.positionTicks != recorded.positionTicks {
                    outcome.lines.append(
                        "\(episode.episodeId): the mark here (\(describe(current))) is as new or newer than "
                            + "\(describe(recorded)) on \(action.device ?? "another device"); kept the mark here")
                }
            }
        }
        try index.applyPulled(keys: keys, events: events, lost: lost, since: answer.timestamp)
    }

    private func describe(_ event: PlayEvent) -> String {
        let time = EpisodeAction.timestamp(event.at)
        switch event.kind {
        case .played: return "played at \(time)"
        case .unplayed: return "marked new at \(time)"
        case .position: return "stopped at \(event.positionTicks / 10_000_000) s at \(time)"
        }
    }

    /// Sends the pending actions in batches; each batch is marked `sending` before its POST and `sent` after. The
    /// server's rewrites of the URLs sent (`update_urls`, mygpo) are adopted after each batch.
    private func send(_ catalog: Catalog, outcome: inout Outcome) async throws {
        let pending = try index.outgoingActions(state: .pending)
        let since = try index.accountSetting("actionsSince").flatMap { Int64($0) }
        var start = 0
        while start < pending.count {
            let batch = Array(pending[start..<min(start + PodcastAccountSync.batchSize, pending.count)])
            try index.setOutgoing(batch.map(\.seq), to: .sending, since: since ?? 0)
            let answer = try await client.upload(actions: batch.map(\.action))
            try index.setOutgoing(batch.map(\.seq), to: .sent)
            outcome.sent += batch.count
            start += batch.count
            try await adoptEpisodeRewrites(answer.updateURLs, catalog: catalog, outcome: &outcome)
        }
    }

    /// Applies the server's rewrites of the URLs in an episode upload. A feed URL goes through ``adopt(_:outcome:)``
    /// like a subscription's; an enclosure URL becomes another URL of its episode, once (the episode keeps its id,
    /// files and the feed's URL, which is what is sent: sending the rewritten URL again could come back rewritten
    /// again). An empty new URL (the server dropped the action) changes nothing.
    private func adoptEpisodeRewrites(_ rewrites: [[String]], catalog: Catalog, outcome: inout Outcome) async throws {
        var feeds: [[String]] = []
        for pair in rewrites where pair.count == 2 && pair[0] != pair[1] && !pair[1].isEmpty {
            let (old, new) = (pair[0], pair[1])
            if catalog.podcasts[old] != nil {
                feeds.append(pair)
            } else if let episode = catalog.episodes.first(where: { $0.enclosureURLs.first == old }),
                catalog.podcasts[new] == nil
            {
                try index.recordEpisodeURL(new, episodeId: episode.episodeId, origin: .rewrite)
            }
        }
        if !feeds.isEmpty { try await adopt(feeds, outcome: &outcome) }
    }
}
