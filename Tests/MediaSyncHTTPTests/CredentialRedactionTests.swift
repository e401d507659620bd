import Foundation
import MediaSyncHTTP
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// A server that echoes the credentials of a request in its error body must not get them into an error message
/// (found by `SecretsTests`, where a 500 body repeating the token reached the sync's log lines).
@Suite struct CredentialRedactionTests {
    static let token = "Tk7Q9zXk2LpV4wR8mN3bJ6hG5fD1sA0e"

    @Test func aDownloadErrorDoesNotRepeatTheTokenOfItsAuthorizationHeader() async throws {
        try await withServerAndFolder { server, folder in
            let echo =
                "mediasync request refused: token \(Self.token) (MediaBrowser Token=\"\(Self.token)\") is not valid"
            server.inject(
                .body(status: 500, contentType: "text/plain", bytes: Array(echo.utf8)), path: "/media.bin", count: 10)
            var headers = HTTPHeaders()
            headers.add(
                name: "Authorization",
                value:
                    "MediaBrowser Client=\"mediasync\", Device=\"host\", DeviceId=\"d1\", Version=\"0.1.0\", Token=\"\(Self.token)\""
            )
            let engine = makeEngine(retry: .none)
            let result = await engine.download([
                TransferRequest(
                    id: "m", url: server.baseURL + "/media.bin", destination: folder.file("media.bin"), headers: headers
                )
            ])
            let error = try #require(result.outcomes.first?.error)
            #expect(error.status == 500)
            #expect(!error.description.contains(Self.token))
            #expect(!error.description.contains(String(Self.token.prefix(12))))
            // The rest of the excerpt stays: only the credential is cut out.
            #expect(error.description.contains("mediasync request refused: token <redacted>"))
        }
    }

    /// `TOKEN` in the value stands for the token (Swift Testing prints arguments, and `Scripts/check-secrets.sh`
    /// counts the token in the suite's output).
    @Test(arguments: [
        ("Authorization", "Bearer TOKEN"), ("Authorization", "Basic TOKEN"), ("X-Emby-Token", "TOKEN"),
        ("Cookie", "session=TOKEN; theme=dark"), ("Authorization", "MediaBrowser Client=\"x\", Token=\"TOKEN\""),
    ])
    func anAPIErrorDoesNotRepeatTheCredentials(header: String, template: String) async throws {
        let value = template.replacingOccurrences(of: "TOKEN", with: Self.token)
        let server = try TestServer()
        defer { server.shutdown() }
        server.inject(
            .body(
                status: 400, contentType: "application/json",
                bytes: Array("{\"Message\":\"bad credential \(Self.token)\"}".utf8)),
            path: "/api")
        var headers = HTTPHeaders()
        headers.add(name: header, value: value)
        let error = await #expect(throws: HTTPError.self) {
            try await HTTPClient(retryPolicy: .none).send(HTTPRequest(url: server.baseURL + "/api", headers: headers))
        }
        #expect(error?.status == 400)
        #expect(error?.description.contains(Self.token) == false)
        #expect(error?.description.contains("bad credential <redacted>") == true)
    }
}
