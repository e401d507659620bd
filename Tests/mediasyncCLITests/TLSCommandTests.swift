import Foundation
import MediaSyncTestSupport
import Testing

/// The CLI refuses a self-signed HTTPS server by default with one clear line, and reaches it with `--ca-file` or
/// `--insecure`. The server is `openssl s_server` with a certificate made at test time.
@Suite(
    .enabled(
        if: TLSTestServer.isAvailable,
        "openssl is not installed (Scripts/install-deps.sh installs it): TLS tests skipped"))
struct TLSCommandTests {
    static let body = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    @Test func getRefusesASelfSignedServerUnlessGivenItsCAOrInsecure() async throws {
        let server = try TLSTestServer(files: ["episode.mp3": Self.body])
        defer { server.shutdown() }
        let out = try TemporaryDirectory()
        defer { out.remove() }
        let url = server.baseURL + "/episode.mp3"

        let refused = try await CommandRunner.run(["get", url, "--output-dir", out.file("default"), "--attempts", "1"])
        #expect(refused.status != 0)
        let failures = refused.stderr.split(separator: "\n").filter { $0.contains("failed") && $0.contains("TLS") }
        #expect(failures.count == 1, "one clear line: \(refused.stderr)")
        #expect(failures.first?.contains("TLS verification failed") == true)
        #expect(failures.first?.contains("--ca-file") == true)
        #expect(!FileManager.default.fileExists(atPath: out.file("default/episode.mp3")))

        let trusted = try await CommandRunner.run(
            ["get", url, "--output-dir", out.file("trusted"), "--ca-file", server.certificatePath])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(FileManager.default.contents(atPath: out.file("trusted/episode.mp3")) == Data(Self.body))

        let insecure = try await CommandRunner.run(["get", url, "--output-dir", out.file("insecure"), "--insecure"])
        #expect(insecure.status == 0, "\(insecure.stderr)")
        #expect(FileManager.default.contents(atPath: out.file("insecure/episode.mp3")) == Data(Self.body))
    }

    @Test func loginRefusesASelfSignedServerWithOneLine() async throws {
        let server = try TLSTestServer(files: [:])
        defer { server.shutdown() }
        let config = try TemporaryDirectory()
        defer { config.remove() }
        let environment = ["MEDIASYNC_CONFIG_DIR": config.path, "MEDIASYNC_API_KEY": ""]
        let refused = try await CommandRunner.run(
            ["login", server.baseURL, "--username", "demo", "--password-stdin"], environment: environment, input: "pw\n"
        )
        #expect(refused.status == 1)
        let lines = refused.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(refused.stderr)")
        #expect(lines.first?.hasPrefix("mediasync: ") == true)
        #expect(lines.first?.contains("TLS") == true)
        #expect(!FileManager.default.fileExists(atPath: config.file("credentials.json")))

        // With the CA the handshake succeeds; the failure is then that this server is not Jellyfin.
        let trusted = try await CommandRunner.run(
            ["login", server.baseURL, "--username", "demo", "--password-stdin", "--ca-file", server.certificatePath],
            environment: environment, input: "pw\n")
        #expect(trusted.status != 0)
        #expect(!trusted.stderr.contains("TLS"), "\(trusted.stderr)")
        #expect(!trusted.stderr.isEmpty)
    }
}
