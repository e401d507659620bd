import MediaSyncCore
import MediaSyncServer

/// The files (media, images, external subtitles) that mirrored items need, at their paths in Swiftfin's offline layout.
public enum MirrorFiles {
    /// Image widths as in Swiftfin's offline downloads: posters 300 px, backdrops 600 px.
    public static let primaryWidth = 300
    public static let backdropWidth = 600

    public static func files(for items: MirrorItems, server: any MediaServer) -> (
        files: [RemoteFile], rejected: [String]
    ) {
        // Each movie's and series' files depend on nothing else: built on every core, then put together in order
        // (the first file of a key kept, as one builder would).
        let qualities = items.qualities
        let audioQualities = items.audioQualities
        let trickplay = items.trickplay
        let movieParts = Parallel.map(items.movies) { movie -> Builder in
            var builder = Builder(server: server, qualities: qualities, trickplay: trickplay)
            let id = movie.item.id
            for version in movie.versions {
                builder.media(item: movie.item, version: version) { versionId, fileExtension in
                    LibraryLayout.movieMedia(movieId: id, versionId: versionId, fileExtension: fileExtension)
                }
            }
            builder.images(of: movie.item) { LibraryLayout.movieImage(movieId: id, type: $0) }
            builder.chapterImages(of: movie.item) { LibraryLayout.movieChapterImage(movieId: id, index: $0) }
            return builder
        }
        let seriesParts = Parallel.map(items.series) { series -> Builder in
            var builder = Builder(server: server, qualities: qualities, trickplay: trickplay)
            let seriesId = series.series.id
            builder.images(of: series.series) { LibraryLayout.seriesImage(seriesId: seriesId, type: $0) }
            for season in series.seasons {
                if let seasonItem = season.season, SafeName.id(seasonItem.id) != nil {
                    builder.images(of: seasonItem, types: [.primary]) {
                        LibraryLayout.seasonImage(
                            seriesId: seriesId, seasonNumber: season.number, seasonId: seasonItem.id, type: $0)
                    }
                }
                for episode in season.episodes {
                    let episodeId = episode.item.id
                    for version in episode.versions {
                        builder.media(item: episode.item, version: version) { versionId, fileExtension in
                            LibraryLayout.episodeMedia(
                                seriesId: seriesId, seasonNumber: season.number, episodeId: episodeId,
                                versionId: versionId,
                                fileExtension: fileExtension)
                        }
                    }
                    builder.images(of: episode.item) {
                        LibraryLayout.episodeImage(
                            seriesId: seriesId, seasonNumber: season.number, episodeId: episodeId, type: $0)
                    }
                    builder.chapterImages(of: episode.item) {
                        LibraryLayout.episodeChapterImage(
                            seriesId: seriesId, seasonNumber: season.number, episodeId: episodeId, index: $0)
                    }
                }
            }
            return builder
        }
        let albumParts = Parallel.map(items.albums) { album -> Builder in
            var builder = Builder(server: server, qualities: qualities, audioQualities: audioQualities)
            let albumId = album.folderId
            if let item = album.album, item.id == albumId {
                builder.images(of: item, types: [.primary]) { LibraryLayout.albumImage(albumId: albumId, type: $0) }
            }
            for track in album.tracks {
                let trackId = track.item.id
                for version in track.versions {
                    builder.media(item: track.item, version: version) { versionId, fileExtension in
                        LibraryLayout.trackMedia(
                            albumId: albumId, trackId: trackId, versionId: versionId, fileExtension: fileExtension)
                    }
                }
                if track.item.hasLyrics == true {
                    builder.lyrics(of: track.item, path: LibraryLayout.lyrics(albumId: albumId, trackId: trackId))
                }
            }
            return builder
        }
        let listParts = Parallel.map(items.lists) { list -> Builder in
            var builder = Builder(server: server, qualities: qualities)
            let listId = list.item.id
            builder.images(of: list.item, types: [.primary]) { LibraryLayout.listImage(listId: listId, type: $0) }
            return builder
        }
        let count = [movieParts, seriesParts, albumParts, listParts].reduce(0) { total, parts in
            total + parts.reduce(0) { $0 + $1.files.count }
        }
        var files: [RemoteFile] = []
        files.reserveCapacity(count)
        var rejected: [String] = []
        var keys = Set<FileKey>(minimumCapacity: count)
        for parts in [movieParts, seriesParts, albumParts, listParts] {
            for part in parts {
                files += part.files.lazy.filter { keys.insert($0.key).inserted }
                rejected += part.rejected
            }
        }
        return (files, rejected)
    }

    /// Whether a planned or held track is the server's transcode (its signature carries the audio quality).
    static func isAudioTranscode(signature: String) -> Bool {
        signature.contains("|aq:")
    }

    /// The signature of a version: a different MediaSource `ETag` or `Size` means the file changed on the server.
    public static func signature(of version: MediaSource) -> String {
        "etag:\(version.etag ?? "-")|size:\(version.size.map(String.init) ?? "-")"
    }

