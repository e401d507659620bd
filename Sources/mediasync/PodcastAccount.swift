import ArgumentParser
import Foundation
import MediaSync

extension Podcast {
    /// `mediasync podcast account`: the gPodder-compatible account subscriptions and played state are shared
    /// through.
    struct Account: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "account",
            abstract: "Share subscriptions and played state with a gpodder.net-compatible account.",
            discussion: """
                With a URL: signs in, registers this mirror as a device, and stores the account (mode 0600 in the \
                configuration folder). Without one: shows the account. `mediasync sync` then exchanges \
                subscriptions and episode actions both ways.
                """)

        @Argument(help: "The server's URL (gpodder.net, a mygpo copy, or a Nextcloud with gPodder Sync).")
        var server: String?

        @Option(help: "The account's user name.")
        var username: String?

        @Flag(help: "Read the password from the first line of standard input.")
        var passwordStdin = false

        @Flag(help: "The server is a Nextcloud with the gPodder Sync app (no devices or sync groups).")
        var nextcloud = false

        @Option(help: "This mirror's device id on the server (mygpo).")
        var device = "mediasync"

        @Option(
            name: .customLong("sync-with"),
            help: "Share subscriptions with this device (repeatable); else the group the device is already in.")
        var syncWith: [String] = []

        @Flag(help: "Forget the account (nothing local changes).")
        var remove = false

        @OptionGroup var rootOptions: RootOptions

        func validate() throws {
            if remove, server != nil { throw ValidationError("--remove takes no URL") }
            if server != nil {
                guard username != nil else { throw ValidationError("a URL needs --username") }
                guard passwordStdin else { throw ValidationError("a URL needs --password-stdin") }
            } else if username != nil || passwordStdin || nextcloud || !syncWith.isEmpty {
                throw ValidationError("--username, --password-stdin, --nextcloud and --sync-with go with a URL")
            }
            if nextcloud, !syncWith.isEmpty { throw ValidationError("Nextcloud has no devices to --sync-with") }
            guard !device.isEmpty, device.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
                throw ValidationError("--device takes letters, digits, '-', '_' and '.'")
            }
        }

        func run() async throws {
            try await reportingErrors {
                let link = PodcastAccountLink(config: ConfigDirectory.resolve())
                if remove {
                    let mirror = try? rootOptions.openForReading()
                    let removed = try link.remove(index: mirror?.index)
                    print(removed ? "Forgot the podcast account." : "No podcast account was linked.")
                    return
                }
                guard let server, let username else {
                    try await show(link)
                    return
                }
                let password = readLine(strippingNewline: true) ?? ""
                let account = MediaSync.PodcastAccount(
                    server: server, kind: nextcloud ? .nextcloud : .mygpo, username: username, password: password,
                    device: device, syncWith: syncWith)
                let group = try await link.link(account)
                var line = "Linked \(account)"
                if !nextcloud {
                    line += " as device \(account.device)"
                    line += group.isEmpty ? " (in no sync group)" : ", sharing with \(group.joined(separator: ", "))"
                }
                print(line + ". `mediasync sync` exchanges subscriptions and episode actions.")
            }
        }

        private func show(_ link: PodcastAccountLink) async throws {
            guard let account = try link.account() else {
                print("No podcast account is linked (see `mediasync podcast account --help`).")
                return
            }
            print("Account: \(account)")
            if account.kind == .mygpo {
                print("Device: \(account.device)")
                do {
                    let group = try await link.group(of: account)
                    print("Shares with: \(group.isEmpty ? "no other device" : group.joined(separator: ", "))")
                } catch {
                    print("Shares with: unknown (\(errorMessage(for: error)))")
                }
            }
            if let index = try? rootOptions.openForReading().index {
                let status = try link.status(index: index)
                print("Last exchange: \(status.lastExchange ?? "never")")
                print("Actions waiting to be sent: \(status.waiting); sent: \(status.sent)")
            }
        }
    }
}
