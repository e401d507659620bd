import Foundation
import MediaSyncTestServer
import Testing

/// `mediasync podcast account` through the binary: the password goes to the account file (0600) only, a refused
/// one is one line and stores nothing, and a sync whose account part fails still ends with exit 3.
@Suite struct PodcastAccountCommandTests {
    static let password = "Pw-for-the-gpodder-account-9X"

    @Test func linkShowSyncAndRemoveWithoutEverPrintingThePassword() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        sandbox.server.gpodder.addUser("me", password: Self.password)
        var outputs: [CommandRunner.Output] = []
        let accountFile = sandbox.folder + "/config/podcast-account.json"

        let refused = try await sandbox.run(
            ["podcast", "account", sandbox.server.baseURL, "--username", "me", "--password-stdin", "--device", "nas"],
            input: "not-it\n")
        outputs.append(refused)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("refused the user name or password"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: accountFile))

        let link = try await sandbox.run(
            [
                "podcast", "account", sandbox.server.baseURL, "--username", "me", "--password-stdin", "--device",
                "nas", "--sync-with", "phone",
            ], input: Self.password + "\n")
        outputs.append(link)
        #expect(link.status == 0, "\(link.stderr)")
        #expect(link.stdout.contains("as device nas, sharing with phone"), "\(link.stdout)")
        let attributes = try FileManager.default.attributesOfItem(atPath: accountFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let show = try await sandbox.run(["podcast", "account"])
        outputs.append(show)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("Device: nas") && show.stdout.contains("Shares with: phone"), "\(show.stdout)")

        let sync = try await sandbox.run(["sync"])
        outputs.append(sync)
        #expect(sync.status == 0, "\(sync.stderr)")
        let shown = try await sandbox.run(["podcast", "account"])
        outputs.append(shown)
        #expect(!shown.stdout.contains("Last exchange: never"), "\(shown.stdout)")

        sandbox.server.inject(.status(503), path: "/api/2/auth/me/login.json")
        let down = try await sandbox.run(["sync"])
        outputs.append(down)
        #expect(down.status == 3, "\(down.stderr)")
        #expect(down.stderr.contains("failed: podcast account"), "\(down.stderr)")

        let remove = try await sandbox.run(["podcast", "account", "--remove"])
        outputs.append(remove)
        #expect(remove.status == 0 && remove.stdout.contains("Forgot the podcast account"), "\(remove.stdout)")
        #expect(!FileManager.default.fileExists(atPath: accountFile))

        for output in outputs {
            #expect(!output.stdout.contains(Self.password) && !output.stderr.contains(Self.password))
        }
    }
}
