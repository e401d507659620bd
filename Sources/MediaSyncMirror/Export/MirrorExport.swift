import Foundation
import MediaSyncCore
import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// What `mediasync export` is asked to do.
public struct ExportOptions: Sendable, Equatable {
    /// Only Jellyfin media or only podcasts; nil for both.
    public var only: ExportScope?
    /// Also write an `.m3u8` per podcast and per season.
    public var playlists: Bool
    /// Remove exported files whose source left the mirror.
    public var delete: Bool
    /// Delete nothing when more than this many files would go.
    public var maxDelete: Int?
    /// Plan only.
    public var dryRun: Bool
    /// Never hardlink or reflink: always copy the bytes.
    public var copyOnly: Bool
    /// Apply FAT32's 4 GiB limit whatever the destination's file system (a folder to be copied to a stick later).
    public var assumeFAT32: Bool
    /// Files written at once; nil: ``defaultConcurrency(fileSystem:)``.
    public var concurrency: Int?

    public init(
        only: ExportScope? = nil, playlists: Bool = false, delete: Bool = false, maxDelete: Int? = nil,
        dryRun: Bool = false, copyOnly: Bool = false, assumeFAT32: Bool = false, concurrency: Int? = nil
    ) {
        self.concurrency = concurrency
        self.only = only
        self.playlists = playlists
        self.delete = delete
        self.maxDelete = maxDelete
        self.dryRun = dryRun
        self.copyOnly = copyOnly
        self.assumeFAT32 = assumeFAT32
    }
}

extension ExportOptions {
    /// Files written at once by default: 2 (most of a small file's copy is the kernel making its inode, which runs in
    /// parallel), but 1 on FAT32 and exFAT, the file systems of sticks and cards, where two files growing at once
    /// interleave their clusters and cheap flash writes slower.
    public static func defaultConcurrency(fileSystem: String?) -> Int {
        ["vfat", "msdos", "exfat"].contains(fileSystem ?? "") ? 1 : 2
    }
}

/// One planned change, for `--dry-run` and `--json`.
public struct ExportPlannedStep: Codable, Sendable, Equatable {
    /// `copy`, `replace`, `move`, `delete`.
    public var action: String
    public var path: String
    public var from: String?
    public var bytes: Int64?
    public var reason: String?
}

/// What an export did (or, on a dry run, would do).
public struct ExportResult: Codable, Sendable, Equatable {
    public var destination: String
    /// The destination's file system type (`vfat`, `exfat`, `ext4`…), when known.
    public var fileSystem: String?
    public var dryRun: Bool
    public var planned: [ExportPlannedStep] = []
    /// Files written (copied, linked or generated) by this run.
    public var exported: [String] = []
    public var bytesExported: Int64 = 0
    /// How many files each method placed: `hardlink`, `reflink`, `copy`, `write` (playlists).
    public var methods: [String: Int] = [:]
    public var moved: [String] = []
    public var deleted: [String] = []
    public var unchanged = 0
    /// Not exported: too large for FAT32, or a file of the user's at the name.
    public var skipped: [ExportIssue] = []
    public var failed: [ExportIssue] = []
    /// Exported files the export no longer tracks (removed, or changed by someone else; left alone).
    public var forgotten: [ExportIssue] = []
    /// Exported files whose source left the mirror, still at the destination (`--delete` removes them).
    public var leftover: [String] = []
    /// Mirror files that could not be exported (missing or damaged in the mirror).
    public var mirrorProblems: [String] = []
    public var deletionAborted: String?
    /// Why the run stopped early (disk full, read-only, gone), if it did.
    public var stopped: String?
    public var stoppedByFullDisk = false

    /// Whether the run changed nothing at the destination.
    public var changedNothing: Bool { exported.isEmpty && moved.isEmpty && deleted.isEmpty }
    /// Whether something asked for was not done.
    public var hasFailures: Bool {
        !failed.isEmpty || !skipped.isEmpty || deletionAborted != nil || stopped != nil || !mirrorProblems.isEmpty
    }
}

/// `mediasync export`: the mirror, read from its index and `metadata.json` files, as a plain tree of human names at
/// a destination (a USB stick, an SD card, another folder), kept up to date incrementally.
public struct MirrorExport: Sendable {
    let root: MirrorRoot
    let index: MirrorIndex
    let destination: String

    public init(root: MirrorRoot, index: MirrorIndex, destination: String) {
        self.root = root
        self.index = index
        self.destination = URL(fileURLWithPath: destination).standardizedFileURL.path
    }

