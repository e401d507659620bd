import Foundation

/// The podcast account's decisions, as pure functions: which subscriptions change on each side, which play state
/// wins, and which episode an action names. No clock, index or network: ``PodcastAccountSync`` gathers their inputs
/// and carries out their answers.
public enum AccountPlanner {
    /// A subscription held here: its id and every URL it answers to (current first, then its old ones).
    public struct LocalFeed: Sendable, Equatable {
        public var id: String
        public var urls: [String]

        public init(id: String, urls: [String]) {
            self.id = id
            self.urls = urls
        }
    }

    /// A feed URL both sides agreed on at the last exchange; `podcastId` is nil while it waits to be subscribed here.
    public struct AgreedFeed: Sendable, Equatable {
        public var url: String
        public var podcastId: String?

        public init(url: String, podcastId: String?) {
            self.url = url
            self.podcastId = podcastId
        }
    }

    /// What one exchange of subscriptions does.
    public struct SubscriptionPlan: Sendable, Equatable {
        /// Feed URLs added in the group and not held here: subscribe (with the default retention).
        public var subscribe: [String] = []
        /// Podcasts removed in the group: unsubscribe (their files stay until `sync --delete`).
        public var unsubscribe: [String] = []
        /// Subscriptions made here the group does not have: sent as `add` (URL and podcast id).
        public var pushAdd: [AgreedFeed] = []
        /// Agreed feeds unsubscribed here: sent as `remove`.
        public var pushRemove: [String] = []
        /// Feeds both sides hold that were not yet recorded as agreed (URL and podcast id).
        public var agree: [AgreedFeed] = []

        public init(
            subscribe: [String] = [], unsubscribe: [String] = [], pushAdd: [AgreedFeed] = [],
            pushRemove: [String] = [], agree: [AgreedFeed] = []
        ) {
            self.subscribe = subscribe
            self.unsubscribe = unsubscribe
            self.pushAdd = pushAdd
            self.pushRemove = pushRemove
            self.agree = agree
        }
    }

    /// Merges the group's subscription changes with the subscriptions here.
    ///
    /// - The first link takes the union and removes nothing on either side.
    /// - A feed added in the group and not held here is subscribed; one removed in the group is unsubscribed here
    ///   only when both sides had agreed on it (a subscription made here and not yet sent is kept, and sent).
    /// - A subscription made here that the group lacks is sent as `add`; an agreed feed no longer held here is sent
    ///   as `remove`. An `add` of a feed already agreed is no news (this device's own upload coming back).
    /// - Parameters:
    ///   - local: the subscriptions held here.
    ///   - agreed: the feeds agreed at the last exchange.
    ///   - added: the group's `add` list since the last exchange (everything, on a first link).
    ///   - removed: the group's `remove` list since the last exchange.
    ///   - firstLink: no exchange has finished yet.
    public static func subscriptions(
        local: [LocalFeed], agreed: [AgreedFeed], added: [String], removed: [String], firstLink: Bool
    ) -> SubscriptionPlan {
        var plan = SubscriptionPlan()
        var localByURL: [String: String] = [:]
        for feed in local {
            for url in feed.urls where localByURL[url] == nil { localByURL[url] = feed.id }
        }
        let localIds = Set(local.map(\.id))
        let agreedIds = Set(agreed.compactMap(\.podcastId))
        let agreedURLs = Set(agreed.map(\.url))
        // An add of a feed both sides already agreed on is no news: it is this device's own upload coming back (the
        // changes since the last exchange include it), not a wish to subscribe again.
        let added = added.filter { url in !agreed.contains { $0.url == url && $0.podcastId != nil } }
        let addedSet = Set(added)
        let removedSet = firstLink ? [] : Set(removed).subtracting(addedSet)
        var agreedNow = Set<String>()
        for url in added where !removedSet.contains(url) {
            if let id = localByURL[url] {
                if !agreedIds.contains(id) || !agreedURLs.contains(url), agreedNow.insert(id).inserted {
                    plan.agree.append(AgreedFeed(url: url, podcastId: id))
                }
            } else if !plan.subscribe.contains(url) {
                plan.subscribe.append(url)
            }
        }
        for url in removed where removedSet.contains(url) {
            guard let id = localByURL[url], agreedIds.contains(id), !plan.unsubscribe.contains(id) else { continue }
            plan.unsubscribe.append(id)
        }
        for feed in local where !agreedIds.contains(feed.id) && !agreedNow.contains(feed.id) {
            guard let url = feed.urls.first else { continue }
            // The group removed it while it was never agreed: the subscription made here is kept and sent.
            plan.pushAdd.append(AgreedFeed(url: url, podcastId: feed.id))
        }
        for feed in agreed {
            guard let id = feed.podcastId, !localIds.contains(id), !addedSet.contains(feed.url) else { continue }
            if !removedSet.contains(feed.url) { plan.pushRemove.append(feed.url) }
        }
        return plan
    }

