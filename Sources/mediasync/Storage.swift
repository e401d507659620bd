import ArgumentParser
import MediaSync

/// `mediasync path`: where a downloaded item's media is, for a player: `mpv "$(mediasync path ID)"`.
struct PathCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path", abstract: "Print the absolute path of a downloaded item's media.")

    @Argument(help: "A Jellyfin item id or a podcast episode id.")
    var id: String

    @Option(help: "The version (media source id).")
    var version: String?

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let index = try rootOptions.openIndex()
            print(try StorageQueries(root: rootOptions.mirrorRoot, index: index).mediaPath(id: id, version: version))
        }
    }
}

/// `mediasync du`: space used per movie, series and podcast, and what is left.
struct DiskUsage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "du", abstract: "Show the space used per movie, series and podcast, and the free space.")

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let usage = try StorageQueries(root: rootOptions.mirrorRoot, index: try rootOptions.openIndex()).usage()
            if json {
                print(try JSONText.encode(usage))
                return
            }
            Table.print(
                header: ["SIZE", "FILES", "TYPE", "TITLE", "ID"],
                rows: usage.entries.map { [ByteCount.format($0.bytes), String($0.files), $0.type, $0.title, $0.id] })
            print("total \(ByteCount.format(usage.totalBytes)), free \(ByteCount.format(usage.freeBytes))")
            if let warning = usage.warning { Console.error("warning: \(warning)") }
        }
    }
}