    public func run(
        options: ExportOptions, progress: (@Sendable (ExportProgress) -> Void)? = nil,
        events: (@Sendable (ExportEvent) -> Void)? = nil
    ) throws -> ExportResult {
        if destination == root.path || destination.hasPrefix(root.path + "/") || root.path.hasPrefix(destination + "/")
        {
            throw SyncError.unsafePath(
                description: "the destination \(destination) overlaps the mirror \(root.path); choose another folder")
        }
        var exists = ExportFileSystem.fact(destination) != .missing
        if !exists && !options.dryRun {
            do {
                try ExportFileSystem.makeFolders(destination)
            } catch {
                throw SyncError.fileSystem(error.message)
            }
            exists = true
        }
        var lock: Int32 = -1
        // Unlocked before it is closed: a child process forked meanwhile by another thread (a `Process` start) holds a
        // copy of the descriptor until its exec, and with it the lock; the next export would find it taken.
        defer {
            if lock >= 0 {
                flock(lock, LOCK_UN)
                close(lock)
            }
        }
        if exists {
            lock = open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard lock >= 0 else { throw SyncError.fileSystem("cannot open the destination \(destination)", errno) }
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
                throw SyncError.alreadyRunningDescribed(
                    "another mediasync export is writing to \(destination); try again when it has finished")
            }
        }
        // The mirror is read while the manifest is loaded (and the last run's journal finished).
        let (source, manifest) = try Parallel.both(
            { [root, index] in try ExportSource.read(root: root, index: index) },
            { [self] in try recoveredManifest(dryRun: options.dryRun) })
        let type = ExportFileSystem.type(of: exists ? destination : (destination as NSString).deletingLastPathComponent)
        let targets = ExportLayout.targets(source, scope: options.only, playlists: options.playlists)
        var facts: [String: DestinationFact] = [:]
        // An empty destination (a first export to a new folder or a blank stick) holds none of the paths: nothing
        // to look at. Otherwise each path is looked at once, on every core.
        if exists && !(manifest.files.isEmpty && Folders.isEmpty(destination)) {
            let paths = targets.map(\.path) + manifest.files.keys
            let destination = destination
            let found = Parallel.map(paths) { ExportFileSystem.fact(destination + "/" + $0) }
            facts.reserveCapacity(paths.count)
            for (path, fact) in zip(paths, found) where fact != .missing { facts[path] = fact }
        }
        let scopes = Set((options.only.map { [$0] } ?? ExportScope.allCases).map(\.rawValue))
        let plan = ExportPlanner.plan(
            targets: targets, manifest: manifest, facts: facts,
            maximumFileSize: options.assumeFAT32
                ? ExportPlanner.fat32Limit : ExportFileSystem.maximumFileSize(type: type),
            scopes: scopes, delete: options.delete, maxDelete: options.maxDelete)

        var result = ExportResult(destination: destination, fileSystem: type, dryRun: options.dryRun)
        result.planned = plan.steps.map { step in
            switch step {
            case .copy(let target, let replacing):
                return ExportPlannedStep(
                    action: replacing ? "replace" : "copy", path: target.path, from: target.sourcePath,
                    bytes: target.size)
            case .move(let from, let target):
                return ExportPlannedStep(action: "move", path: target.path, from: from)
            case .delete(let path, let reason):
                return ExportPlannedStep(action: "delete", path: path, reason: reason)
            }
        }
        result.unchanged = plan.unchanged.count
        result.skipped = plan.skipped
        result.forgotten = plan.forgotten
        result.leftover = options.delete && plan.deletionAborted == nil ? [] : plan.leftover
        result.mirrorProblems = source.problems
        result.deletionAborted = plan.deletionAborted
        if options.dryRun { return result }
        if plan.steps.isEmpty && plan.manifest == manifest { return result }
        let executor = ExportExecutor(
            destination: destination, root: root, allowLinks: !options.copyOnly,
            workers: options.concurrency ?? ExportOptions.defaultConcurrency(fileSystem: type), manifest: plan.manifest,
            result: result)
        return executor.run(plan, progress: progress, events: events)
    }

    /// The manifest, with the journal of a run that was interrupted replayed into it (and, unless `dryRun`, saved,
    /// its temporary files removed).
    private func recoveredManifest(dryRun: Bool) throws -> ExportManifest {
        var manifest = try loadManifest()
        let journalPath = destination + "/" + ExportManifest.journalName
        guard let journal = FileManager.default.contents(atPath: journalPath) else { return manifest }
        let destination = destination
        let temporaries = manifest.replay(ExportManifest.journalLines(journal)) { path in
            if case .file(let size) = ExportFileSystem.fact(destination + "/" + path) { return size }
            return nil
        }
        if dryRun { return manifest }
        for temporary in temporaries where SafeName.isContained(temporary) {
            let name = temporary.split(separator: "/").last.map(String.init) ?? ""
            let path = destination + "/" + temporary
            if name.hasPrefix(ExportExecutor.temporaryPrefix), case .file = ExportFileSystem.fact(path) {
                unlink(path)
            }
        }
        do {
            try ExportExecutor.save(manifest, destination: destination)
            unlink(journalPath)
        } catch {
            throw SyncError.fileSystem("cannot finish the last export's record in \(destination): \(error)")
        }
        return manifest
    }

    private func loadManifest() throws -> ExportManifest {
        let path = destination + "/" + ExportManifest.fileName
        guard let data = FileManager.default.contents(atPath: path) else { return ExportManifest() }
        do {
            return try ExportManifest(parsing: [UInt8](data))
        } catch {
            throw SyncError.fileSystem(
                "\(path) is not a manifest mediasync can read; move it aside to start over (every file at the destination "
                    + "is then treated as the user's and left alone)")
        }
    }
}
