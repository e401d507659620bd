import Foundation
import MediaSyncFeeds
import MediaSyncHTTP

/// Fetches a feed with a conditional GET, following redirects itself so that permanent moves (301, 308)
/// can update the stored URL while temporary ones (302, 303, 307) do not.
struct FeedFetcher: Sendable {
    enum Outcome: Sendable {
        /// 304: the feed did not change since the stored validators (it may have moved permanently, though).
        case notModified(movedTo: String?)
        /// The feed's bytes, its validators, where it lives now if every hop was a permanent redirect, and what
        /// the response says about the document (its URL, its language).
        case fetched(bytes: [UInt8], etag: String?, lastModified: String?, movedTo: String?, document: Document)
    }

    /// What a response says about the feed document it carries.
    struct Document: Sendable {
        /// The document's URL, which relative references resolve against (after `xml:base`): its
        /// `Content-Location` when it gives an http(s) one, else the URL it was fetched from after every
        /// redirect (temporary ones included).
        var baseURL: String
        /// The `Content-Language` header: the feed's language when the document names none.
        var contentLanguage: String?
        /// The `Content-Type` header: its `charset` names the document's encoding, over the XML declaration's
        /// (RFC 7303 §3), as a feed reader reads a legacy-encoded feed its server labels.
        var contentType: String?

        init(url: String, headers: HTTPHeaders) {
            var base = url
            if let location = headers["Content-Location"]?.trimmingCharacters(in: .whitespaces), !location.isEmpty,
                let resolved = URL(string: location, relativeTo: URL(string: url))?.absoluteURL.absoluteString,
                resolved.lowercased().hasPrefix("http://") || resolved.lowercased().hasPrefix("https://")
            {
                base = resolved
            }
            baseURL = base
            contentLanguage = headers["Content-Language"]
            contentType = headers["Content-Type"]
        }

        /// Parses the feed's bytes as this document.
        func parse(_ bytes: [UInt8]) throws -> Feed {
            var feed = try FeedParser.parse(
                bytes, baseURL: baseURL, contentType: contentType)
            if feed.language == nil { feed.language = contentLanguage.flatMap(LanguageTag.normalized) }
            return feed
        }
    }

    static let maxRedirects = 10
    let client: HTTPClient

    /// Fetches the feed at `url`; `credentials` go only to `url`'s own origin (scheme, host and port), never to
    /// another host a redirect points at.
    /// - Throws: ``HTTPError``, or a ``SyncError`` saying the feed needs credentials when it answers 401.
    func fetch(_ url: String, etag: String?, lastModified: String?, credentials: HTTPCredentials? = nil) async throws
        -> Outcome
    {
        do {
            return try await fetchFollowingRedirects(
                url, etag: etag, lastModified: lastModified, credentials: credentials)
        } catch let error as HTTPError where error.status == 401 {
            let how = "`mediasync podcast add URL --username USER --password-stdin`"
            throw SyncError.invalidInput(
                credentials == nil
                    ? "needs credentials (the feed answered 401): add them with \(how)"
                    : "needs credentials: the feed refused the stored ones (401); give them again with \(how)")
        }
    }

    /// Whether two URLs share scheme, host and port.
    static func sameOrigin(_ first: String, _ second: String) -> Bool {
        guard let a = URLComponents(string: first), let b = URLComponents(string: second) else { return false }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && a.port == b.port
    }

    private func fetchFollowingRedirects(
        _ url: String, etag: String?, lastModified: String?, credentials: HTTPCredentials?
    ) async throws -> Outcome {
        var current = url
        var permanent = true
        for _ in 0...FeedFetcher.maxRedirects {
            var headers: HTTPHeaders = [
                "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"
            ]
            if let etag { headers.add(name: "If-None-Match", value: etag) }
            if let lastModified { headers.add(name: "If-Modified-Since", value: lastModified) }
            let response = try await client.send(
                HTTPRequest(
                    url: current, headers: headers, followRedirects: false,
                    credentials: FeedFetcher.sameOrigin(current, url) ? credentials : nil))
            switch response.status {
            case 304:
                return .notModified(movedTo: permanent && current != url ? current : nil)
            case 300...399:
                guard let location = response.headers["Location"],
                    let next = URL(string: location, relativeTo: URL(string: current))?.absoluteURL.absoluteString,
                    next.lowercased().hasPrefix("http://") || next.lowercased().hasPrefix("https://")
                else {
                    throw HTTPError.redirect(
                        "the feed redirects (\(response.status)) without a usable Location", url: current)
                }
                permanent = permanent && (response.status == 301 || response.status == 308)
                current = next
            default:
                return .fetched(
                    bytes: response.body, etag: response.headers["ETag"],
                    lastModified: response.headers["Last-Modified"],
                    movedTo: permanent && current != url ? current : nil,
                    document: Document(url: current, headers: response.headers))
            }
        }
        throw HTTPError.redirect("the feed redirects more than \(FeedFetcher.maxRedirects) times", url: url)
    }
}
