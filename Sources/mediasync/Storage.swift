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
            print(try rootOptions.openForReading().storage.mediaPath(id: id, version: version))
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
            let usage = try rootOptions.openForReading().storage.usage()
            try Table.print(usage, json: json, header: ["SIZE", "FILES", "TYPE", "TITLE", "ID"]) {
                usage.entries.map { [ByteCount.format($0.bytes), String($0.files), $0.type, $0.title, $0.id] }
            }
            guard !json else { return }
            print("total \(ByteCount.format(usage.totalBytes)), free \(ByteCount.format(usage.freeBytes))")
            if let warning = usage.warning { Console.error("warning: \(warning)") }
        }
    }
}

/// `mediasync verify`: every indexed file exists with its recorded size.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Check that every indexed file exists with its recorded size (--deep: and bytes); --fix marks the broken ones for the next sync."
    )

    @Flag(help: "Forget the broken files in the index, so the next sync downloads them again.")
    var fix = false

    @Flag(help: "Also read every file and compare its bytes with the content hash recorded when it was placed.")
    var deep = false

    @Flag(help: "Print JSON instead of lines.")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let mirror = try fix ? Mirror.open(rootOptions.mirrorRoot) : rootOptions.openForReading()
            let check = try mirror.storage.verifyDeep(fix: fix, deep: deep)
            let problems = check.problems
            if json {
                print(try JSONText.encode(problems))
            } else {
                for problem in problems {
                    print("\(problem.problem): \(problem.path) (recorded \(problem.expectedBytes) bytes)")
                }
                if deep {
                    print(
                        "Read \(check.hashed + problems.filter { $0.problem == "damaged" && $0.actualBytes == $0.expectedBytes }.count) "
                            + "files (\(ByteCount.format(check.bytesRead))) against their recorded hashes"
                            + (check.unhashed > 0
                                ? "; \(check.unhashed) placed by an older version have no hash (size checked only)."
                                : "."))
                }
                print(
                    problems.isEmpty
                        ? "All indexed files are in place."
                        : "\(problems.count) broken\(fix ? "; they will be downloaded again by the next sync" : "; run with --fix to fetch them again")."
                )
            }
            if !problems.isEmpty && !fix { throw ExitCodes.partialFailure }
        }
    }
}

/// `mediasync rm`: delete downloads and their index entries.
struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Delete downloads: an item (unselected, or excluded from later syncs), a podcast, or everything.",
        discussion: """
            `rm ID` deletes a movie, series, season, episode or podcast episode. A selected item is unselected; \
            an episode of a selected series (or a podcast episode) is excluded until it is selected again. \
            `--podcast ID` unsubscribes and deletes the episodes. `--all` deletes every download, selection \
            and subscription.
            """)

    @Argument(help: "Ids of items or podcast episodes.")
    var ids: [String] = []

    @Option(help: "Unsubscribe from this podcast (id or feed URL) and delete its episodes.")
    var podcast: String?

    @Flag(help: "Delete every download, selection and subscription.")
    var all = false

    @Flag(name: .customLong("dry-run"), help: "Print what would be deleted and change nothing.")
    var dryRun = false

    @Flag(help: "Print JSON instead of lines.")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func validate() throws {
        guard [!ids.isEmpty, podcast != nil, all].filter({ $0 }).count == 1 else {
            throw ValidationError("give ids, or --podcast ID, or --all")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let mirror = try Mirror.open(rootOptions.mirrorRoot, planOnly: dryRun)
            let removal = mirror.removal
            var results: [Removal.Result] = []
            if all {
                results.append(try removal.removeAll(dryRun: dryRun))
            } else if let podcast {
                results.append(try removal.removePodcast(podcast, dryRun: dryRun))
            } else {
                for id in ids { results.append(try removal.remove(id: id, dryRun: dryRun)) }
            }
            if json {
                print(try JSONText.encode(results))
            } else {
                let deleted = results.flatMap(\.deleted)
                deleted.forEach { print("\(dryRun ? "would delete" : "deleted") \($0)") }
                print(
                    dryRun
                        ? "Dry run: \(deleted.count) files would be deleted; nothing changed."
                        : "\(deleted.count) files deleted.")
            }
        }
    }
}

/// `mediasync gc`: remove orphaned files and stale partial downloads.
struct GarbageCollect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Remove files under Downloads/ that nothing references, and stale partial downloads.")

    @Flag(name: .customLong("dry-run"), help: "List them and delete nothing.")
    var dryRun = false

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let collector = try Mirror.open(rootOptions.mirrorRoot, planOnly: dryRun).garbageCollector
            let garbage = dryRun ? try collector.garbage() : try collector.collect()
            garbage.forEach { print("\(dryRun ? "would delete" : "deleted") \($0)") }
            print("\(garbage.count) files\(dryRun ? " would be" : "") removed.")
        }
    }
}

/// `mediasync reindex`: rebuild the index from the tree's metadata.json files.
struct Reindex: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild a lost or damaged index from the tree's metadata.json files (no download needed).",
        discussion: """
            Movies come back as movie selections, series as selections of the seasons held, podcasts as \
            subscriptions keeping at least the episodes held. The old index, if any, is moved aside.
            """)

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let result = try Mirror.rebuildIndex(rootOptions.mirrorRoot)
            result.migrated.forEach { print($0) }
            result.skipped.forEach { Console.error("skipped: \($0)") }
            print(
                "Rebuilt the index: \(result.files) files, \(result.selections) selections, \(result.subscriptions) subscriptions."
            )
        }
    }
}

/// `mediasync ls`: the local library, searched and filtered.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract:
            "List the local library: movies, series, episodes, albums, tracks, audiobooks, books, podcasts, podcast "
            + "episodes.")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case movie, series, episode, album, track, audiobook
        case audiobookPart = "audiobook-part"
        case book, podcast
        case podcastEpisode = "podcast-episode"
    }

    @Option(help: "Only this type: \(Kind.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: Kind?

    @Flag(help: "Only what is fully on disk.")
    var downloaded = false

    @Flag(help: "Only what the index lists but is missing or damaged on disk (`mediasync sync` fetches it again).")
    var missing = false

    @Option(help: "Only titles containing this text (case-insensitive).")
    var search: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func validate() throws {
        if downloaded && missing { throw ValidationError("choose --downloaded or --missing, not both") }
    }

    func run() async throws {
        try await reportingErrors {
            let items = try rootOptions.openForReading().library.items()
                .filter { item in
                    (type == nil || item.type == type?.rawValue) && (!downloaded || item.downloaded)
                        && (!missing || !item.downloaded)
                        && (search.map { text in
                            item.title.localizedCaseInsensitiveContains(text)
                                || (item.parent ?? "").localizedCaseInsensitiveContains(text)
                        } ?? true)
                }
            try Table.print(items, json: json, header: ["TYPE", "TITLE", "WHERE", "SIZE", "STATE", "ID"]) {
                items.map { item in
                    let place = [
                        item.parent,
                        item.season.map {
                            String(format: "S%02d", $0) + (item.episode.map { String(format: "E%02d", $0) } ?? "")
                        },
                    ]
                    .compactMap { $0 }.joined(separator: " ")
                    return [
                        item.type, item.title, place, ByteCount.format(item.bytes),
                        item.downloaded ? "ok" : "missing", item.id,
                    ]
                }
            }
        }
    }
}
