import Foundation
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import Testing

/// HTTP failures become clear `JellyfinError`s.
@Suite struct ErrorMappingTests {
    /// The error a signed-in client's `call` ends in when `server` answers `path` with `text` (status 200).
    private func failure<T>(
        of call: (JellyfinClient) async throws -> T, whenAnswering path: String, with text: String,
        contentType: String = "application/json", in server: TestServer
    ) async throws -> JellyfinError? {
        server.inject(.body(status: 200, contentType: contentType, bytes: jsonBytes(text)), path: path)
        let client = try makeUserClient(server)
        return await jellyfinError { try await call(client) }
    }

    @Test func expiredTokenMeansSignInAgain() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let token = "5eb711941092acbea8c2191bcd61c207"
        let client = try makeClient(server, token: token, userId: server.library.userId)
        let error = await jellyfinError { try await client.userViews() }
        #expect(error?.kind == .authenticationNeeded)
        #expect(error?.status == 401)
        #expect(error?.message == "the server no longer accepts this sign-in: sign in again with `mediasync login`")
        #expect(error?.isFatal == true)
        #expect(error?.isRetryable == false)
        #expect(error?.description.contains(token) == false)
    }

    @Test func forbidden() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(.status(403), path: "/Items")
        let error = await jellyfinError { try await makeUserClient(server).items(ItemsQuery(recursive: true)) }
        #expect(error?.kind == .forbidden)
        #expect(error?.message == "this user may not list the items (403 Forbidden)")
        #expect(error?.isRetryable == false)
    }

    @Test func forbiddenDownload() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try makeUserClient(server)
        let id = server.library.movies[0].id
        server.inject(.status(403), path: "/Items/\(id)/Download")
        var headers = HTTPHeaders()
        headers.add(name: client.authorizationHeader.name, value: client.authorizationHeader.value)
        do {
            _ = try await client.http.send(
                HTTPRequest(url: try client.downloadURL(mediaSourceId: id), headers: headers))
            Issue.record("no error")
        } catch let error as HTTPError {
            let mapped = JellyfinError.from(error, action: "download", resource: "media source \(id)")
            #expect(mapped.kind == .forbidden)
            #expect(mapped.message == "this user may not download (403 Forbidden)")
        }
    }

    @Test func notFound() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try makeUserClient(server)
        let error = await jellyfinError { try await client.seasons(seriesId: "0123456789abcdef0123456789abcdef") }
        #expect(error?.kind == .notFound)
        #expect(error?.message == "not found: the server has no series 0123456789abcdef0123456789abcdef (404)")
    }

    @Test func serverStartingUp() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(.status(503), path: "/UserViews")
        let error = await jellyfinError { try await makeUserClient(server).userViews() }
        #expect(error?.kind == .serverStarting)
        #expect(error?.message.contains("the server is starting up; try again shortly") == true)
        #expect(error?.isRetryable == true)
        #expect(error?.isFatal == false)
    }

    @Test func aBrief503IsRetriedByTheHTTPLayer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(.status(503), path: "/UserViews")
        let quick = RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.05, maxRetryAfter: 1, jitter: 0)
        let views = try await makeUserClient(server, retryPolicy: quick).userViews()
        #expect(views.count == 2)
        #expect(server.requests(to: "/UserViews").count == 2)
    }

    @Test func serverError() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(
            .body(status: 500, contentType: "text/plain", bytes: jsonBytes("database is locked")), path: "/UserViews")
        let error = await jellyfinError { try await makeUserClient(server).userViews() }
        #expect(error?.kind == .serverError)
        #expect(error?.status == 500)
        #expect(error?.message.hasPrefix("the server failed to list the libraries: the server answered 500") == true)
        #expect(error?.message.contains("database is locked") == true)
        #expect(error?.isRetryable == true)
    }

    @Test func badRequest() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(.status(400), path: "/Items")
        let error = await jellyfinError { try await makeUserClient(server).items(ItemsQuery()) }
        #expect(error?.kind == .requestRejected)
        #expect(error?.message.hasPrefix("the server refused to list the items: the server answered 400") == true)
    }

    @Test func truncatedJSON() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let error = try await failure(
            of: { try await $0.items(ItemsQuery()) }, whenAnswering: "/Items", with: #"{"Items":[{"Id":"a","Na"#,
            in: server)
        #expect(error?.kind == .invalidResponse)
        #expect(error?.message.hasPrefix("the server's answer to GET /Items is not valid JSON") == true)
        #expect(error?.message.contains("cut short") == true)
    }

    @Test func nonJSONBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let error = try await failure(
            of: { try await $0.userViews() }, whenAnswering: "/UserViews", with: "<html>login</html>",
            contentType: "text/html", in: server)
        #expect(error?.kind == .invalidResponse)
        #expect(
            error?.message
                == "the server's answer to GET /UserViews is not valid JSON (it may have been cut short; it starts with: <html>login</html>)"
        )
    }

    @Test func wrongShape() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let series = try #require(server.library.series.first)
        let error = try await failure(
            of: { try await $0.seasons(seriesId: series.id) }, whenAnswering: "/Shows/\(series.id)/Seasons",
            with: #"{"Items":[{"Name":"no id"}]}"#, in: server)
        #expect(error?.kind == .invalidResponse)
        #expect(
            error?.message
                == "the server's answer to GET /Shows/{id}/Seasons is not the expected JSON (missing field Id in Items.0)"
        )
    }

    @Test func aSignInAnswerIsNeverQuoted() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let secret = "feedfacefeedfacefeedfacefeedface"
        server.inject(
            .body(
                status: 200, contentType: "application/json", bytes: jsonBytes(#"{"AccessToken":"\#(secret)","User":"#)),
            path: "/Users/AuthenticateByName")
        server.inject(
            .body(status: 200, contentType: "application/json", bytes: jsonBytes(#"{"AccessToken":"\#(secret)"}"#)),
            path: "/Users/AuthenticateByName")
        let client = try makeClient(server)
        let truncated = await jellyfinError { try await client.authenticate(username: "demo", password: "demo") }
        #expect(truncated?.kind == .invalidResponse)
        #expect(truncated?.message.contains(secret) == false)
        let incomplete = await jellyfinError { try await client.authenticate(username: "demo", password: "demo") }
        #expect(incomplete?.kind == .invalidResponse)
        #expect(incomplete?.message.contains("missing field User") == true)
        #expect(incomplete?.message.contains(secret) == false)
    }

    @Test func kindsAndEquality() {
        #expect(JellyfinError.Kind.authenticationNeeded != JellyfinError.Kind.forbidden)
        #expect(JellyfinError.Kind.notFound.description == "notFound")
    }
}
