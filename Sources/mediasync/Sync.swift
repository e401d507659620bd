import ArgumentParser
import Foundation
import MediaSync

/// `mediasync sync`: bring the mirror in line with the selections.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download what is new or changed for the selections, write metadata, and report what is left over.")

    @Flag(help: "Delete files that nothing selected wants any more.")
    var delete = false

    @Flag(help: "Print only failures.")
    var quiet = false

    @Option(help: "Sync only Jellyfin selections (media) or only podcasts.")
    var only: MirrorSync.Scope?

    @Flag(name: .customLong("dry-run"), help: "Print what would be done and change nothing.")
    var dryRun = false

    @Option(name: .customLong("max-delete"), help: "Delete nothing when more than N files would be deleted.")
    var maxDelete: Int?

    @Option(
        help: ArgumentHelp(
            "Download only up to this much held in the mirror (200G, 1.5T), most wanted first; the rest waits. "
                + "Default: the stored budget (`mediasync config set budget`). Deletes nothing by itself."))
    var budget: String?

    @Flag(name: .customLong("no-budget"), help: "Ignore the stored budget for this run.")
    var noBudget = false

    @Option(help: "Server transcodes fetched at once (default 1: one encoding at a time on the server).")
    var transcodes = 1

    @Flag(help: "Print the plan (with --dry-run) or the result as one JSON document.")
    var json = false

    @Option(name: .customLong("log-format"), help: "How progress lines on standard error look: text or json.")
    var logFormat: LogFormat = .text

    @OptionGroup var rootOptions: RootOptions
    @OptionGroup var transfer: TransferFlags

    func validate() throws {
        if let maxDelete, maxDelete < 0 { throw ValidationError("--max-delete takes a number of files: 0 or more") }
        if let budget, ByteCount.parse(budget) == nil {
            throw ValidationError("\(budget.debugDescription) is not a size (examples: 200G, 1.5T, 500MB)")
        }
        if budget != nil && noBudget { throw ValidationError("--budget and --no-budget exclude each other") }
        if transcodes < 1 || transcodes > 8 { throw ValidationError("--transcodes takes 1 to 8") }
    }

    func run() async throws {
        try await reportingErrors {
            let mirror = try Mirror.open(rootOptions.mirrorRoot, durable: transfer.options.durable, planOnly: dryRun)
            let config = ConfigDirectory.resolve()
            let session =
                try Credentials.load(from: config) == nil
                ? nil : try Session.open(config: config, configuration: transfer.httpConfiguration)
            let console = Console(quiet: quiet)
            let sync = mirror.sync(
                session: session, configuration: transfer.httpConfiguration, transferOptions: transfer.options,
                feedCredentials: FeedCredentialStore(config: config))
            var progress: (@Sendable (BatchProgress) -> Void)?
            if console.showsProgress { progress = { @Sendable update in console.show(update) } }
            let log = EventLog(format: logFormat, quiet: quiet || json, console: console)
            let limit = noBudget ? nil : try budget.flatMap(ByteCount.parse) ?? StoredBudget.read(mirror.index)
            let report = try await sync.run(
                options: SyncOptions(
                    delete: delete, dryRun: dryRun, maxDelete: maxDelete, budget: limit, transcodes: transcodes),
                only: only,
                progress: progress,
                events: { log.record($0) })
            console.clearLine()
            if json {
                Swift.print(try JSONText.encode(report))
            } else {
                print(report: report)
            }
            if report.needsSignIn { throw ExitCodes.authenticationNeeded }
            if report.hasEssentialFailures { throw ExitCodes.partialFailure }
        }
    }

    private func print(report: SyncReport) {
        for line in report.sourceErrors { Console.error("failed: \(line)") }
        if let aborted = report.deletionAborted { Console.error("failed: \(aborted)") }
        for line in report.playState { Console.error("play state: \(line)") }
        for line in report.waiting { Console.error("waiting: \(line)") }
        if report.dryRun {
            for step in report.planned {
                let detail = [step.reason, step.from.map { "from \($0)" }, step.bytes.map { ByteCount.format($0) }]
                    .compactMap { $0 }.joined(separator: ", ")
                Swift.print("would \(step.action) \(step.path)\(detail.isEmpty ? "" : " (\(detail))")")
            }
            if !report.nothingToSync.isEmpty && report.planned.isEmpty { printNothingToSync(report.nothingToSync) }
            Swift.print(
                "Dry run: \(report.planned.count) changes planned, \(report.extraneous.count) files left over; nothing changed."
            )
            return
        }
        for line in report.rejected { Console.error("rejected: \(line)") }
        for line in report.gone { Console.error("gone: \(line)") }
        for line in report.keptUnconfirmed { Console.error("kept: \(line)") }
        for line in report.restarted { Console.error("restarted: \(line)") }
        for line in report.pathsForgotten {
            Console.error("forgotten: the index had \(line), which is not under this root")
        }
        guard !quiet else { return }
        for line in report.migrated { Swift.print("legacy layout: \(line)") }
        let repairs = report.pathsRepaired + report.repaired.count
        if repairs > 0 {
            Swift.print(
                "Repaired \(repairs) stale or absolute paths in the index to where the files are: "
                    + "nothing downloaded for them.")
        }
        for line in report.empty { Swift.print(line) }
        if !report.nothingToSync.isEmpty && report.changedNothing && report.failed.isEmpty {
            printNothingToSync(report.nothingToSync)
        } else if report.changedNothing && report.failed.isEmpty && report.sourceErrors.isEmpty {
            Swift.print("Up to date: \(CountText.of(report.unchanged, "file")), nothing to download.")
        } else {
            Swift.print(
                "Downloaded \(CountText.of(report.downloaded.count, "file")) (\(ByteCount.format(report.bytesDownloaded))), "
                    + "wrote \(CountText.of(report.written.count, "metadata file")), moved \(report.moved.count), "
                    + "deleted \(report.deleted.count), \(report.failed.count) failed.")
        }
        if report.playStateSent > 0 {
            Swift.print("Sent the play state of \(report.playStateSent) items to the server.")
        }
        if !report.waiting.isEmpty {
            Swift.print(
                "\(report.waiting.count) items (\(ByteCount.format(report.waitingBytes))) wait for space within the budget."
            )
        }
        if !report.extraneous.isEmpty {
            Swift.print(
                "\(report.extraneous.count) files are no longer selected; `mediasync sync --delete` removes them.")
        }
    }

    /// What a mirror with nothing to sync lacks, and the command that adds each.
    private func printNothingToSync(_ missing: [SyncReport.Missing]) {
        let what = missing.map { missing -> String in
            switch missing {
            case .signIn: return "not signed in to a Jellyfin server"
            case .selections: return "nothing selected"
            case .podcasts: return "no podcasts"
            }
        }
        Swift.print("Nothing to sync: \(what.joined(separator: ", ")). To add something:")
        for missing in missing {
            switch missing {
            case .signIn:
                Swift.print("  mediasync login URL --username NAME   sign in to your Jellyfin server")
            case .selections:
                Swift.print("  mediasync browse                      find movies, series, albums… and their ids")
                Swift.print("  mediasync select KIND ID              keep one offline (mediasync help select)")
            case .podcasts:
                Swift.print("  mediasync podcast add FEED_URL        subscribe to a podcast")
            }
        }
    }
}

extension MirrorSync.Scope: ExpressibleByArgument {}

extension LogFormat: ExpressibleByArgument {}
