import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import Testing

/// Sign-in methods against the local test server over loopback.
@Suite struct SignInTests {
    @Test func passwordSignIn() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let client = try makeClient(server)
        let result = try await client.authenticate(username: library.userName, password: library.password)
        #expect(result.accessToken == library.accessToken)
        #expect(result.user.id == library.userId)
        #expect(result.user.name == library.userName)
        #expect(result.serverId == library.serverId)
        // The server decoded the percent-encoded header values.
        #expect(result.sessionInfo["DeviceName"] == .string("test box"))
        #expect(result.sessionInfo["DeviceId"] == .string(testIdentity.deviceId))
        #expect(result.sessionInfo["Client"] == .string("mediasync"))

        let request = try #require(server.requests(to: "/Users/AuthenticateByName").first)
        #expect(request.method == "POST")
        let body = try JSONDecoder().decode([String: String].self, from: Data(request.body))
        #expect(body == ["Username": library.userName, "Pw": library.password])
        #expect(request.header("content-type") == "application/json")
        let auth = try #require(request.header("authorization"))
        #expect(auth.hasPrefix(#"MediaBrowser Client="mediasync", Device="test%20box", DeviceId="3f2a9c1e-device""#))
        #expect(!auth.contains("Token="))

        // The signed-in client works.
        let signedIn = client.signedIn(result)
        #expect(signedIn.userId == library.userId)
        #expect(try await signedIn.currentUser().id == library.userId)
        #expect(
            server.requests(to: "/Users/Me").first?.header("authorization")?.contains(
                #"Token="\#(library.accessToken)""#) == true)
    }

