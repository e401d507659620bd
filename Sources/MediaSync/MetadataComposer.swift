import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

/// Builds the `metadata.json` files of seed 000 from the server's items and the versions the index holds.
///
/// The content depends only on its inputs (keys sorted, dates and task ids from the index), so a sync with
/// nothing changed produces the same bytes and writes nothing. A level gets a metadata file only once at
/// least one version under it is on disk: an item counts as downloaded when its metadata and file both exist.
public enum MetadataComposer {
    public static func files(for items: MirrorItems, entries: [IndexEntry]) -> [RemoteFile] {
        var mediaByItem: [String: [IndexEntry]] = [:]
        for entry in entries where entry.file.kind == .media {
            mediaByItem[entry.file.itemId, default: []].append(entry)
        }
        var files: [RemoteFile] = []
        for movie in items.movies {
            let versions = versionInfos(mediaByItem[movie.item.id] ?? [], itemId: nil)
            guard !versions.isEmpty else { continue }
            let metadata = DownloadMetadata(
                itemId: movie.item.id, itemType: movie.item.type ?? "Movie", displayTitle: movie.item.name ?? movie.item.id,
                item: movie.item.raw, versions: versions)
            files.append(file(metadata, path: LibraryLayout.movieMetadata(movie.item.id), itemId: movie.item.id))
        }
        for series in items.series {
            var seriesVersions: [VersionInfo] = []
            for season in series.seasons {
                var seasonVersions: [VersionInfo] = []
                var episodes: [JSONValue] = []
                for episode in season.episodes {
                    let versions = versionInfos(mediaByItem[episode.item.id] ?? [], itemId: episode.item.id)
                    guard !versions.isEmpty else { continue }
                    seasonVersions += versions
                    episodes.append(episode.item.raw)
                }
                guard !seasonVersions.isEmpty else { continue }
                seriesVersions += seasonVersions
                let seasonId = season.season?.id ?? "\(series.series.id)-season-\(season.number)"
                let title = season.season?.name ?? "Season \(season.number)"
                let metadata = DownloadMetadata(
                    itemId: seasonId, itemType: "Season", displayTitle: title, item: season.season?.raw,
                    versions: seasonVersions, episodes: episodes)
                files.append(
                    file(
                        metadata, path: LibraryLayout.seasonMetadata(seriesId: series.series.id, seasonNumber: season.number),
                        itemId: seasonId))
            }
            guard !seriesVersions.isEmpty else { continue }
            let metadata = DownloadMetadata(
                itemId: series.series.id, itemType: series.series.type ?? "Series",
                displayTitle: series.series.name ?? series.series.id, item: series.series.raw, versions: seriesVersions)
            files.append(file(metadata, path: LibraryLayout.seriesMetadata(series.series.id), itemId: series.series.id))
        }
        return files
    }

    private static func versionInfos(_ entries: [IndexEntry], itemId: String?) -> [VersionInfo] {
        entries.sorted { ($0.versionId ?? "") < ($1.versionId ?? "") }.map { entry in
            VersionInfo(
                versionId: entry.versionId ?? entry.file.itemId, container: entry.container ?? "bin", isStatic: true,
                mediaSourceId: entry.mediaSourceId, downloadDate: entry.downloadedAt, taskId: entry.taskId, itemId: itemId)
        }
    }

    /// The bytes of a `metadata.json` (Jellyfin's or a podcast's): sorted keys, pretty printed, a final newline.
    static func encode<Metadata: Encodable>(_ metadata: Metadata) throws -> [UInt8] {
        try JSONWriter.prettyBytes(metadata) + [0x0A]
    }

    /// The signature a metadata file is planned and recorded with; reindexing must compute the same one.
    static func signature(of bytes: [UInt8]) -> String {
        "sha256:" + SHA256.hex(bytes)
    }

    /// A metadata file to write with `content`.
    static func file<Metadata: Encodable>(_ metadata: Metadata, key: String, path: String, itemId: String) -> RemoteFile {
        let bytes = (try? encode(metadata)) ?? []
        return RemoteFile(
            key: key, path: path, kind: .metadata, content: .inline(bytes), signature: signature(of: bytes),
            itemId: itemId, essential: true)
    }

    private static func file(_ metadata: DownloadMetadata, path: String, itemId: String) -> RemoteFile {
        file(metadata, key: "metadata:\(itemId)", path: path, itemId: itemId)
    }
}
