import Foundation
import MediaSyncCore
import MediaSyncFeeds
import MediaSyncHTTP

/// Adds subscriptions: fetches and parses the feed once, settles the podcast id, stores the first good state.
public struct Subscriptions: Sendable {
    let index: MirrorIndex
    let client: HTTPClient
    /// Where private feeds' credentials are kept; without it a feed that needs them cannot be added.
    let credentialStore: FeedCredentialStore?

    public init(index: MirrorIndex, client: HTTPClient, credentialStore: FeedCredentialStore? = nil) {
        self.index = index
        self.client = client
        self.credentialStore = credentialStore
    }

    /// Subscribes to `url`, or returns the existing subscription for it (by current or old URL, or id).
    /// - Throws: an ``HTTPError`` when the feed cannot be fetched, a `FeedError` when it is not a feed.
    /// - Parameter credentials: For a private feed (HTTP Basic or Digest); a `user:pass@` in `url` is taken
    ///   out of it and used when `credentials` is nil. They are stored by podcast id in ``credentialStore``
    ///   (replacing stored ones when the podcast is already subscribed), never in the index.
    @discardableResult
    /// - Parameter deletePlayedAfter: when given, played episodes leave this long after they were played (also
    ///   changed on a subscription that exists).
    public func add(
        url givenURL: String, retention: Retention, credentials given: HTTPCredentials? = nil,
        deletePlayedAfter: TimeInterval? = nil
    ) async throws -> Subscription {
        var subscription = try await subscribe(url: givenURL, retention: retention, credentials: given)
        if let deletePlayedAfter, subscription.deletePlayedAfter != deletePlayedAfter {
            subscription.deletePlayedAfter = deletePlayedAfter
            try index.save(subscription)
        }
        return subscription
    }

    private func subscribe(url givenURL: String, retention: Retention, credentials given: HTTPCredentials?)
        async throws -> Subscription
    {
        let (url, fromURL) = FeedCredentialStore.splitUserInfo(givenURL)
        let credentials = given ?? fromURL
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw SyncError.invalidInput("\(url) is not an http(s) feed URL")
        }
        if credentials != nil, credentialStore == nil {
            throw SyncError.invalidInput("no configuration folder to keep the feed's credentials in")
        }
        if let existing = try index.subscription(matching: url) {
            if let credentials { try credentialStore?.save(credentials, podcastId: existing.id) }
            return existing
        }
        let outcome = try await FeedFetcher(client: client).fetch(
            url, etag: nil, lastModified: nil, credentials: credentials)
        guard case .fetched(let bytes, let etag, let lastModified, let movedTo, let document) = outcome else {
            throw SyncError.invalidInput("the server answered 304 to an unconditional request for \(url)")
        }
        let feedURL = movedTo ?? url
        let feed = try document.parse(bytes)
        let id = PodcastLayout.podcastId(feedURL: feedURL, declaredGUID: feed.podcastGUID)
        if let credentials { try credentialStore?.save(credentials, podcastId: id) }
        if let existing = try index.subscription(matching: id) { return existing }
        let subscription = Subscription(
            id: id, feedURL: feedURL, title: feed.title, etag: etag, lastModified: lastModified, retention: retention,
            addedAt: ISO8601DateFormatter().string(from: Date()))
        try index.save(subscription, feed: try PodcastSource.encode(feed))
        return subscription
    }
}
