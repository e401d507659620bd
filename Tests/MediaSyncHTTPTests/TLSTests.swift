import Foundation
import MediaSyncHTTP
import MediaSyncTestSupport
import Testing

/// TLS verification is on by default: a self-signed server on 127.0.0.1 is refused with a `.tls` error unless
/// its CA file is given or verification is turned off explicitly, so no credential goes to a server nobody
/// vouched for. The server is `openssl s_server` with a certificate made at test time.
@Suite(
    .enabled(
        if: TLSTestServer.isAvailable,
        "openssl is not installed (Scripts/install-deps.sh installs it): TLS tests skipped"))
struct TLSTests {
    static let body = testBytes(50_000, seed: 41)

    @Test func theHTTPClientRefusesASelfSignedServerByDefault() async throws {
        let server = try TLSTestServer(files: ["file.bin": Self.body])
        defer { server.shutdown() }
        let error = await #expect(throws: HTTPError.self) {
            try await HTTPClient(retryPolicy: quickRetries).send(HTTPRequest(url: server.baseURL + "/file.bin"))
        }
        #expect(error?.kind == .tls)
        #expect(error?.isRetryable == false)
        #expect(error?.description.contains("TLS verification failed") == true)
        #expect(error?.description.contains("--ca-file") == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func theHTTPClientTrustsTheServerWithItsCAFile() async throws {
        let server = try TLSTestServer(files: ["file.bin": Self.body])
        defer { server.shutdown() }
        let client = HTTPClient(
            configuration: HTTPClientConfiguration(caFile: server.certificatePath), retryPolicy: quickRetries)
        let response = try await client.send(HTTPRequest(url: server.baseURL + "/file.bin"))
        #expect(response.status == 200)
        #expect(response.body == Self.body)
    }

    @Test func theHTTPClientConnectsWhenVerificationIsTurnedOff() async throws {
        let server = try TLSTestServer(files: ["file.bin": Self.body])
        defer { server.shutdown() }
        let client = HTTPClient(configuration: HTTPClientConfiguration(insecure: true), retryPolicy: quickRetries)
        let response = try await client.send(HTTPRequest(url: server.baseURL + "/file.bin"))
        #expect(response.body == Self.body)
    }

    @Test func aCAFileOfAnotherServerIsNoTrust() async throws {
        let server = try TLSTestServer(files: ["file.bin": Self.body])
        defer { server.shutdown() }
        let other = try TLSTestServer(files: [:])
        defer { other.shutdown() }
        let client = HTTPClient(
            configuration: HTTPClientConfiguration(caFile: other.certificatePath), retryPolicy: quickRetries)
        let error = await #expect(throws: HTTPError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/file.bin"))
        }
        #expect(error?.kind == .tls)
    }

    @Test func theTransferEngineRefusesByDefaultAndDownloadsWithTheCAOrInsecure() async throws {
        let server = try TLSTestServer(files: ["file.bin": Self.body])
        defer { server.shutdown() }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let request = { (name: String) in
            TransferRequest(id: name, url: server.baseURL + "/file.bin", destination: folder.file(name))
        }
        let refused = await makeEngine().download([request("default.bin")])
        #expect(refused.outcomes.first?.error?.kind == .tls)
        #expect(refused.outcomes.first?.error?.description.contains("TLS verification failed") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.file("default.bin")))

        let trusted = await makeEngine(configuration: HTTPClientConfiguration(caFile: server.certificatePath))
            .download([request("trusted.bin")])
        #expect(trusted.allSucceeded)
        #expect(readBytes(folder.file("trusted.bin")) == Self.body)

        let insecure = await makeEngine(configuration: HTTPClientConfiguration(insecure: true)).download([
            request("insecure.bin")
        ])
        #expect(insecure.allSucceeded)
        #expect(readBytes(folder.file("insecure.bin")) == Self.body)
    }
}
