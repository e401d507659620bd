import Foundation
import MediaSyncCore

/// A subscribed podcast feed.
public struct Subscription: Codable, Equatable, Sendable {
    /// The podcast id: the folder name under `Downloads/`, settled at subscription and kept when the feed moves.
    public var id: String
    /// The feed's current URL (updated by permanent redirects and `itunes:new-feed-url`).
    public var feedURL: String
    public var title: String?
    /// Validators of the last fetch, for a conditional GET.
    public var etag: String?
    public var lastModified: String?
    public var retention: Retention
    public var addedAt: String
    public var lastChecked: String?
    /// Why the last fetch failed, when it did (the last good state is kept).
    public var lastError: String?
    /// Played episodes leave this long after they were played here (`podcast add --delete-played`); nil keeps them.
    public var deletePlayedAfter: TimeInterval?

    public init(
        id: String, feedURL: String, title: String?, etag: String? = nil, lastModified: String? = nil,
        retention: Retention, addedAt: String, lastChecked: String? = nil, lastError: String? = nil
    ) {
        self.id = id
        self.feedURL = feedURL
        self.title = title
        self.etag = etag
        self.lastModified = lastModified
        self.retention = retention
        self.addedAt = addedAt
        self.lastChecked = lastChecked
        self.lastError = lastError
    }
}