    /// The signature of an external subtitle: the stream as listed, and its item's `Etag`. Subtitles change on the
    /// server without the media (a subtitle downloader adds or replaces one, and the item is saved again): a
    /// changed stream, or an item saved again, fetches the subtitle again, never the media.
    public static func subtitleSignature(of stream: MediaStream, item: BaseItem) -> String {
        let parts = [
            stream.codec, stream.language, stream.title, stream.path, stream.isForced.map { $0 ? "forced" : "-" },
            item.etag,
        ]
        return "sub:" + parts.map { $0 ?? "-" }.joined(separator: "|")
    }

    /// The signature of a version's trickplay tiles: the width's description. Tiles made again at other settings
    /// are fetched again, others never.
    public static func trickplaySignature(_ info: TrickplayWidth) -> String {
        "trickplay:\(info.width)x\(info.height)|\(info.tileWidth)x\(info.tileHeight)|\(info.thumbnailCount)"
            + "|\(info.interval)"
    }

    /// The most bytes one tile of a width can have, from its `Bandwidth` (Jellyfin sets it to the most bits per
    /// second of thumbnail time of any tile: `TrickplayManager` L384–385, v10.10.7): what a budget counts a tile as.
    /// Nil when the server gives no bandwidth.
    public static func trickplayTileBound(_ info: TrickplayWidth) -> Int64? {
        guard info.bandwidth > 0 else { return nil }
        let bits = Double(info.bandwidth) * Double(info.tileWidth * info.tileHeight) * Double(info.interval) / 1000
        return Int64((bits / 8).rounded(.up))
    }

    /// The subtitle file format for a text subtitle codec, or nil for image-based or unknown codecs.
    static func subtitleFormat(codec: String?) -> String? {
        switch codec?.lowercased() {
        case "subrip", "srt": return "srt"
        case "webvtt", "vtt": return "vtt"
        case "ass": return "ass"
        case "ssa": return "ssa"
        default: return nil
        }
    }

    private struct Builder {
        let server: any MediaServer
        let qualities: [String: Quality]
        var audioQualities: [String: AudioQuality] = [:]
        /// The trickplay width each movie and episode keeps (absent: the server's smallest).
        var trickplay: [String: TrickplayChoice] = [:]
        var files: [RemoteFile] = []
        var rejected: [String] = []

        mutating func add(_ file: RemoteFile) {
            guard SafeName.isContained(file.path) else {
                rejected.append("refusing the path \(file.path.debugDescription)")
                return
            }
            // A key given twice keeps its first file: the parts are put together so (``files(for:server:)``).
            files.append(file)
        }

        mutating func media(item: BaseItem, version: MediaSource, path: (String, String) -> String) {
            let versionId = LibraryLayout.versionId(itemId: item.id, mediaSourceId: version.id)
            let quality = qualities[item.id]
            // A transcode is planned as the container it will have, its size as bit rate × runtime; the quality is
            // in its signature, so a changed quality fetches it again and an unchanged one costs no request.
            // A track at a quality it does not already have: the server's transcode, in the container asked for.
            let audio = audioQualities[item.id].flatMap { $0.fits(version) ? nil : $0 }
            let fileExtension =
                quality?.container ?? audio?.container
                ?? MediaExtension.fromContainer(version.container ?? item.container)
            let mediaPath = path(versionId, fileExtension)
            let signature =
                MirrorFiles.signature(of: version) + (quality.map { "|" + $0.signature } ?? "")
                + (audio.map { "|" + $0.signature } ?? "")
            do {
                let url =
                    try audio.map {
                        try server.universalAudioURL(itemId: item.id, mediaSourceId: versionId, quality: $0)
                    } ?? server.downloadURL(mediaSourceId: versionId)
                // `Size` comes from the server's database and can be stale (a file replaced before the server's next
                // scan): a download of another size is checked against what the server serves (MirrorSync).
                add(
                    RemoteFile(
                        key: .media(itemId: item.id, versionId: versionId), path: mediaPath, kind: .media,
                        content: .download(url: url, expectedSize: quality == nil && audio == nil ? version.size : nil),
                        signature: signature, itemId: item.id, versionId: versionId, essential: true,
                        sizeHint: quality?.estimatedBytes(runtimeTicks: version.runTimeTicks ?? item.runTimeTicks)
                            ?? audio?.estimatedBytes(
                                runtimeTicks: version.runTimeTicks ?? item.runTimeTicks,
                                channels: version.mediaStreams.first { $0.type == "Audio" }?.raw["Channels"]?.intValue
                                    .map { Int($0) })))
            } catch {
                rejected.append("\(item.name ?? item.id): \(error)")
                return
            }
            for stream in version.mediaStreams where stream.isSubtitle && stream.isExternal == true {
                guard let index = stream.index, let format = MirrorFiles.subtitleFormat(codec: stream.codec),
                    let url = try? server.subtitleURL(
                        itemId: item.id, mediaSourceId: versionId, streamIndex: index, format: format)
                else { continue }
                add(
                    RemoteFile(
                        key: .subtitle(itemId: item.id, versionId: versionId, streamIndex: index),
                        path: LibraryLayout.subtitle(
                            mediaPath: mediaPath, streamIndex: index, language: stream.language,
                            forced: stream.isForced == true,
                            format: format),
                        kind: .subtitle, content: .download(url: url, expectedSize: nil),
                        signature: MirrorFiles.subtitleSignature(of: stream, item: item), itemId: item.id,
                        versionId: versionId, essential: false))
            }
            // Trickplay and media segments belong to the original's timeline, which a transcode keeps.
            if audio == nil {
                trickplayTiles(item: item, versionId: versionId, mediaPath: mediaPath)
                segments(item: item, version: version, versionId: versionId, mediaPath: mediaPath)
            }
        }

