import Foundation
import MediaSyncFeeds
import MediaSyncHTTP

extension Subscriptions {
    /// The subscriptions of a mirror, fetching feeds with a plain client and keeping private feeds' credentials in the
    /// configuration folder.
    public init(index: MirrorIndex, config: ConfigDirectory) {
        self.init(index: index, client: HTTPClient(), credentialStore: FeedCredentialStore(config: config))
    }

    /// The feeds of an OPML document (another podcast app's export): each outline's feed URL and title.
    public static func outlines(ofOPML bytes: [UInt8]) throws -> [(feedURL: String, title: String?)] {
        try OPML.parse(bytes).map { ($0.xmlURL, $0.title) }
    }

    /// The subscriptions as an OPML document.
    public static func opml(_ subscriptions: [Subscription]) -> String {
        OPML.export(
            subscriptions.map { OPMLOutline(title: $0.title, xmlURL: $0.feedURL, htmlURL: nil) },
            title: "mediasync subscriptions")
    }
}

/// `podcast parse`: what mediasync reads in a feed, written as JSON to a file descriptor as it is parsed.
public enum FeedInspection {
    /// Fetches `url` and writes what its feed holds.
    public static func write(url: String, baseURL: String?, to descriptor: Int32) async throws {
        let response = try await HTTPClient().send(HTTPRequest(url: url, headers: ["Accept": "*/*"]))
        try FeedJSON.write(
            feedBytes: response.body, baseURL: baseURL ?? url, contentType: response.headers["Content-Type"],
            to: descriptor)
    }

    /// Streams the feed file at `path`: each episode is written as soon as it is parsed.
    public static func write(file path: String, baseURL: String?, to descriptor: Int32) throws {
        try FeedJSON.write(feedAtPath: path, baseURL: baseURL, to: descriptor)
    }
}
