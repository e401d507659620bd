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

/// `mediasync verify`: every indexed file exists with its recorded size.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that every indexed file exists with its recorded size; --fix marks the broken ones for the next sync.")

    @Flag(help: "Forget the broken files in the index, so the next sync downloads them again.")
    var fix = false

    @Flag(help: "Print JSON instead of lines.")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let problems = try StorageQueries(root: rootOptions.mirrorRoot, index: try rootOptions.openIndex())
                .verify(fix: fix)
            if json {
                print(try JSONText.encode(problems))
            } else {
                for problem in problems {
                    print("\(problem.problem): \(problem.path) (recorded \(problem.expectedBytes) bytes)")
                }
                print(
                    problems.isEmpty
                        ? "All indexed files are in place."
                        : "\(problems.count) broken\(fix ? "; they will be downloaded again by the next sync" : "; run with --fix to fetch them again").")
            }
            if !problems.isEmpty && !fix { throw ExitCodes.partialFailure }
        }
    }
}