        /// A version's trickplay tiles at the width its selection keeps (10.9 and later list them; 10.8 has none).
        /// Signed by the width's description: tiles made again at other settings are fetched again, others never.
        mutating func trickplayTiles(item: BaseItem, versionId: String, mediaPath: String) {
            guard let widths = item.trickplay[versionId],
                let width = (trickplay[item.id] ?? .smallest).pick(from: Array(widths.keys)),
                let info = widths[width]
            else { return }
            let signature = MirrorFiles.trickplaySignature(info)
            let hint = MirrorFiles.trickplayTileBound(info)
            for index in 0..<info.tileCount {
                guard let url = try? server.trickplayTileURL(mediaSourceId: versionId, width: width, index: index)
                else { return }
                add(
                    RemoteFile(
                        key: .trickplay(itemId: item.id, versionId: versionId, width: width, index: index),
                        path: LibraryLayout.trickplayTile(mediaPath: mediaPath, width: width, index: index),
                        kind: .image, content: .download(url: url, expectedSize: nil), signature: signature,
                        itemId: item.id, versionId: versionId, essential: false, sizeHint: hint))
            }
        }

        /// A version's media segments, when the server says it has some (`HasSegments`, 10.10 and later; earlier
        /// servers have none and nothing is asked). Refreshed with the item: signed by its `Etag`.
        mutating func segments(item: BaseItem, version: MediaSource, versionId: String, mediaPath: String) {
            guard version.hasSegments == true, let url = try? server.mediaSegmentsURL(itemId: versionId) else { return }
            add(
                RemoteFile(
                    key: .segments(itemId: item.id, versionId: versionId),
                    path: LibraryLayout.segments(mediaPath: mediaPath), kind: .subtitle,
                    content: .download(url: url, expectedSize: nil), signature: "segments:\(item.etag ?? "-")",
                    itemId: item.id, versionId: versionId, essential: false))
        }

        /// A video's chapter images (the chapters with an `ImageTag`), signed by their tags: a chapter whose image
        /// is made again is fetched again, the others never.
        mutating func chapterImages(of item: BaseItem, path: (Int) -> String) {
            for (index, chapter) in item.chapters.enumerated() {
                guard let tag = chapter.imageTag,
                    let url = try? server.imageURL(
                        itemId: item.id, type: "Chapter", index: index, tag: tag, maxWidth: nil)
                else { continue }
                add(
                    RemoteFile(
                        key: .image(itemId: item.id, type: LibraryLayout.chapterImageType(index)), path: path(index),
                        kind: .image, content: .download(url: url, expectedSize: nil), signature: "tag:\(tag)",
                        itemId: item.id, essential: false))
            }
        }

        /// A track's lyrics, asked for as the server's `LyricDto` and written as LRC (see `SyncDownloads`). Signed by
        /// the track's `Etag`: a lyrics file added or changed on the server is saved with the item again.
        mutating func lyrics(of item: BaseItem, path: String) {
            guard let url = try? server.lyricsURL(itemId: item.id) else { return }
            add(
                RemoteFile(
                    key: .lyrics(itemId: item.id), path: path, kind: .subtitle,
                    content: .download(url: url, expectedSize: nil), signature: "lyrics:\(item.etag ?? "-")",
                    itemId: item.id, essential: false))
        }

        mutating func images(
            of item: BaseItem, types: [LibraryLayout.ImageType] = LibraryLayout.ImageType.allCases,
            path: (LibraryLayout.ImageType) -> String
        ) {
            for type in types {
                let tag: String?
                let index: Int?
                let width: Int
                switch type {
                case .primary:
                    tag = item.imageTags["Primary"]
                    index = nil
                    width = MirrorFiles.primaryWidth
                case .backdrop:
                    tag = item.backdropImageTags.first
                    index = 0
                    width = MirrorFiles.backdropWidth
                }
                guard let tag,
                    let url = try? server.imageURL(
                        itemId: item.id, type: type.rawValue, index: index, tag: tag, maxWidth: width)
                else { continue }
                add(
                    RemoteFile(
                        key: .image(itemId: item.id, type: type.rawValue), path: path(type), kind: .image,
                        content: .download(url: url, expectedSize: nil), signature: "tag:\(tag)", itemId: item.id,
                        essential: false))
            }
        }
    }
}
