import Foundation
import MediaSyncCore
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// Moves downloads from Swiftfin's legacy layout (seed 000: `Downloads/<itemId>/Metadata/Item.json` beside a
/// `Media.<ext>` file, episodes in folders of their own) into the current layout, without downloading again:
/// the media file is renamed to `<itemId>-<versionId>.<ext>` in its movie folder or its series' season folder,
/// a `metadata.json` is written from `Item.json`, and the legacy `Metadata/` folder is removed.
struct LegacyMigration: Sendable {
    let executor: MirrorExecutor
    var root: MirrorRoot { executor.root }

    /// Whether the tree holds anything in the legacy layout (a `Metadata/Item.json` in a top folder).
    func isNeeded() -> Bool {
        let downloads = root.path + "/" + LibraryLayout.downloads
        return ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).contains { folder in
            SafeName.id(folder) != nil && access("\(downloads)/\(folder)/Metadata/Item.json", F_OK) == 0
        }
    }

    /// One migrated or skipped legacy item.
    struct Step: Sendable {
        var line: String
        /// The top folder (movie or series id) the item now lives in; nil when it was skipped.
        var folder: String?
    }

    /// One step per migrated or skipped legacy item.
    func run() throws -> [Step] {
        var lines: [Step] = []
        let downloads = root.path + "/" + LibraryLayout.downloads
        for folder in ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).sorted() {
            let legacy = "\(LibraryLayout.downloads)/\(folder)/Metadata/Item.json"
            guard SafeName.id(folder) != nil, let path = root.absolute(legacy),
                let data = FileManager.default.contents(atPath: path),
                let item = try? JSONDecoder().decode(BaseItem.self, from: data), item.id == folder
            else { continue }
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(downloads)/\(folder)")) ?? []
            guard let media = files.first(where: { $0.hasPrefix("Media.") }) else {
                lines.append(Step(line: "\(legacy): no Media.* file beside it; left as it is"))
                continue
            }
            let fileExtension =
                SafeName.fileExtension(String(media.dropFirst("Media.".count)))
                ?? MediaExtension.fromContainer(item.container)
            let source = item.mediaSources?.first
            let versionId = LibraryLayout.versionId(itemId: item.id, mediaSourceId: source?.id)
            guard SafeName.id(versionId) != nil else { continue }
            let version = VersionInfo(
                versionId: versionId, container: fileExtension, mediaSourceId: source?.id ?? item.id,
                downloadDate: modificationDate("\(LibraryLayout.downloads)/\(folder)/\(media)"),
                taskId: UUID().uuidString.lowercased(), itemId: item.type == "Episode" ? item.id : nil)
            let from = "\(LibraryLayout.downloads)/\(folder)/\(media)"
            if item.type == "Episode", let seriesId = item.seriesId, SafeName.id(seriesId) != nil {
                let season = item.parentIndexNumber ?? 0
                let target = LibraryLayout.episodeMedia(
                    seriesId: seriesId, seasonNumber: season, episodeId: item.id, versionId: versionId,
                    fileExtension: fileExtension)
                try executor.moveUntracked(from, to: target)
                try writeSeasonFiles(
                    seriesId: seriesId, season: season, episode: item, version: version)
                lines.append(Step(line: "migrated episode \(item.name ?? item.id) to \(target)", folder: seriesId))
            } else {
                let target = LibraryLayout.movieMedia(
                    movieId: item.id, versionId: versionId, fileExtension: fileExtension)
                try executor.moveUntracked(from, to: target)
                let metadata = DownloadMetadata(
                    itemId: item.id, itemType: item.type ?? "Movie", displayTitle: item.name ?? item.id, item: item.raw,
                    versions: [version])
                try executor.writeUntracked(
                    try MetadataComposer.encode(metadata), to: LibraryLayout.movieMetadata(item.id))
                lines.append(Step(line: "migrated \(item.name ?? item.id) to \(target)", folder: item.id))
            }
            executor.removeLegacyFolder("\(LibraryLayout.downloads)/\(folder)/Metadata")
            executor.removeEmptyFolder("\(LibraryLayout.downloads)/\(folder)")
        }
        return lines
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
