import Foundation
import MediaSyncHTTP

/// Fetches a feed with a conditional GET, following redirects itself so that permanent moves (301, 308)
/// can update the stored URL while temporary ones (302, 303, 307) do not.
struct FeedFetcher: Sendable {
    enum Outcome: Sendable {
        /// 304: the feed did not change since the stored validators (it may have moved permanently, though).
        case notModified(movedTo: String?)
        /// The feed's bytes, its validators, and where it lives now if every hop was a permanent redirect.
        case fetched(bytes: [UInt8], etag: String?, lastModified: String?, movedTo: String?)
    }

    static let maxRedirects = 10
    let client: HTTPClient

    func fetch(_ url: String, etag: String?, lastModified: String?) async throws -> Outcome {
        var current = url
        var permanent = true
        for _ in 0...FeedFetcher.maxRedirects {
            var headers: HTTPHeaders = [
                "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"
            ]
            if let etag { headers.add(name: "If-None-Match", value: etag) }
            if let lastModified { headers.add(name: "If-Modified-Since", value: lastModified) }
            let response = try await client.send(HTTPRequest(url: current, headers: headers, followRedirects: false))
            switch response.status {
            case 304:
                return .notModified(movedTo: permanent && current != url ? current : nil)
            case 300...399:
                guard let location = response.headers["Location"],
                    let next = URL(string: location, relativeTo: URL(string: current))?.absoluteURL.absoluteString,
                    next.lowercased().hasPrefix("http://") || next.lowercased().hasPrefix("https://")
                else {
                    throw HTTPError.redirect("the feed redirects (\(response.status)) without a usable Location", url: current)
                }
                permanent = permanent && (response.status == 301 || response.status == 308)
                current = next
            default:
                return .fetched(
                    bytes: response.body, etag: response.headers["ETag"], lastModified: response.headers["Last-Modified"],
                    movedTo: permanent && current != url ? current : nil)
            }
        }
        throw HTTPError.redirect("the feed redirects more than \(FeedFetcher.maxRedirects) times", url: url)
    }
}
