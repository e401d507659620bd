import Foundation
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct HTTPClientTests {
    @Test func getsAndDecodesJSON() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile(
            "/info.json", contents: Array(#"{"Version":"10.10.3","Id":"abc"}"#.utf8), contentType: "application/json")
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct Info: Decodable { var Version: String }
        let response = try await HTTPClient().send(HTTPRequest(url: server.baseURL + "/info.json"))
        #expect(response.status == 200)
        #expect(try response.decode(Info.self).Version == "10.10.3")
        let sent = try #require(server.requests(to: "/info.json").first)
        #expect(sent.headers["user-agent"] == "mediasync/\(MediaSyncVersion.string)")
        #expect(sent.headers["accept"] == "application/json")
    }

    @Test func postsJSONBodies() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        struct Login: Encodable {
            // swift-format-ignore: AlwaysUseLowerCamelCase
            var Username: String
            // swift-format-ignore: AlwaysUseLowerCamelCase
            var Pw: String
        }
        let request = try HTTPRequest.json(
            url: server.baseURL + "/Users/AuthenticateByName", body: Login(Username: "demo", Pw: "demo"))
        let response = try await HTTPClient().send(request)
        #expect(response.status == 200)
        let sent = try #require(server.requests(to: "/Users/AuthenticateByName").first)
        #expect(sent.method == "POST")
        #expect(sent.headers["content-type"] == "application/json")
        #expect(String(decoding: sent.body, as: UTF8.self).contains("\"Username\":\"demo\""))
    }

    /// Sends a GET for `path` to a fresh test server with quick retries, expecting an `HTTPError` after one request
    /// (the error is not retried); returns the error.
    private func errorNotRetried(getting path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> HTTPError?
    {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = HTTPClient(retryPolicy: quickRetries)
        let error = await #expect(throws: HTTPError.self, sourceLocation: sourceLocation) {
            try await client.send(HTTPRequest(url: server.baseURL + path))
        }
        #expect(server.requests(to: path).count == 1, sourceLocation: sourceLocation)
        return error
    }

    @Test func unauthorizedIsNotRetriedAndSaysSo() async throws {
        let error = try await errorNotRetried(getting: "/UserViews")
        #expect(error?.status == 401)
        #expect(error?.isRetryable == false)
    }

    @Test func notFoundIsNotRetried() async throws {
        let error = try await errorNotRetried(getting: "/nothing-here")
        #expect(error?.status == 404)
        #expect(error?.description.contains("404") == true)
    }

    @Test func retriesServerErrorsThenSucceeds() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/flaky", contents: Array("ok".utf8))
        server.inject(.status(502), path: "/flaky", count: 2)
        let response = try await HTTPClient(retryPolicy: quickRetries).send(HTTPRequest(url: server.baseURL + "/flaky"))
        #expect(response.body == Array("ok".utf8))
        #expect(server.requests(to: "/flaky").count == 3)
    }

    @Test func honoursRetryAfter() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/busy", contents: Array("done".utf8))
        server.inject(.retryAfter(status: 429, seconds: 1), path: "/busy")
        let started = Date()
        let response = try await HTTPClient(retryPolicy: quickRetries).send(HTTPRequest(url: server.baseURL + "/busy"))
        #expect(response.body == Array("done".utf8))
        #expect(server.requests(to: "/busy").count == 2)
        // The retry waited for what the server asked, not the 0.05 s backoff of the policy.
        #expect(Date().timeIntervalSince(started) >= 0.95)
    }

    @Test func refusesARetryAfterBeyondTheLimit() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/busy", contents: Array("done".utf8))
        server.inject(.retryAfter(status: 503, seconds: 600), path: "/busy")
        let error = await #expect(throws: HTTPError.self) {
            try await HTTPClient(retryPolicy: quickRetries).send(HTTPRequest(url: server.baseURL + "/busy"))
        }
        #expect(error?.status == 503)
        #expect(error?.retryAfter == 600)
        #expect(server.requests(to: "/busy").count == 1)
    }

    @Test func followsRedirectsButNotForever() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/new", contents: Array("moved".utf8))
        server.inject(.redirect(location: "/new", status: 301), path: "/old")
        let response = try await HTTPClient().send(HTTPRequest(url: server.baseURL + "/old"))
        #expect(response.body == Array("moved".utf8))
        #expect(response.effectiveURL.hasSuffix("/new"))

        server.inject(.redirect(location: "/loop", status: 302), path: "/loop", count: 100)
        let client = HTTPClient(configuration: HTTPClientConfiguration(maxRedirects: 3), retryPolicy: .none)
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/loop"))
        }
        #expect(error?.kind == .tooManyRedirects)
    }

    /// The whole-request time-out after the request went out is a stall (a listing is then asked again smaller);
    /// libcurl's request size says the request went out, not its message.
    @Test func aRequestThatGetsNoAnswerInTimeIsAStall() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/slow", contents: Array(repeating: 7, count: 100))
        server.inject(.stall(afterBytes: 0, seconds: 10), path: "/slow")
        let client = HTTPClient(
            configuration: HTTPClientConfiguration(requestTimeout: 1, lowSpeedTime: 60), retryPolicy: .none)
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/slow"))
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.requestSent == true)
        #expect(error?.isStall == true)
    }

    @Test func reportsABodyThatIsNotJSONClearly() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(
            .body(status: 200, contentType: "text/html", bytes: Array("<html>login</html>".utf8)), path: "/api")
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct Thing: Decodable { var Id: String }
        let response = try await HTTPClient().send(HTTPRequest(url: server.baseURL + "/api"))
        let error = #expect(throws: HTTPError.self) { try response.decode(Thing.self) }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.message.contains("<html>login") == true)
    }

    @Test func connectionRefusedIsARetryableTransportError() async throws {
        let server = try TestServer()
        let url = server.baseURL + "/x"
        server.shutdown()
        let error = await #expect(throws: HTTPError.self) {
            try await HTTPClient(retryPolicy: .none).send(HTTPRequest(url: url))
        }
        #expect(error?.kind == .transport)
        #expect(error?.isRetryable == true)
    }

    @Test func refusesNonHTTPSchemes() async throws {
        let error = await #expect(throws: HTTPError.self) {
            try await HTTPClient(retryPolicy: .none).send(HTTPRequest(url: "file:///etc/passwd"))
        }
        #expect(error?.kind == .invalidURL)
    }
}

@Suite struct CompressionTests {
    @Test func decodesAGzipBodyAndAsksForIt() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let json = #"{"Items":[],"TotalRecordCount":0,"StartIndex":0}"#
        server.setFile(
            "/gz", contents: try gzip(Array(json.utf8)), contentType: "application/json",
            extraHeaders: [("Content-Encoding", "gzip")])
        let response = try await HTTPClient().send(HTTPRequest(url: server.baseURL + "/gz"))
        #expect(String(decoding: response.body, as: UTF8.self) == json)
        let encodings = try #require(server.requests(to: "/gz").first?.headers["accept-encoding"])
        #expect(encodings.contains("gzip"))
    }

    /// Compresses with the system's gzip, an implementation independent of libcurl's zlib use.
    private func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        Array(try Spawned("/bin/gzip", ["-c"], input: bytes).finish().output)
    }
}
