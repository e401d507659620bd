import ArgumentParser
import Foundation
import MediaSync

/// `mediasync podcast …`: subscriptions, OPML, and what mediasync reads in a feed.
struct Podcast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Subscribe to podcast feeds; `mediasync sync` downloads their new episodes.",
        subcommands: [Add.self, Import.self, List.self, Export.self, Remove.self, Parse.self, Account.self])

    /// How many episodes a subscription keeps.
    struct RetentionOptions: ParsableArguments {
        @Option(help: "Keep the newest N episodes (default for new subscriptions: 3).")
        var keep: Int?

        @Option(help: "Keep the episodes published on or after this date (YYYY-MM-DD).")
        var since: String?

        @Flag(help: "Keep every episode, the whole back catalogue.")
        var all = false

        func validate() throws {
            guard [keep != nil, since != nil, all].filter({ $0 }).count <= 1 else {
                throw ValidationError("choose one of --keep, --since and --all")
            }
            if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
            if let since, Podcast.RetentionOptions.parseDate(since) == nil {
                throw ValidationError("--since \(since) is not a date such as 2024-01-31")
            }
        }

        var retention: Retention {
            if all { return .all }
            if let keep { return .newest(keep) }
            if let since, let date = Podcast.RetentionOptions.parseDate(since) { return .since(date) }
            return .defaultForNewSubscriptions
        }

        static func parseDate(_ text: String) -> Double? {
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
            var components = DateComponents()
            (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
            return calendar.date(from: components)?.timeIntervalSince1970
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Subscribe to a feed (fetches and parses it once).")

        @Argument(help: "The feed's URL (a `user:pass@` in it is moved into the credentials store).")
        var url: String

        @Option(help: "The user name of a private feed (HTTP Basic or Digest authentication).")
        var username: String?

        @Flag(help: "Read the private feed's password from the first line of standard input.")
        var passwordStdin = false

        @Flag(
            name: .customLong("delete-played"),
            help: ArgumentHelp(
                "Played episodes leave by themselves (without --delete) once the grace period (AFTER, default 1d) "
                    + "has passed. Also changes a subscription that exists."))
        var deletePlayed = false

        @Argument(help: "With --delete-played: how long after an episode was played it leaves (0, 12h, 1d, 2w).")
        var after: String?

        @OptionGroup var retention: RetentionOptions
        @OptionGroup var rootOptions: RootOptions

        func validate() throws {
            if let after {
                guard deletePlayed else { throw ValidationError("unexpected argument \(after.debugDescription)") }
                guard TimeText.duration(after) != nil else {
                    throw ValidationError("\(after.debugDescription) is not a grace period (examples: 0, 12h, 1d, 2w)")
                }
            }
            if passwordStdin, username == nil { throw ValidationError("--password-stdin needs --username") }
            if username != nil, !passwordStdin { throw ValidationError("--username needs --password-stdin") }
        }

        func run() async throws {
            try await reportingErrors {
                var credentials: HTTPCredentials?
                if let username {
                    let password = readLine(strippingNewline: true) ?? ""
                    credentials = HTTPCredentials(username: username, password: password)
                }
                let index = try rootOptions.openForReading().index
                let subscription = try await Subscriptions(index: index, config: ConfigDirectory.resolve()).add(
                    url: url, retention: retention.retention, credentials: credentials,
                    deletePlayedAfter: deletePlayed ? after.flatMap(TimeText.duration) ?? 86_400 : nil)
                print(
                    "Subscribed to \(subscription.title ?? subscription.feedURL) (\(subscription.id)). Run `mediasync sync` to download episodes."
                )
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Subscribe to every feed of an OPML file.")

        @Argument(help: "The OPML file (from another podcast app).")
        var file: String

        @OptionGroup var retention: RetentionOptions
        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw ValidationError("cannot read \(file)")
                }
                let outlines = try Subscriptions.outlines(ofOPML: [UInt8](data))
                let subscriptions = Subscriptions(
                    index: try rootOptions.openForReading().index, config: ConfigDirectory.resolve())
                var failures = 0
                for outline in outlines {
                    do {
                        let subscription = try await subscriptions.add(
                            url: outline.feedURL, retention: retention.retention)
                        print("Subscribed to \(subscription.title ?? outline.title ?? subscription.feedURL).")
                    } catch {
                        failures += 1
                        let url = FeedCredentialStore.splitUserInfo(outline.feedURL).url
                        Console.error("failed: \(url): \(errorMessage(for: error))")
                    }
                }
                print("\(outlines.count - failures) of \(outlines.count) feeds subscribed.")
                if failures > 0 { throw failures == outlines.count ? ExitCodes.fatal : ExitCodes.partialFailure }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the subscriptions.")

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                let subscriptions = try rootOptions.openForReading().index.subscriptions()
                try Table.print(subscriptions, json: json, header: ["ID", "TITLE", "KEEP", "FEED"]) {
                    subscriptions.map { [$0.id, $0.title ?? "", Podcast.describe($0.retention), $0.feedURL] }
                }
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the subscriptions as OPML.")

        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                let subscriptions = try rootOptions.openForReading().index.subscriptions()
                print(Subscriptions.opml(subscriptions), terminator: "")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unsubscribe. The episodes stay until `mediasync sync --delete`.")

        @Argument(help: "The podcast's id or feed URL.")
        var podcast: String

        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                let index = try rootOptions.openForReading().index
                guard let subscription = try index.subscription(matching: podcast),
                    try index.unsubscribe(id: subscription.id)
                else {
                    throw SyncError.notFound("no subscription \(podcast) (see `mediasync podcast list`)")
                }
                try FeedCredentialStore(config: ConfigDirectory.resolve()).remove(podcastId: subscription.id)
                print("Unsubscribed from \(subscription.title ?? subscription.feedURL).")
            }
        }
    }

    struct Parse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show what mediasync reads in a feed file or URL.")

        @Argument(help: "A feed file or an http(s) URL.")
        var source: String

        @Option(name: .customLong("base-url"), help: "Resolve relative links against this URL (for a file).")
        var baseURL: String?

        @Flag(help: "Print JSON (the default and only format).")
        var json = false

        func run() async throws {
            try await reportingErrors {
                if source.lowercased().hasPrefix("http://") || source.lowercased().hasPrefix("https://") {
                    try await FeedInspection.write(url: source, baseURL: baseURL, to: STDOUT_FILENO)
                } else {
                    // Streamed: the file is read in chunks and each episode written as soon as it is parsed.
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory),
                        !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: source)
                    else {
                        throw ValidationError("cannot read \(source)")
                    }
                    try FeedInspection.write(file: source, baseURL: baseURL, to: STDOUT_FILENO)
                }
            }
        }
    }

    static func describe(_ retention: Retention) -> String {
        switch retention {
        case .all: return "all"
        case .newest(let count): return "newest \(count)"
        case .since(let date):
            return "since " + String(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: date)).prefix(10))
        }
    }
}
