import Foundation
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// The document a feed response carries: relative URLs resolve against the URL that answered, after
/// temporary redirects too, or its `Content-Location`; `Content-Language` is the language a feed does not name.
@Suite struct FeedDocumentTests {
    static func feed(language: String = "") -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Relative</title><link>./</link>\(language)
            <item><title>One</title><guid isPermaLink="false">one</guid>
            <enclosure url="media/one.mp3" length="4" type="audio/mpeg"/></item>
            </channel></rss>
            """.utf8)
    }

    @Test func aTemporaryRedirectKeepsTheFeedURLButTheDocumentIsWhereItWasServed() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/moved/show.xml", contents: Self.feed(), contentType: "application/rss+xml")
        server.inject(.redirect(location: "/moved/show.xml", status: 302), path: "/feeds/show.xml")
        let outcome = try await FeedFetcher(client: HTTPClient()).fetch(
            server.baseURL + "/feeds/show.xml", etag: nil, lastModified: nil)
        guard case .fetched(let bytes, _, _, let movedTo, let document) = outcome else {
            Issue.record("expected a fetched feed, got \(outcome)")
            return
        }
        #expect(movedTo == nil)
        #expect(document.baseURL == server.baseURL + "/moved/show.xml")
        let feed = try document.parse(bytes)
        #expect(feed.link == server.baseURL + "/moved/")
        #expect(feed.episodes.first?.enclosure?.url == server.baseURL + "/moved/media/one.mp3")
        #expect(feed.language == nil)
    }

    @Test func contentLocationIsTheBaseAndContentLanguageTheDefaultLanguage() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile(
            "/feeds/show.xml", contents: Self.feed(), contentType: "application/rss+xml",
            extraHeaders: [("Content-Location", "/archive/2024/show.xml"), ("Content-Language", "en_gb, fr")])
        server.setFile(
            "/feeds/named.xml", contents: Self.feed(language: "<language>de_at</language>"),
            contentType: "application/rss+xml", extraHeaders: [("Content-Language", "en-GB")])
        let client = HTTPClient()
        let outcome = try await FeedFetcher(client: client).fetch(
            server.baseURL + "/feeds/show.xml", etag: nil, lastModified: nil)
        guard case .fetched(let bytes, _, _, _, let document) = outcome else {
            Issue.record("expected a fetched feed, got \(outcome)")
            return
        }
        let feed = try document.parse(bytes)
        #expect(feed.episodes.first?.enclosure?.url == server.baseURL + "/archive/2024/media/one.mp3")
        #expect(feed.language == "en-GB")
        let named = try await FeedFetcher(client: client).fetch(
            server.baseURL + "/feeds/named.xml", etag: nil, lastModified: nil)
        guard case .fetched(let namedBytes, _, _, _, let namedDocument) = named else {
            Issue.record("expected a fetched feed, got \(named)")
            return
        }
        #expect(try namedDocument.parse(namedBytes).language == "de-AT")
    }

    /// A legacy-encoded feed its server labels: the `charset` of `Content-Type` names the encoding the document
    /// does not declare (RFC 7303 §3), so the title reads as written rather than as U+FFFD.
    @Test func theContentTypeCharsetNamesALegacyEncoding() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // "Καλημέρα" in Mac Greek.
        let title: [UInt8] = [186, 225, 236, 232, 237, 219, 242, 225]
        let document =
            Array(#"<?xml version="1.0"?><rss version="2.0"><channel><title>"#.utf8) + title
            + Array("</title><item><title>One</title><guid>one</guid></item></channel></rss>".utf8)
        server.setFile("/feeds/greek.xml", contents: document, contentType: "application/rss+xml; charset=x-mac-greek")
        let outcome = try await FeedFetcher(client: HTTPClient()).fetch(
            server.baseURL + "/feeds/greek.xml", etag: nil, lastModified: nil)
        guard case .fetched(let bytes, _, _, _, let fetched) = outcome else {
            Issue.record("expected a fetched feed, got \(outcome)")
            return
        }
        #expect(try fetched.parse(bytes).title == "Καλημέρα")
    }

    @Test(
        "Content-Location is used only when it is http(s)",
        arguments: [
            ("/a/b.xml", "http://h.example/a/b.xml"), ("https://cdn.example/f.xml", "https://cdn.example/f.xml"),
            ("ftp://h.example/f.xml", "http://h.example/feeds/show.xml"), ("", "http://h.example/feeds/show.xml"),
        ])
    func contentLocation(header: String, expected: String) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Location", value: header)
        #expect(FeedFetcher.Document(url: "http://h.example/feeds/show.xml", headers: headers).baseURL == expected)
    }
}