    /// Which side's play state of an episode stands.
    public enum Winner: Sendable, Equatable {
        /// The group's action is newer: applied here.
        case group
        /// The state here is newer (or as new): kept, and the group's action is reported as lost.
        case here
        /// Nothing here yet: applied.
        case nothingHere
    }

    /// Newer timestamp wins; a tie keeps the state held here.
    public static func winner(group: Date, here: Date?) -> Winner {
        guard let here else { return .nothingHere }
        return group > here ? .group : .here
    }

    /// The play state a `play` action means: played when the position reaches the end (within 1 % or 10 s of
    /// `total`, whichever is larger), else a position in seconds.
    public enum PlayState: Sendable, Equatable {
        case played
        case position(seconds: Int)
    }

    public static func playState(position: Int, total: Int?) -> PlayState {
        if let total, total > 0 {
            let slack = max(Double(total) * 0.01, 10)
            if Double(position) >= Double(total) - slack { return .played }
        }
        return .position(seconds: max(0, position))
    }

    /// The `position`/`total` of the `play` action for a mark made here: a played mark is `position == total`.
    /// Nil when it cannot be said (a played mark without a known length).
    public static func playFields(played: Bool, positionSeconds: Int, total: Int?) -> (position: Int, total: Int?)? {
        if played {
            guard let total, total > 0 else { return nil }
            return (total, total)
        }
        return (max(0, positionSeconds), total.flatMap { $0 > 0 ? $0 : nil })
    }

    /// An episode this mirror knows, as an action may name it.
    public struct KnownEpisode: Sendable, Equatable {
        public var podcastId: String
        public var episodeId: String
        public var guid: String?
        public var enclosureURLs: [String]
        /// The feed's duration, in seconds.
        public var durationSeconds: Int?

        public init(
            podcastId: String, episodeId: String, guid: String?, enclosureURLs: [String], durationSeconds: Int?
        ) {
            self.podcastId = podcastId
            self.episodeId = episodeId
            self.guid = guid
            self.enclosureURLs = enclosureURLs
            self.durationSeconds = durationSeconds
        }
    }

    /// Finds the episode an action names, in this order: its guid within the podcast its feed URL names, its
    /// enclosure URL (any podcast), its guid in any podcast. Nil for an episode this mirror never saw.
    /// - Parameters:
    ///   - podcasts: podcast id by every URL its feed answers to (current, old, rewritten).
    public static func match(
        podcast: String, episode: String, guid: String?, podcasts: [String: String], episodes: [KnownEpisode]
    ) -> KnownEpisode? {
        let podcastId = podcasts[podcast]
        if let guid, !guid.isEmpty {
            if let podcastId, let found = episodes.first(where: { $0.podcastId == podcastId && $0.guid == guid }) {
                return found
            }
        }
        if let found = episodes.first(where: { $0.enclosureURLs.contains(episode) }) { return found }
        if let guid, !guid.isEmpty, let found = episodes.first(where: { $0.guid == guid }) { return found }
        return nil
    }

    /// The time to use for an action's timestamp: a time in the future (a clock set ahead) or before 2001 (a clock
    /// never set) is taken as `now`.
    public static func sane(_ date: Date, now: Date) -> Date {
        date > now || date < Date(timeIntervalSince1970: 978_307_200) ? now : date
    }
}