    @Test func wrongPasswordIsAClearError() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try makeClient(server)
        let error = await jellyfinError {
            try await client.authenticate(username: "demo", password: "not-the-password")
        }
        #expect(error?.kind == .invalidCredentials)
        #expect(error?.status == 401)
        #expect(error?.message == "the server did not accept this user name and password (401 Unauthorized)")
        #expect(error?.isRetryable == false)
        #expect(error?.isFatal == true)
    }

    @Test func apiKeySignIn() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        // The test server has no `GET /Users`; serve Jellyfin's shape (an array of UserDto) for it.
        let users =
            #"[{"Name":"admin","Id":"0123456789abcdef0123456789abcdef","Policy":{"IsAdministrator":true}},"#
            + #"{"Name":"\#(library.userName)","Id":"\#(library.userId)","ServerId":"\#(library.serverId)","#
            + #""Policy":{"IsAdministrator":false,"EnableContentDownloading":true}}]"#
        server.inject(
            .body(status: 200, contentType: "application/json", bytes: jsonBytes(users)), path: "/Users", count: 2)

        let client = try makeClient(server, token: library.apiKey)
        let user = try await client.signInWithAPIKey(userName: "DEMO")
        #expect(user.id == library.userId)
        #expect(user.policy?.enableContentDownloading == true)
        let info = try #require(server.requests(to: "/System/Info").first)
        #expect(info.header("authorization")?.contains(#"Token="\#(library.apiKey)""#) == true)

        // Without a name, two users are ambiguous.
        let ambiguous = await jellyfinError { try await client.selectUser(named: nil) }
        #expect(ambiguous?.kind == .userNotFound)
        #expect(ambiguous?.message.contains("name the one") == true)

        let signedIn = client.signedIn(accessToken: library.apiKey, userId: user.id)
        let movies = try await signedIn.items(ItemsQuery(recursive: true, includeItemTypes: ["Movie"]))
        #expect(movies.count == library.movies.count)
    }

    @Test func wrongAPIKey() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try makeClient(server, token: "0000000000000000000000000000beef")
        let error = await jellyfinError { try await client.signInWithAPIKey(userName: "demo") }
        #expect(error?.kind == .invalidCredentials)
        #expect(error?.message.contains("API key") == true)
        #expect(error?.message.contains("beef") == false)
    }

    @Test func quickConnectFlow() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let client = try makeClient(server)
        let codes = LockedList()
        let result = try await client.quickConnect(pollInterval: 0.01, timeout: 120) { codes.append($0) }
        #expect(result.accessToken == library.accessToken)
        #expect(result.user.id == library.userId)
        #expect(codes.values.count == 1)
        #expect(codes.values.first?.count == 6)
        #expect(codes.values.first?.allSatisfy(\.isNumber) == true)
        #expect(server.requests(to: "/QuickConnect/Enabled").count == 1)
        #expect(server.requests(to: "/QuickConnect/Initiate").first?.method == "POST")
        // Two polls answer "not yet", the third "approved".
        let polls = server.requests(to: "/QuickConnect/Connect")
        #expect(polls.count == library.quickConnectPollsBeforeAuthorized + 1)
        let secret = try #require(polls.first?.queryValue("secret"))
        let signIn = try #require(server.requests(to: "/Users/AuthenticateWithQuickConnect").first)
        #expect(try JSONDecoder().decode([String: String].self, from: Data(signIn.body)) == ["Secret": secret])
    }

    @Test func quickConnectStepByStep() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try makeClient(server)
        #expect(try await client.quickConnectEnabled())
        let started = try await client.quickConnectInitiate()
        #expect(!started.authenticated)
        #expect(started.deviceId == testIdentity.deviceId)
        #expect(try await client.quickConnectState(secret: started.secret).authenticated == false)
        let early = await jellyfinError { try await client.authenticateWithQuickConnect(secret: started.secret) }
        #expect(early?.kind == .invalidCredentials)
        #expect(try await client.quickConnectState(secret: started.secret).authenticated == false)
        #expect(try await client.quickConnectState(secret: started.secret).authenticated == true)
        #expect(
            try await client.authenticateWithQuickConnect(secret: started.secret).accessToken
                == server.library.accessToken)
        let unknown = await jellyfinError { try await client.quickConnectState(secret: "nope") }
        #expect(unknown?.kind == .notFound)
    }

    @Test func quickConnectTimesOut() async throws {
        var library = TestLibrary()
        library.quickConnectPollsBeforeAuthorized = 1_000_000
        let server = try TestServer(library: library)
        defer { server.shutdown() }
        let client = try makeClient(server)
        let error = await jellyfinError { try await client.quickConnect(pollInterval: 0.01, timeout: 0.2) { _ in } }
        #expect(error?.kind == .quickConnectTimedOut)
        #expect(error?.message.contains("nobody approved the Quick Connect code") == true)
    }

    @Test func quickConnectDisabledUsesTheRecordedAnswer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let recorded = try [UInt8](DecodeFixture.data("jellyash/quickconnect-enabled.json"))
        server.inject(
            .body(status: 200, contentType: "application/json", bytes: recorded), path: "/QuickConnect/Enabled",
            count: 2)
        let client = try makeClient(server)
        #expect(try await client.quickConnectEnabled() == false)
        let error = await jellyfinError { try await client.quickConnect(pollInterval: 0.01, timeout: 1) { _ in } }
        #expect(error?.kind == .quickConnectDisabled)
        #expect(server.requests(to: "/QuickConnect/Initiate").isEmpty)
    }

    // MARK: Is it Jellyfin?

    @Test func publicSystemInfoOfTheTestServer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let info = try await makeClient(server).publicSystemInfo()
        #expect(info.id == server.library.serverId)
        #expect(info.version == JellyfinProfile.newest.version)
        #expect(info.serverName == server.library.serverName)
    }

    @Test func publicSystemInfoOfTheRecordedDemoServer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let recorded = try [UInt8](DecodeFixture.data("jellyash/system-info-public.json"))
        server.inject(
            .body(status: 200, contentType: "application/json; charset=utf-8", bytes: recorded),
            path: "/System/Info/Public")
        let info = try await makeClient(server).publicSystemInfo()
        #expect(info.serverName == "Stable Demo")
        #expect(info.version == "10.8.10")
    }

    static let notJellyfinAnswers: [(status: Int, contentType: String, body: String)] = [
        (200, "text/html", "<!DOCTYPE html><html><body>Welcome to nginx!</body></html>"),
        (200, "application/json", "<html>mislabelled</html>"),
        (200, "text/plain", "hello"),
        (200, "application/json", #"{"ServerName":"something"}"#),
        (200, "application/json", #"{"Id":"x","Version":"4.7","ProductName":"Emby Server"}"#),
        (200, "application/json", "[1,2,3]"),
        (404, "text/html", "<h1>Not Found</h1>"),
        (401, "text/plain", ""),
    ]

    @Test(arguments: 0..<SignInTests.notJellyfinAnswers.count)
    func notAJellyfinServer(_ index: Int) async throws {
        let answer = SignInTests.notJellyfinAnswers[index]
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(
            .body(status: answer.status, contentType: answer.contentType, bytes: jsonBytes(answer.body)),
            path: "/System/Info/Public")
        let client = try makeClient(server)
        let error = await jellyfinError { try await client.publicSystemInfo() }
        #expect(error?.kind == .notJellyfin)
        #expect(error?.message.hasPrefix("\(server.baseURL) does not look like a Jellyfin server") == true)
    }

    @Test func unreachableServer() async throws {
        let server = try TestServer()
        let address = server.baseURL
        server.shutdown()
        let client = try JellyfinClient(
            serverURL: address, identity: testIdentity, http: HTTPClient(retryPolicy: .none))
        let error = await jellyfinError { try await client.publicSystemInfo() }
        #expect(error?.kind == .transport)
        #expect(error?.isRetryable == true)
        #expect(error?.message.hasPrefix("could not read the server's public information: ") == true)
    }
}
