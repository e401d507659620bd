import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// Moves downloads from Swiftfin's legacy layout (`Downloads/<itemId>/Metadata/Item.json` beside a
/// `Media.<ext>` file, episodes in folders of their own) into the current layout, without downloading again:
/// the media file is renamed to `<itemId>-<versionId>.<ext>` in its movie folder or its series' season folder,
/// a `metadata.json` is written from `Item.json`, and the legacy `Metadata/` folder is removed.
struct LegacyMigration: Sendable {
    let executor: MirrorExecutor
    var root: MirrorRoot { executor.root }

    /// Whether the tree holds anything in the legacy layout (a `Metadata/Item.json` in a top folder).
    func isNeeded() -> Bool {
        // Read with `readdir` and looked at from the folder itself: every sync asks, and a mirror's `Downloads` holds
        // a folder per movie and series (Foundation's listing and an absolute path per folder took a no-op sync of
        // 10,000 items 30 ms).
        let downloads = root.path + "/" + LibraryLayout.downloads
        guard let listing = opendir(downloads) else { return false }
        defer { closedir(listing) }
        let folder = dirfd(listing)
        while let entry = readdir(listing) {
            let name = Folders.entryName(entry)
            if SafeName.id(name) != nil, faccessat(folder, name + "/Metadata/Item.json", F_OK, 0) == 0 { return true }
        }
        return false
    }

    /// One migrated or skipped legacy item.
    struct Step: Sendable {
        var line: String
        /// The top folder (movie or series id) the item now lives in; nil when it was skipped.
        var folder: String?
    }

    /// A legacy item found in the tree, and where the migration puts its media.
    struct Found: Sendable {
        var folder: String
        var item: BaseItem
        /// The legacy media file (`Downloads/<id>/Media.<ext>`), relative to the root.
        var from: String
        var target: String
        var version: VersionInfo
        /// The series the episode goes to; nil for a movie.
        var seriesId: String?
    }

    /// What the migration would do: the items it moves, and one line per legacy item it leaves as it is.
    struct Survey: Sendable {
        var found: [Found] = []
        var skipped: [String] = []
    }

