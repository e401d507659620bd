import ArgumentParser
import Foundation
import MediaSync

#if canImport(Glibc)
    import Glibc
#endif

/// `mediasync export`: the mirror as a plain tree of human names on a USB stick, an SD card or another folder.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Export the mirror to a player-friendly tree (Movies/, Shows/, Music/, Audiobooks/, Books/, Podcasts/ with "
            + "real names), incrementally.",
        discussion: """
            Built from the index and the metadata.json files only (no network). Names are safe on FAT32, exFAT and \
            NTFS; files over 4 GiB - 1 are skipped on FAT32. A manifest in DEST (.mediasync-export.json) records what \
            the export wrote: a second export copies nothing unchanged, and files it did not write are never \
            replaced or deleted.
            """)

    enum Layout: String, ExpressibleByArgument, CaseIterable {
        case plain
    }

    @Argument(help: "The destination folder (created if missing).")
    var destination: String

    @Option(help: "The layout: plain (Movies/Title (Year)/…, Shows/Series (Year)/Season 01/…, Podcasts/Show/…).")
    var layout: Layout = .plain

    @Option(
        help: ArgumentHelp(
            "Export only Jellyfin's movies and shows (media), its music, its audiobooks and books (books), or the "
                + "podcasts."))
    var only: ExportScope?

    @Flag(help: "Also write a relative-path .m3u8 playlist per podcast and per season, in episode order.")
    var playlists = false

    @Flag(help: "Delete exported files whose source left the mirror.")
    var delete = false

    @Option(name: .customLong("max-delete"), help: "Delete nothing when more than N files would be deleted.")
    var maxDelete: Int?

    @Flag(name: .customLong("dry-run"), help: "Print what would be done and change nothing.")
    var dryRun = false

    @Flag(help: "Always copy the bytes (no hardlink or reflink to the mirror's files).")
    var copy = false

    @Flag(
        help:
            "Skip files over 4 GiB - 1 even when the destination is not FAT32 (a folder to be copied to a FAT32 stick later)."
    )
    var fat32 = false

    @Option(help: "Files written at the same time (default 2; 1 on FAT32 and exFAT).")
    var concurrency: Int?

    @Flag(help: "Print the plan (with --dry-run) or the result as one JSON document.")
    var json = false

    @Flag(help: "Print only failures.")
    var quiet = false

    @OptionGroup var rootOptions: RootOptions

    func validate() throws {
        if let maxDelete, maxDelete < 0 { throw ValidationError("--max-delete takes a number of files: 0 or more") }
        if let concurrency, !(1...64).contains(concurrency) {
            throw ValidationError("--concurrency takes a number of files from 1 to 64")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let mirror = try Mirror.open(rootOptions.mirrorRoot)
            let console = Console(quiet: quiet || json)
            let terminal = console.showsProgress
            var progress: (@Sendable (ExportProgress) -> Void)?
            if terminal { progress = { @Sendable update in console.show(export: update) } }
            var events: (@Sendable (ExportEvent) -> Void)?
            if !quiet && !json {
                events = { @Sendable event in
                    if terminal { console.clearLine() }
                    let detail = event.detail.map { " (\($0))" } ?? ""
                    Console.error("\(event.action) \(event.path)\(detail)")
                }
            }
            let result = try MirrorExport(root: mirror.root, index: mirror.index, destination: destination).run(
                options: ExportOptions(
                    only: only, playlists: playlists, delete: delete, maxDelete: maxDelete, dryRun: dryRun,
                    copyOnly: copy, assumeFAT32: fat32, concurrency: concurrency),
                progress: progress, events: events)
            console.clearLine()
            withExtendedLifetime(mirror) {}
            if json {
                Swift.print(try JSONText.encode(result))
            } else {
                print(result: result)
            }
            if let stopped = result.stopped {
                if !json { Console.error("mediasync: \(stopped)") }
                throw ExitCodes.fatal
            }
            if result.hasFailures { throw ExitCodes.partialFailure }
        }
    }

    private func print(result: ExportResult) {
        for line in result.mirrorProblems { Console.error("mirror: \(line)") }
        for issue in result.skipped { Console.error("skipped: \(issue.path): \(issue.reason)") }
        for issue in result.forgotten { Console.error("not tracked any more: \(issue.path): \(issue.reason)") }
        if let aborted = result.deletionAborted { Console.error("failed: \(aborted)") }
        if result.dryRun {
            for step in result.planned {
                let detail = [step.from.map { "from \($0)" }, step.bytes.map { ByteCount.format($0) }, step.reason]
                    .compactMap { $0 }.joined(separator: ", ")
                Swift.print("would \(step.action) \(step.path)\(detail.isEmpty ? "" : " (\(detail))")")
            }
            Swift.print(
                "Dry run: \(result.planned.count) changes planned, \(result.unchanged) files unchanged, "
                    + "\(result.skipped.count) skipped; nothing changed.")
            return
        }
        guard !quiet else { return }
        if result.changedNothing && result.failed.isEmpty && result.stopped == nil {
            Swift.print("Up to date: \(result.unchanged) files in \(result.destination), nothing to copy.")
        } else {
            let methods = result.methods.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(
                separator: ", ")
            Swift.print(
                "Exported \(result.exported.count) files (\(ByteCount.format(result.bytesExported))\(methods.isEmpty ? "" : "; \(methods)")), "
                    + "moved \(result.moved.count), deleted \(result.deleted.count), \(result.unchanged) unchanged, "
                    + "\(result.skipped.count) skipped, \(result.failed.count) failed.")
        }
        if !result.leftover.isEmpty {
            Swift.print(
                "\(result.leftover.count) exported files' sources left the mirror; `mediasync export --delete` removes them."
            )
        }
    }
}

extension Console {
    /// The live line of an export on a terminal.
    func show(export progress: ExportProgress) {
        // Two updates a file, from two writers at once: drawn at most ten times a second.
        guard showsProgress, isDue(final: progress.filesDone == progress.filesTotal) else { return }
        let fraction = progress.bytesTotal > 0 ? Double(progress.bytesDone) / Double(progress.bytesTotal) : 1
        let line = String(
            format: "%3.0f%%  %d/%d files  %@ of %@", fraction * 100, progress.filesDone, progress.filesTotal,
            ByteCount.format(progress.bytesDone), ByteCount.format(progress.bytesTotal))
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }
}
extension ExportScope: ExpressibleByArgument {}
