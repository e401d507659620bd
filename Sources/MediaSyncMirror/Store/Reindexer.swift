import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

/// `mediasync reindex`: rebuilds the index from the tree's `metadata.json` files, so a lost or corrupt index
/// database costs no downloads. Files are recorded with the signatures the metadata's server objects carry;
/// selections (a movie, with all versions when it holds several; a series' held seasons; an album; a playlist; a
/// collection) and podcast subscriptions are restored, so the next sync finds everything in place.
public struct Reindexer: Sendable {
    let executor: MirrorExecutor
    var root: MirrorRoot { executor.root }
    var index: MirrorIndex { executor.index }

    init(executor: MirrorExecutor) {
        self.executor = executor
    }

    /// What was rebuilt.
    public struct Result: Codable, Sendable, Equatable {
        public var files = 0
        public var selections = 0
        public var subscriptions = 0
        /// Metadata files that could not be read, one line each.
        public var skipped: [String] = []
        /// Downloads moved from Swiftfin's legacy layout, one line each.
        public var migrated: [String] = []
    }

    /// Moves the current index (if any) aside as `index.sqlite.old` and rebuilds a new one from the tree.
    public static func rebuildFresh(root: MirrorRoot) throws -> Result {
        try root.prepare()
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = root.indexPath + suffix
            guard FileManager.default.fileExists(atPath: path) else { continue }
            try? FileManager.default.removeItem(atPath: path + ".old")
            try FileManager.default.moveItem(atPath: path, toPath: path + ".old")
        }
        return try Mirror.using(root: root, index: MirrorIndex(path: root.indexPath)).reindexer.rebuild()
    }

    /// Records what the tree's metadata describes in this (empty) index.
    public func rebuild() throws -> Result {
        let migrated = try LegacyMigration(executor: executor).run()
        let downloads = root.path + "/" + LibraryLayout.downloads
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).sorted()
        var result = try record(folders: folders)
        try executor.flush()
        result.migrated = migrated.map(\.line)
        return result
    }

    /// Moves legacy-layout downloads into the current layout and records the folders they went to (the
    /// rest of the index is left as it is). Sync runs this at its start when the tree holds any.
    /// - Returns: one line per migrated or skipped legacy item.
    public func migrateLegacyLayout() throws -> [String] {
        let migration = LegacyMigration(executor: executor)
        guard migration.isNeeded() else { return [] }
        return try migrateLegacyLayout(migration.survey())
    }

    /// Makes a surveyed legacy migration (a sync's, see ``SyncPreparation``) and records the folders it went to.
    /// - Returns: one line per migrated or skipped legacy item.
    func migrateLegacyLayout(_ survey: LegacyMigration.Survey) throws -> [String] {
        guard !survey.found.isEmpty || !survey.skipped.isEmpty else { return [] }
        let steps = try LegacyMigration(executor: executor).run(survey)
        _ = try record(folders: Set(steps.compactMap(\.folder)).sorted())
        try executor.flush()
        return steps.map(\.line)
    }

    /// Records what the metadata of these top folders describes.
    private func record(folders: [String]) throws -> Result {
        var result = Result()
        let now = ISO8601DateFormatter().string(from: Date())
        // Tracks a playlist or a collection held here names: an album holding only such tracks is there for the list,
        // and gets no album selection of its own (which would fetch the rest of the album).
        var listed = Set<String>()
        var albums: [(id: String, tracks: [String])] = []
        for folder in folders where SafeName.isContained(folder) {
            let metadataPath = "\(LibraryLayout.downloads)/\(folder)/\(LibraryLayout.metadataFile)"
            guard let bytes = read(metadataPath) else { continue }
            if let metadata = try? JSONDecoder().decode(DownloadMetadata.self, from: Data(bytes)) {
                try record(
                    metadataPath, bytes: bytes, signature: MetadataComposer.signature(of: metadata),
                    key: .metadata(itemId: metadata.itemId), itemId: metadata.itemId, &result)
                if metadata.entries != nil {
                    try rebuildList(folder, metadata, &result)
                    if let kind = Reindexer.listKind(metadata.itemType) {
                        try index.select(Selection(id: folder, kind: kind, addedAt: now))
                        result.selections += 1
                        listed.formUnion((metadata.entries ?? []).map(\.itemId))
                    }
                } else if metadata.tracks != nil {
                    let held = try rebuildAlbum(folder, metadata, &result)
                    // A loose track's folder: its files are recorded; no selection names a lone track.
                    if metadata.itemType == "MusicAlbum" { albums.append((folder, held)) }
                    // An audiobook (one file, or the folder of its parts) is its own selection.
                    if metadata.itemType == "AudioBook", !held.isEmpty {
                        try index.select(Selection(id: folder, kind: .audiobook, addedAt: now))
                        result.selections += 1
                    }
                } else if metadata.itemType == "Series" {
                    // Each season held becomes a season selection: the conservative guess, which never fetches a
                    // season the mirror did not have (a whole-series selection would).
                    let allVersions = hasSeveralVersions(metadata)
                    for seasonId in try rebuildSeries(folder, metadata, &result) {
                        try index.select(Selection(id: seasonId, kind: .season, allVersions: allVersions, addedAt: now))
                        result.selections += 1
                    }
                } else {
                    try rebuildMovie(folder, metadata, &result)
                    try index.select(
                        Selection(
                            id: folder, kind: metadata.itemType == "Book" ? .book : .movie,
                            allVersions: metadata.versions.count > 1, addedAt: now))
                    result.selections += 1
                }
            } else if let podcast = try? JSONDecoder().decode(PodcastMetadata.self, from: Data(bytes)) {
                try rebuildPodcast(podcast, metadataPath: metadataPath, bytes: bytes, now: now, &result)
            } else {
                result.skipped.append("\(metadataPath): not a mediasync metadata file")
            }
        }
        for album in albums where !album.tracks.isEmpty && !album.tracks.allSatisfy(listed.contains) {
            // A whole album was selected (or an artist: its albums are what the tree can show).
            try index.select(Selection(id: album.id, kind: .album, addedAt: now))
            result.selections += 1
        }
        return result
    }

    /// The selection kind a list's `metadata.json` stands for.
    static func listKind(_ itemType: String?) -> Selection.Kind? {
        switch itemType {
        case "Playlist": return .playlist
        case "BoxSet": return .collection
        default: return nil
        }
    }

    /// Records an album's files (tracks, lyrics, image); returns the ids of the tracks held.
    private func rebuildAlbum(_ id: String, _ metadata: DownloadMetadata, _ result: inout Result) throws -> [String] {
        let album = metadata.item.flatMap(BaseItem.init)
        if let album, album.id == id {
            try recordImage(
                LibraryLayout.albumImage(albumId: id, type: .primary), item: album, itemId: id, type: .primary, &result)
        }
        let tracks = (metadata.tracks ?? []).compactMap(BaseItem.init)
        var held: [String] = []
        for version in metadata.versions {
            guard let trackId = version.itemId, SafeName.id(trackId) != nil,
                SafeName.fileExtension(version.container) != nil
            else { continue }
            let track = tracks.first { $0.id == trackId }
            let path = LibraryLayout.trackMedia(
                albumId: id, trackId: trackId, versionId: version.versionId, fileExtension: version.container)
            guard size(path) != nil else { continue }
            try recordMedia(
                path, item: track, itemId: trackId, version: version, transcoded: !version.isStatic, &result)
            if !held.contains(trackId) { held.append(trackId) }
            let lyrics = LibraryLayout.lyrics(albumId: id, trackId: trackId)
            if let lyricsSize = size(lyrics) {
                // Signed as a sync signs it: the track's Etag.
                try executor.record(
                    IndexEntry(
                        file: LocalFile(
                            key: .lyrics(itemId: trackId), path: lyrics, kind: .subtitle, size: lyricsSize,
                            signature: track.map { "lyrics:\($0.etag ?? "-")" } ?? "unknown", itemId: trackId),
                        versionId: nil, mediaSourceId: nil, container: "lrc", downloadedAt: version.downloadDate,
                        taskId: version.taskId))
                result.files += 1
            }
        }
        return held
    }

    /// Records a playlist's or collection's image.
    private func rebuildList(_ id: String, _ metadata: DownloadMetadata, _ result: inout Result) throws {
        let list = metadata.item.flatMap(BaseItem.init)
        guard let list, list.id == id else { return }
        try recordImage(
            LibraryLayout.listImage(listId: id, type: .primary), item: list, itemId: id, type: .primary, &result)
    }

    private func rebuildMovie(_ id: String, _ metadata: DownloadMetadata, _ result: inout Result) throws {
        let item = metadata.item.flatMap(BaseItem.init)
        for version in metadata.versions {
            let path = LibraryLayout.movieMedia(
                movieId: id, versionId: version.versionId, fileExtension: version.container)
            try recordMedia(path, item: item, itemId: id, version: version, &result)
        }
        for type in LibraryLayout.ImageType.allCases {
            try recordImage(
                LibraryLayout.movieImage(movieId: id, type: type), item: item, itemId: id, type: type, &result)
        }
        try recordChapterImages(item, itemId: id, &result) { LibraryLayout.movieChapterImage(movieId: id, index: $0) }
    }

    /// Records a series' files; returns the ids of the seasons it holds.
    private func rebuildSeries(_ id: String, _ metadata: DownloadMetadata, _ result: inout Result) throws -> [String] {
        var seasonIds: [String] = []
        let series = metadata.item.flatMap(BaseItem.init)
        for type in LibraryLayout.ImageType.allCases {
            try recordImage(
                LibraryLayout.seriesImage(seriesId: id, type: type), item: series, itemId: id, type: type, &result)
        }
        let seasonFolders =
            ((try? FileManager.default.contentsOfDirectory(atPath: root.path + "/" + LibraryLayout.seriesFolder(id)))
            ?? [])
            .filter { $0.hasPrefix("Season-") }.sorted()
        for seasonFolder in seasonFolders {
            guard let number = Int(seasonFolder.dropFirst("Season-".count)) else { continue }
            let path = LibraryLayout.seasonMetadata(seriesId: id, seasonNumber: number)
            guard let bytes = read(path),
                let season = try? JSONDecoder().decode(DownloadMetadata.self, from: Data(bytes))
            else {
                continue
            }
            try record(
                path, bytes: bytes, signature: MetadataComposer.signature(of: season),
                key: .metadata(itemId: season.itemId), itemId: season.itemId, &result)
            let seasonItem = season.item.flatMap(BaseItem.init)
            if let seasonItem, SafeName.id(seasonItem.id) != nil {
                seasonIds.append(seasonItem.id)
            } else {
                result.skipped.append("\(path): the season has no server item, so it cannot be selected again")
            }
            if let seasonItem {
                try recordImage(
                    LibraryLayout.seasonImage(
                        seriesId: id, seasonNumber: number, seasonId: seasonItem.id, type: .primary),
                    item: seasonItem, itemId: seasonItem.id, type: .primary, &result)
            }
            let episodes = (season.episodes ?? []).compactMap(BaseItem.init)
            for version in season.versions {
                guard let episodeId = version.itemId, SafeName.id(episodeId) != nil else { continue }
                let episode = episodes.first { $0.id == episodeId }
                let mediaPath = LibraryLayout.episodeMedia(
                    seriesId: id, seasonNumber: number, episodeId: episodeId, versionId: version.versionId,
                    fileExtension: version.container)
                try recordMedia(mediaPath, item: episode, itemId: episodeId, version: version, &result)
            }
            for episode in episodes where SafeName.id(episode.id) != nil {
                for type in LibraryLayout.ImageType.allCases {
                    try recordImage(
                        LibraryLayout.episodeImage(
                            seriesId: id, seasonNumber: number, episodeId: episode.id, type: type),
                        item: episode, itemId: episode.id, type: type, &result)
                }
                try recordChapterImages(episode, itemId: episode.id, &result) {
                    LibraryLayout.episodeChapterImage(
                        seriesId: id, seasonNumber: number, episodeId: episode.id, index: $0)
                }
            }
        }
        return seasonIds
    }

    private func rebuildPodcast(
        _ podcast: PodcastMetadata, metadataPath: String, bytes: [UInt8], now: String, _ result: inout Result
    ) throws {
        guard SafeName.id(podcast.podcastID) != nil else { return }
        if let feedURL = podcast.feedURL, try index.subscription(matching: podcast.podcastID) == nil {
            try index.save(
                Subscription(
                    id: podcast.podcastID, feedURL: feedURL, title: podcast.podcastTitle,
                    retention: .newest(max(Retention.newestDefault, podcast.episodes.count)), addedAt: now))
            result.subscriptions += 1
        }
        try record(
            metadataPath, bytes: bytes, signature: MetadataComposer.signature(of: bytes),
            key: .podcastMetadata(podcastId: podcast.podcastID), itemId: podcast.podcastID, &result)
        for episode in podcast.episodes {
            let path = PodcastLayout.folder(podcast.podcastID) + "/" + episode.fileName
            guard SafeName.isContained(path), let size = size(path) else { continue }
            try executor.record(
                IndexEntry(
                    file: LocalFile(
                        key: .podcastEpisode(podcastId: podcast.podcastID, episodeId: episode.episodeID), path: path,
                        kind: .media, size: size,
                        signature: "guid:\(episode.guid ?? episode.episodeID)", itemId: podcast.podcastID),
                    versionId: episode.episodeID, mediaSourceId: nil, container: nil,
                    downloadedAt: episode.downloadDate,
                    taskId: UUID().uuidString.lowercased()))
            result.files += 1
            try recordExtras(of: episode, podcastId: podcast.podcastID, &result)
        }
    }

    /// Whether `name` is what the layout calls an episode's extra: `<id>.transcript.<ext>`, `<id>.chapters.json`,
    /// `<id>.image.<ext>` (``PodcastLayout/extra(podcastId:episodeId:suffix:)``).
    static func isExtraName(_ name: String, what: String, episodeId: String) -> Bool {
        switch what {
        case "chapters": return name == episodeId + ".chapters.json"
        case "transcript", "image":
            let prefix = episodeId + "." + what + "."
            return name.hasPrefix(prefix) && SafeName.fileExtension(String(name.dropFirst(prefix.count))) != nil
        default: return false
        }
    }

    /// The extras `metadata.json` lists beside an episode (transcript, chapters, image), recorded when they are on
    /// disk. Their signature is the URL they came from, which `metadata.json` does not keep: they are signed
    /// "unknown", so the next sync fetches those the feed still lists once more (small files) and retention deletes
    /// the others; until then they are the mirror's, never strays.
    private func recordExtras(of episode: PodcastMetadata.Episode, podcastId: String, _ result: inout Result) throws {
        let extras: [(what: String, file: String?, kind: RemoteFile.Kind)] = [
            ("transcript", episode.transcriptFile, .subtitle), ("chapters", episode.chaptersFile, .subtitle),
            ("image", episode.imageFile, .image),
        ]
        guard SafeName.id(episode.episodeID) != nil else { return }
        for extra in extras {
            // Only the names the layout gives extras, in the podcast's own folder (never the episode's media,
            // another episode's file or metadata.json).
            guard let name = extra.file, Reindexer.isExtraName(name, what: extra.what, episodeId: episode.episodeID)
            else { continue }
            let path = PodcastLayout.folder(podcastId) + "/" + name
            guard SafeName.isContained(path), let size = size(path) else { continue }
            try executor.record(
                IndexEntry(
                    file: LocalFile(
                        key: .podcastExtra(podcastId: podcastId, episodeId: episode.episodeID, what: extra.what),
                        path: path, kind: extra.kind, size: size, signature: "unknown", itemId: podcastId),
                    versionId: episode.episodeID, mediaSourceId: nil, container: nil,
                    downloadedAt: episode.downloadDate, taskId: UUID().uuidString.lowercased()))
            result.files += 1
        }
    }

    // MARK: Recording

    /// The record of a version's media file found at `path`, signed from the item's media source as a sync signs it:
    /// what reindexing records, and what a dry run expects the legacy migration to lead to.
    static func mediaEntry(_ path: String, size: Int64, item: BaseItem?, itemId: String, version: VersionInfo)
        -> IndexEntry
    {
        // A book has no media sources: its one version is made from the item, as a sync makes it.
        let source =
            item?.mediaSources?.first { ($0.id ?? itemId) == version.versionId }
            ?? item.flatMap { $0.type == "Book" ? SelectionExpander.bookVersion(of: $0) : nil }
        return IndexEntry(
            file: LocalFile(
                key: .media(itemId: itemId, versionId: version.versionId), path: path, kind: .media, size: size,
                signature: source.map(MirrorFiles.signature(of:)) ?? "unknown", itemId: itemId),
            versionId: version.versionId, mediaSourceId: version.mediaSourceId, container: version.container,
            downloadedAt: version.downloadDate, taskId: version.taskId)
    }

    /// - Parameter transcoded: the file is the server's transcode, at a quality `metadata.json` does not keep: it is
    ///   recorded as a transcode of an unknown signature, which the next sync replaces at its selection's quality.
    private func recordMedia(
        _ path: String, item: BaseItem?, itemId: String, version: VersionInfo, transcoded: Bool = false,
        _ result: inout Result
    ) throws {
        guard let size = size(path) else { return }
        var media = Reindexer.mediaEntry(path, size: size, item: item, itemId: itemId, version: version)
        if transcoded {
            media.file.signature = "unknown"
            media.validator = Quality.transcodeValidatorPrefix
        }
        let source = item?.mediaSources?.first { ($0.id ?? itemId) == version.versionId }
        try executor.record(media)
        result.files += 1
        // External subtitles beside the media: <media base>.<index>.<lang>[.forced].<format>.
        let base = String(path.dropLast(version.container.count + 1))
        let folder = (root.path + "/" + path as NSString).deletingLastPathComponent
        let name = (base as NSString).lastPathComponent
        for file in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
        where file.hasPrefix(name + ".") {
            let parts = file.dropFirst(name.count + 1).split(separator: ".")
            guard parts.count >= 3, let streamIndex = Int(parts[0]) else { continue }
            let subtitlePath = (path as NSString).deletingLastPathComponent + "/" + file
            guard let subtitleSize = self.size(subtitlePath) else { continue }
            // Signed as a sync signs it: the stream as listed and the item's Etag.
            let stream = source?.mediaStreams.first { $0.index == streamIndex && $0.isSubtitle }
            let signature = item.flatMap { item in stream.map { MirrorFiles.subtitleSignature(of: $0, item: item) } }
            try executor.record(
                IndexEntry(
                    file: LocalFile(
                        key: .subtitle(itemId: itemId, versionId: version.versionId, streamIndex: streamIndex),
                        path: subtitlePath,
                        kind: .subtitle,
                        size: subtitleSize, signature: signature ?? "unknown", itemId: itemId),
                    versionId: version.versionId, mediaSourceId: version.mediaSourceId, container: nil,
                    downloadedAt: version.downloadDate, taskId: version.taskId))
            result.files += 1
        }
        try recordTrickplay(path, item: item, itemId: itemId, version: version, &result)
        let segments = LibraryLayout.segments(mediaPath: path)
        if let segmentsSize = self.size(segments) {
            // Signed as a sync signs it: the item's Etag.
            try executor.record(
                IndexEntry(
                    file: LocalFile(
                        key: .segments(itemId: itemId, versionId: version.versionId), path: segments,
                        kind: .subtitle, size: segmentsSize,
                        signature: item.map { "segments:\($0.etag ?? "-")" } ?? "unknown", itemId: itemId),
                    versionId: version.versionId, mediaSourceId: version.mediaSourceId, container: nil,
                    downloadedAt: version.downloadDate, taskId: version.taskId))
            result.files += 1
        }
    }

    /// A version's trickplay tiles, `<media base>.trickplay/<width>/<index>.jpg`, signed from the item's `Trickplay`
    /// as a sync signs them (an unknown width's as unknown, which the next sync fetches again or lets go).
    private func recordTrickplay(
        _ mediaPath: String, item: BaseItem?, itemId: String, version: VersionInfo, _ result: inout Result
    ) throws {
        let folder = LibraryLayout.trickplayTile(mediaPath: mediaPath, width: 1, index: 0)
            .split(separator: "/").dropLast(2).joined(separator: "/")
        guard let absolute = root.absolute(folder) else { return }
        let widths = item?.trickplay[version.versionId] ?? [:]
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: absolute)) ?? []).sorted() {
            guard let width = Int(name), width > 0, String(width) == name else { continue }
            let info = widths[width]
            for file in ((try? FileManager.default.contentsOfDirectory(atPath: absolute + "/" + name)) ?? []).sorted()
            where file.hasSuffix(".jpg") {
                guard let index = Int(file.dropLast(4)), index >= 0, "\(index).jpg" == file else { continue }
                let path = LibraryLayout.trickplayTile(mediaPath: mediaPath, width: width, index: index)
                guard let size = self.size(path) else { continue }
                try executor.record(
                    IndexEntry(
                        file: LocalFile(
                            key: .trickplay(itemId: itemId, versionId: version.versionId, width: width, index: index),
                            path: path, kind: .image, size: size,
                            signature: info.map(MirrorFiles.trickplaySignature) ?? "unknown", itemId: itemId),
                        versionId: version.versionId, mediaSourceId: version.mediaSourceId, container: nil,
                        downloadedAt: version.downloadDate, taskId: version.taskId))
                result.files += 1
            }
        }
    }

    /// A video's chapter images (`Images/…Chapter-<index>.jpeg`), signed by their tags as a sync signs them.
    private func recordChapterImages(
        _ item: BaseItem?, itemId: String, _ result: inout Result, path: (Int) -> String
    ) throws {
        for (index, chapter) in (item?.chapters ?? []).enumerated() {
            let imagePath = path(index)
            guard let size = size(imagePath) else { continue }
            try executor.record(
                IndexEntry(
                    file: LocalFile(
                        key: .image(itemId: itemId, type: LibraryLayout.chapterImageType(index)), path: imagePath,
                        kind: .image, size: size, signature: chapter.imageTag.map { "tag:\($0)" } ?? "unknown",
                        itemId: itemId),
                    versionId: nil, mediaSourceId: nil, container: nil, downloadedAt: "", taskId: ""))
            result.files += 1
        }
    }

    private func recordImage(
        _ path: String, item: BaseItem?, itemId: String, type: LibraryLayout.ImageType, _ result: inout Result
    ) throws {
        guard let size = size(path) else { return }
        let tag = type == .primary ? item?.imageTags["Primary"] : item?.backdropImageTags.first
        try executor.record(
            IndexEntry(
                file: LocalFile(
                    key: .image(itemId: itemId, type: type.rawValue), path: path, kind: .image, size: size,
                    signature: tag.map { "tag:\($0)" } ?? "unknown", itemId: itemId),
                versionId: nil, mediaSourceId: nil, container: nil, downloadedAt: "", taskId: ""))
        result.files += 1
    }

    /// Records a metadata file with the hash of its bytes (what a sync records for the files it writes).
    private func record(
        _ path: String, bytes: [UInt8], signature: String, key: FileKey, itemId: String, _ result: inout Result
    ) throws {
        try executor.record(
            IndexEntry(
                file: LocalFile(
                    key: key, path: path, kind: .metadata, size: Int64(bytes.count), signature: signature,
                    itemId: itemId),
                versionId: nil, mediaSourceId: nil, container: nil, downloadedAt: "", taskId: "",
                contentHash: ContentHash.hex(of: bytes)))
        result.files += 1
    }

    private func hasSeveralVersions(_ series: DownloadMetadata) -> Bool {
        var counts: [String: Int] = [:]
        for version in series.versions { counts[version.itemId ?? "", default: 0] += 1 }
        return counts.values.contains { $0 > 1 }
    }

    private func read(_ relative: String) -> [UInt8]? {
        root.absolute(relative).flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) }
    }

    private func size(_ relative: String) -> Int64? {
        executor.files.sizes(of: [relative])[relative]
    }
}