    /// What the migration would do, read from the tree and changing nothing. The real run and a dry run's plan
    /// both start here (see ``SyncPreparation``).
    func survey() -> Survey {
        var found: [Found] = []
        var skipped: [String] = []
        let downloads = root.path + "/" + LibraryLayout.downloads
        for folder in ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).sorted() {
            let legacy = "\(LibraryLayout.downloads)/\(folder)/Metadata/Item.json"
            guard SafeName.id(folder) != nil, let path = root.absolute(legacy),
                let data = FileManager.default.contents(atPath: path),
                let item = try? JSONDecoder().decode(BaseItem.self, from: data), item.id == folder
            else { continue }
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(downloads)/\(folder)")) ?? []
            guard let media = files.first(where: { $0.hasPrefix("Media.") }) else {
                skipped.append("\(legacy): no Media.* file beside it; left as it is")
                continue
            }
            let fileExtension =
                SafeName.fileExtension(String(media.dropFirst("Media.".count)))
                ?? MediaExtension.fromContainer(item.container)
            let source = item.mediaSources?.first
            let versionId = LibraryLayout.versionId(itemId: item.id, mediaSourceId: source?.id)
            guard SafeName.id(versionId) != nil else { continue }
            let from = "\(LibraryLayout.downloads)/\(folder)/\(media)"
            let version = VersionInfo(
                versionId: versionId, container: fileExtension, mediaSourceId: source?.id ?? item.id,
                downloadDate: modificationDate(from), taskId: executor.newTaskId(),
                itemId: item.type == "Episode" ? item.id : nil)
            if item.type == "Episode", let seriesId = item.seriesId, SafeName.id(seriesId) != nil {
                let target = LibraryLayout.episodeMedia(
                    seriesId: seriesId, seasonNumber: item.parentIndexNumber ?? 0, episodeId: item.id,
                    versionId: versionId, fileExtension: fileExtension)
                found.append(
                    Found(folder: folder, item: item, from: from, target: target, version: version, seriesId: seriesId))
            } else {
                let target = LibraryLayout.movieMedia(
                    movieId: item.id, versionId: versionId, fileExtension: fileExtension)
                found.append(
                    Found(folder: folder, item: item, from: from, target: target, version: version, seriesId: nil))
            }
        }
        return Survey(found: found, skipped: skipped)
    }

    /// One step per migrated or skipped legacy item.
    func run() throws -> [Step] {
        try run(survey())
    }

    /// Makes a surveyed migration: one step per migrated or skipped legacy item.
    func run(_ survey: Survey) throws -> [Step] {
        var lines = survey.skipped.map { Step(line: $0) }
        for legacy in survey.found {
            let item = legacy.item
            try executor.moveUntracked(legacy.from, to: legacy.target)
            if let seriesId = legacy.seriesId {
                try writeSeasonFiles(
                    seriesId: seriesId, season: item.parentIndexNumber ?? 0, episode: item, version: legacy.version)
                lines.append(
                    Step(line: "migrated episode \(item.name ?? item.id) to \(legacy.target)", folder: seriesId))
            } else {
                let metadata = DownloadMetadata(
                    itemId: item.id, itemType: item.type ?? "Movie", displayTitle: item.name ?? item.id, item: item.raw,
                    versions: [legacy.version])
                try executor.writeUntracked(
                    try MetadataComposer.encode(metadata), to: LibraryLayout.movieMetadata(item.id))
                lines.append(Step(line: "migrated \(item.name ?? item.id) to \(legacy.target)", folder: item.id))
            }
            executor.removeLegacyFolder("\(LibraryLayout.downloads)/\(legacy.folder)/Metadata")
            executor.removeEmptyFolder("\(LibraryLayout.downloads)/\(legacy.folder)")
        }
        return lines
    }

    /// The index records the migration leads to for the legacy media, as the reindex after it records them (the
    /// signature from the item's media source, the size of the file): a dry run plans against these, so it plans
    /// no download the real run would not make.
    func plannedEntries(_ found: [Found]) -> [(entry: IndexEntry, size: Int64)] {
        found.compactMap { legacy in
            guard let size = executor.files.sizes(of: [legacy.from])[legacy.from] else { return nil }
            let entry = Reindexer.mediaEntry(
                legacy.target, size: size, item: legacy.item, itemId: legacy.item.id, version: legacy.version)
            return (entry, size)
        }
    }

    /// Adds the episode to its season's and series' metadata (created when missing; the series and season
    /// objects are filled in by the next sync of a selection).
    private func writeSeasonFiles(
        seriesId: String, season: Int, episode: BaseItem, version: VersionInfo
    ) throws {
        let seasonPath = LibraryLayout.seasonMetadata(seriesId: seriesId, seasonNumber: season)
        var seasonMetadata =
            read(seasonPath)
            ?? DownloadMetadata(
                itemId: episode.seasonId ?? "\(seriesId)-season-\(season)", itemType: "Season",
                displayTitle: episode.seasonName ?? "Season \(season)", item: nil, versions: [], episodes: [])
        seasonMetadata.versions.append(version)
        seasonMetadata.episodes = (seasonMetadata.episodes ?? []) + [episode.raw]
        try executor.writeUntracked(try MetadataComposer.encode(seasonMetadata), to: seasonPath)
        let seriesPath = LibraryLayout.seriesMetadata(seriesId)
        var seriesMetadata =
            read(seriesPath)
            ?? DownloadMetadata(
                itemId: seriesId, itemType: "Series", displayTitle: episode.seriesName ?? seriesId, item: nil,
                versions: [])
        seriesMetadata.versions.append(version)
        try executor.writeUntracked(try MetadataComposer.encode(seriesMetadata), to: seriesPath)
    }

    private func read(_ relative: String) -> DownloadMetadata? {
        root.absolute(relative).flatMap { FileManager.default.contents(atPath: $0) }
            .flatMap { try? JSONDecoder().decode(DownloadMetadata.self, from: $0) }
    }

    private func modificationDate(_ relative: String) -> String {
        let date = root.absolute(relative).flatMap {
            try? FileManager.default.attributesOfItem(atPath: $0)[.modificationDate] as? Date
        }
        return ISO8601DateFormatter().string(from: date ?? Date())
    }
}
