import Foundation
import MediaSyncCore
import MediaSyncFeeds
import MediaSyncHTTP

/// Adds subscriptions: fetches and parses the feed once, settles the podcast id, stores the first good state.
public struct Subscriptions: Sendable {
    let index: MirrorIndex
    let client: HTTPClient

    public init(index: MirrorIndex, client: HTTPClient) {
        self.index = index
        self.client = client
    }

    /// Subscribes to `url`, or returns the existing subscription for it (by current or old URL, or id).
    /// - Throws: an ``HTTPError`` when the feed cannot be fetched, a `FeedError` when it is not a feed.
    @discardableResult
    public func add(url: String, retention: Retention) async throws -> Subscription {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw SyncError(.invalidSelection, "\(url) is not an http(s) feed URL")
        }
        if let existing = try index.subscription(matching: url) { return existing }
        let outcome = try await FeedFetcher(client: client).fetch(url, etag: nil, lastModified: nil)
        guard case .fetched(let bytes, let etag, let lastModified, let movedTo, let document) = outcome else {
            throw SyncError(.invalidSelection, "the server answered 304 to an unconditional request for \(url)")
        }
        let feedURL = movedTo ?? url
        let feed = try document.parse(bytes)
        let id = PodcastLayout.podcastId(feedURL: feedURL, declaredGUID: feed.podcastGUID)
        if let existing = try index.subscription(matching: id) { return existing }
        let subscription = Subscription(
            id: id, feedURL: feedURL, title: feed.title, etag: etag, lastModified: lastModified, retention: retention,
            addedAt: ISO8601DateFormatter().string(from: Date()))
        try index.save(subscription, feed: try PodcastSource.encode(feed))
        return subscription
    }
}
