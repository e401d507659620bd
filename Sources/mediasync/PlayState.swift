import ArgumentParser
import Foundation
import MediaSync

/// `mediasync played`: mark an item watched, not watched, or stopped at a position; the next sync sends it.
struct Played: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mark a movie, an episode or a podcast episode played, unplayed, or stopped at a position.",
        discussion: """
            The mark is kept in the mirror's index (it survives a killed process and weeks offline) and sent to the
            Jellyfin server by the next `mediasync sync`, once. Without an item, lists the marks and where each stands.
            """)

    @Argument(help: "The item's id (see `mediasync ls`). Without it, the marks recorded so far are listed.")
    var id: String?

    @Flag(help: "Mark it not watched.")
    var unplayed = false

    @Option(help: "Where playback stopped: 1:02:30, 62:30 or seconds.")
    var position: String?

    @Option(help: "When it happened (ISO 8601, e.g. 2026-11-20T21:30:00Z); default now.")
    var at: String?

    @Flag(help: "Print JSON (with the list).")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func validate() throws {
        if unplayed && position != nil { throw ValidationError("--unplayed and --position exclude each other") }
        if let position, TimeText.position(position) == nil {
            throw ValidationError("\(position.debugDescription) is not a position (examples: 1:02:30, 62:30, 90)")
        }
        if let at, WholeSecondTime.date(at) == nil {
            throw ValidationError("\(at.debugDescription) is not an ISO 8601 time (example: 2026-11-20T21:30:00Z)")
        }
        if id == nil && (unplayed || position != nil || at != nil) {
            throw ValidationError("name the item to mark")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let mirror = try rootOptions.openForReading()
            let book = mirror.playState
            guard let id else {
                let events = try book.events()
                try Table.print(
                    events.map(PlayEventRow.init), json: json, header: ["ITEM", "MARK", "AT", "STATE", "NOTE"]
                ) {
                    events.map { row in
                        let mark =
                            row.kind == .position
                            ? "at \(TimeText.format(ticks: row.positionTicks))" : row.kind.rawValue
                        return [row.itemId, mark, PlayEventRow.time(row.at), row.state.rawValue, row.note ?? ""]
                    }
                }
                return
            }
            let target = try book.target(id, root: mirror.root)
            let time = at.flatMap(WholeSecondTime.date) ?? Date()
            let event: PlayEvent
            if unplayed {
                event = try book.mark(target, .unplayed, at: time)
            } else if let ticks = position.flatMap(TimeText.position) {
                event = try book.mark(target, .position, positionTicks: ticks, at: time)
            } else {
                event = try book.mark(target, .played, at: time)
            }
            let what =
                event.kind == .position
                ? "stopped at \(TimeText.format(ticks: event.positionTicks))" : event.kind.rawValue
            print(
                target.isPodcast
                    ? "Marked podcast episode \(target.id) \(what) (kept here: a podcast has no server to send it to)."
                    : "Marked \(target.id) \(what); `mediasync sync` sends it to the server.")
        }
    }
}

/// One play event as `played --json` prints it.
struct PlayEventRow: Codable {
    var item: String
    var mark: String
    var positionTicks: Int64
    var at: String
    var state: String
    var note: String?

    init(_ event: PlayEvent) {
        item = event.itemId
        mark = event.kind.rawValue
        positionTicks = event.positionTicks
        at = PlayEventRow.time(event.at)
        state = event.state.rawValue
        note = event.note
    }

    static func time(_ date: Date) -> String { WholeSecondTime.string(date) }
}

/// `mediasync play`: play an offline file in mpv and remember where it stopped.
struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a downloaded item in mpv and record where it stopped (played past 90 %).",
        discussion: """
            Starts mpv (the Debian package) with its JSON IPC socket, follows the position, and records it when mpv
            ends: past 90 % of the file counts as played, under 5 % as not started (Jellyfin's MaxResumePct and
            MinResumePct). It resumes where the last `play` or `played --position` left it.
            """)

    @Argument(help: "The item's id (see `mediasync ls`).")
    var id: String

    @Option(help: "The version (media source id) to play; default the first.")
    var version: String?

    @Option(name: .customLong("mpv-option"), help: "An option passed to mpv as it is (repeatable), e.g. --vo=null.")
    var mpvOptions: [String] = []

    @Flag(name: .customLong("from-start"), help: "Start at the beginning, not where it last stopped.")
    var fromStart = false

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            guard let player = MpvPlayer.locate() else {
                throw SyncError.configuration(
                    "mpv is not installed (Debian: `apt install mpv`); `mediasync played` records a mark by hand")
            }
            let mirror = try rootOptions.openForReading()
            let book = mirror.playState
            let target = try book.target(id, root: mirror.root)
            let path =
                if let version {
                    try mirror.storage.mediaPath(id: target.id, version: version)
                } else {
                    target.mediaPaths.first ?? ""
                }
            let start = fromStart ? nil : try book.resumePosition(target)
            let session = try player.play(path: path, start: start, arguments: mpvOptions)
            guard let position = session.position else {
                Console.error("mediasync: mpv reported no position (exit status \(session.status)); nothing recorded")
                throw ExitCodes.partialFailure
            }
            if session.status < 0 {
                Console.error("mpv was killed (signal \(-session.status)); recording where it last was")
            }
            let event = try book.stopped(target, position: position, runtime: session.duration)
            switch event?.kind {
            case .played?: print("Played \(target.id) to the end; recorded as played.")
            case .position?: print("Stopped \(target.id) at \(TimeText.format(ticks: position)); recorded.")
            default:
                let start = target.media == .audiobook ? "in its first 5 minutes" : "near the start (under 5 %)"
                print("Stopped \(target.id) \(start); nothing recorded.")
            }
        }
    }
}

/// `mediasync config`: the mirror's stored settings.
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or change the mirror's stored settings (budget: the storage budget `sync` uses).",
        subcommands: [SetSetting.self, GetSetting.self, UnsetSetting.self])

    enum Key: String, ExpressibleByArgument, CaseIterable {
        case budget
    }

    struct SetSetting: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Store a setting: `config set budget 200G`.")
        @Argument(help: "The setting: budget.") var key: Key
        @Argument(help: "Its value (a size for budget: 200G, 1.5T, 500MB).") var value: String
        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                try StoredBudget.write(value, index: rootOptions.openForReading().index)
                print("budget set to \(value): `mediasync sync` fills up to it unless given --budget.")
            }
        }
    }

    struct GetSetting: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Print a setting (nothing when unset).")
        @Argument(help: "The setting: budget.") var key: Key
        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                if let bytes = try StoredBudget.read(rootOptions.openForReading().index) {
                    print(ByteCount.format(bytes))
                }
            }
        }
    }

    struct UnsetSetting: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unset", abstract: "Remove a setting.")
        @Argument(help: "The setting: budget.") var key: Key
        @OptionGroup var rootOptions: RootOptions

        func run() async throws {
            try await reportingErrors {
                try StoredBudget.write(nil, index: rootOptions.openForReading().index)
                print("budget removed: `mediasync sync` downloads everything selected.")
            }
        }
    }
}
