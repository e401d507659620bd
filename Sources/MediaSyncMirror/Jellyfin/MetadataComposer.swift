import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncServer

/// Builds the `metadata.json` files of Swiftfin's offline layout from the server's items and the versions the
/// index holds.
///
/// The content depends only on its inputs (keys sorted, dates and task ids from the index), so a sync with
/// nothing changed produces the same bytes and writes nothing. A level gets a metadata file only once at
/// least one version under it is on disk: an item counts as downloaded when its metadata and file both exist.
public enum MetadataComposer {
    /// A metadata file a sync may write: the planned file, whose signature comes from the inputs, and how to
    /// produce its bytes (only done for the files the plan writes).
    struct Composed: Sendable {
        var file: RemoteFile
        var render: @Sendable () throws -> Rendered
    }

    /// A metadata file's bytes, and the members of it the export reads (``ExportSource/metadataKeys``), kept in the
    /// index so an export does not read and parse the documents again.
    struct Rendered: Sendable {
        var bytes: [UInt8]
        var facts: [UInt8]
    }

    /// - Parameter previous: the `metadata.json` held at a path, if any: episodes whose files are kept although the
    ///   listing no longer holds them (deselected without `--delete`, not confirmed gone) stay listed in their
    ///   season and series files with the item object recorded before, so a player still finds them offline.
    /// - Parameter wholeSources: an item's whole cached media-source fields, for the items whose listing got them
    ///   abridged (``MirrorItems/abridgedSources``); asked only when a file is rendered.
    static func files(
        for items: MirrorItems, entries: [IndexEntry], previous: (String) -> DownloadMetadata? = { _ in nil },
        wholeSources: @escaping @Sendable (String) -> JSONValue? = { _ in nil }
    ) -> [Composed] {
        var media: [String: [IndexEntry]] = [:]
        // By position: only the media records are copied, not every record looked at.
        for position in entries.indices where entries[position].file.kind == .media {
            media[entries[position].file.itemId, default: []].append(entries[position])
        }
        let mediaByItem = media
        // Only the listed movies and episodes get their whole media sources back: a kept episode's object is written
        // as it was recorded, even if a listing this run got it abridged.
        let listed = Set(
            items.movies.map(\.item.id) + items.series.flatMap { $0.seasons.flatMap { $0.episodes.map(\.item.id) } }
                + items.albums.flatMap { $0.tracks.map(\.item.id) })
        let items = withKeptEpisodes(items, entries: entries, previous: previous)
        let whole = Whole(abridged: items.abridgedSources.intersection(listed), fields: wholeSources)
        // Each movie's and series' files depend on nothing else: composed and signed on every core, kept in order.
        let movieFiles = Parallel.map(items.movies) { movie -> Composed? in
            let versions = versionInfos(mediaByItem[movie.item.id] ?? [], itemId: nil)
            guard !versions.isEmpty else { return nil }
            let metadata = DownloadMetadata(
                itemId: movie.item.id, itemType: movie.item.type ?? "Movie",
                displayTitle: movie.item.name ?? movie.item.id,
                item: movie.item.raw, versions: versions)
            return file(
                metadata, path: LibraryLayout.movieMetadata(movie.item.id), itemId: movie.item.id, whole: whole)
        }
        let seriesFiles = Parallel.map(items.series) { series -> [Composed] in
            var files: [Composed] = []
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
                        metadata,
                        path: LibraryLayout.seasonMetadata(seriesId: series.series.id, seasonNumber: season.number),
                        itemId: seasonId, whole: whole))
            }
            // A series the server lists no episodes for still gets its document (with no versions): the folder
            // holds its images, and `ls` and `du` name it by what it says rather than by its id.
            guard !seriesVersions.isEmpty || series.seasons.isEmpty else { return files }
            let metadata = DownloadMetadata(
                itemId: series.series.id, itemType: series.series.type ?? "Series",
                displayTitle: series.series.name ?? series.series.id, item: series.series.raw, versions: seriesVersions)
            files.append(
                file(
                    metadata, path: LibraryLayout.seriesMetadata(series.series.id), itemId: series.series.id,
                    whole: whole))
            return files
        }
        // The item ids with media in each folder right below `Downloads`, found in one pass (an album asks for its own).
        let heldByFolder =
            items.albums.isEmpty && items.lists.isEmpty ? [:] : itemsByTopFolder(mediaByItem)
        // In order, on this thread: `previous` reads files and is not for several threads at once.
        let albumFiles = items.albums.map { album -> Composed? in
            albumFile(
                album, mediaByItem: mediaByItem, heldHere: heldByFolder[album.folderId] ?? [], previous: previous,
                whole: whole)
        }
        let heldFolders = Set(heldByFolder.keys)
        let listFiles = Parallel.map(items.lists) { list -> Composed? in
            listFile(list, mediaByItem: mediaByItem, heldFolders: heldFolders)
        }
        return movieFiles.compactMap { $0 } + seriesFiles.flatMap { $0 } + albumFiles.compactMap { $0 }
            + listFiles.compactMap { $0 }
    }

    /// An album's `metadata.json`: the album, its held tracks' items and versions in disc and track order. Tracks
    /// held in its folder that the listing no longer holds (deselected without `--delete`, not confirmed gone) stay
    /// listed with the item object recorded before.
    private static func albumFile(
        _ album: AlbumEntry, mediaByItem: [String: [IndexEntry]], heldHere: Set<String>,
        previous: (String) -> DownloadMetadata?, whole: Whole
    ) -> Composed? {
        let folder = LibraryLayout.albumFolder(album.folderId) + "/"
        var tracks = album.tracks.map(\.item)
        // Held media in this folder of tracks the listing does not hold.
        let kept = heldHere.subtracting(tracks.map(\.id))
        if !kept.isEmpty, let old = previous(LibraryLayout.albumMetadata(album.folderId)) {
            tracks += (old.tracks ?? []).compactMap { track in
                guard let id = track["Id"]?.stringValue, kept.contains(id) else { return nil }
                return BaseItem(track)
            }
        }
        tracks.sort(by: SelectionExpander.trackOrder)
        var versions: [VersionInfo] = []
        var held: [JSONValue] = []
        for track in tracks {
            let trackVersions = versionInfos(
                (mediaByItem[track.id] ?? []).filter { $0.file.path.hasPrefix(folder) }, itemId: track.id)
            guard !trackVersions.isEmpty else { continue }
            versions += trackVersions
            held.append(track.raw)
        }
        guard !versions.isEmpty else { return nil }
        let item = album.album.flatMap { $0.id == album.folderId ? $0 : nil }
        // A loose track's folder (no album) is the track's own: typed so, it is never taken for an album. An
        // audiobook's folder is typed `AudioBook` whether its item is the book's one file or the `Folder` of its parts.
        let isAudiobook = album.tracks.first?.item.type == "AudioBook"
        let metadata = DownloadMetadata(
            itemId: album.folderId,
            itemType: isAudiobook ? "AudioBook" : item?.type ?? (album.album == nil ? "Audio" : "MusicAlbum"),
            displayTitle: item?.name ?? album.tracks.first?.item.album ?? album.folderId, item: item?.raw,
            versions: versions, tracks: held)
        return file(metadata, path: LibraryLayout.albumMetadata(album.folderId), itemId: album.folderId, whole: whole)
    }

    /// A playlist's or collection's `metadata.json`: the list's item and its entries in order, each pointing at the
    /// folder holding its files (nil while nothing of it is held). Written once one entry is held.
    private static func listFile(
        _ list: ListEntry, mediaByItem: [String: [IndexEntry]], heldFolders: Set<String>
    ) -> Composed? {
        let entries = list.entries.map { entry -> ListEntryInfo in
            var folder: String?
            if let media = mediaByItem[entry.id]?.first {
                // Where its media is: an album's, a movie's or a season's folder.
                folder = media.file.path.split(separator: "/").dropLast().joined(separator: "/")
            } else if heldFolders.contains(entry.id) {
                // A series or an album of a collection: its own folder, with media held below it.
                folder = "\(LibraryLayout.downloads)/\(entry.id)"
            }
            return ListEntryInfo(
                itemId: entry.id, itemType: entry.type, displayTitle: entry.name ?? entry.id, folder: folder)
        }
        guard entries.contains(where: { $0.folder != nil }) else { return nil }
        let metadata = DownloadMetadata(
            itemId: list.item.id, itemType: list.item.type, displayTitle: list.item.name ?? list.item.id,
            item: list.item.raw, versions: [], entries: entries)
        return file(metadata, path: LibraryLayout.listMetadata(list.item.id), itemId: list.item.id, whole: Whole.none)
    }

    /// The folders right below `Downloads` that hold media, with the items whose media they hold.
    private static func itemsByTopFolder(_ mediaByItem: [String: [IndexEntry]]) -> [String: Set<String>] {
        var folders: [String: Set<String>] = [:]
        for (itemId, entries) in mediaByItem {
            for entry in entries {
                let parts = entry.file.path.split(separator: "/", maxSplits: 2)
                if parts.count == 3, parts[0] == LibraryLayout.downloads[...] {
                    folders[String(parts[1]), default: []].insert(itemId)
                }
            }
        }
        return folders
    }

    /// The series with their kept episodes added back: media held under a series' folder whose episode the listing
    /// does not hold, with the episode's item object from the season's previous `metadata.json`.
    static func withKeptEpisodes(
        _ items: MirrorItems, entries: [IndexEntry], previous: (String) -> DownloadMetadata?
    ) -> MirrorItems {
        var result = items
        // One pass over the index: series folder → (season folder, episode id) of each media file in it. (Walking
        // every entry once per series cost a 556-series library 8 s of a no-op sync.)
        var mediaBySeries: [Substring: [(folder: Substring, itemId: String)]] = [:]
        for position in entries.indices where entries[position].file.kind == .media {
            let file = entries[position].file
            let path = file.path[...]
            guard path.hasPrefix("Downloads/") else { continue }
            // Split at the slashes' bytes (walking the characters was most of this loop).
            let rest = path[path.utf8.index(path.startIndex, offsetBy: "Downloads/".utf8.count)...]
            guard let slash = rest.utf8.firstIndex(of: UInt8(ascii: "/")) else { continue }
            let inside = rest[rest.utf8.index(after: slash)...]
            guard let next = inside.utf8.firstIndex(of: UInt8(ascii: "/")) else { continue }
            mediaBySeries[rest[..<slash], default: []].append((inside[..<next], file.itemId))
        }
        for (position, series) in items.series.enumerated() {
            guard let media = mediaBySeries[series.series.id[...]] else { continue }
            let listed = Set(series.seasons.flatMap { $0.episodes.map(\.item.id) })
            // Season folder name → the kept episode ids in it.
            var kept: [String: [String]] = [:]
            for (folder, itemId) in media where !listed.contains(itemId) {
                let name = String(folder)
                if !(kept[name]?.contains(itemId) ?? false) { kept[name, default: []].append(itemId) }
            }
            guard !kept.isEmpty else { continue }
            var seasons = series.seasons
            for (folder, ids) in kept.sorted(by: { $0.key < $1.key }) {
                guard folder.hasPrefix("Season-"), let number = Int(folder.dropFirst("Season-".count)) else { continue }
                guard let old = previous(LibraryLayout.seasonMetadata(seriesId: series.series.id, seasonNumber: number))
                else { continue }
                let recorded = (old.episodes ?? []).compactMap { episode -> EpisodeEntry? in
                    guard let id = episode["Id"]?.stringValue, ids.contains(id), let item = BaseItem(episode) else {
                        return nil
                    }
                    return EpisodeEntry(item: item, versions: [])
                }
                guard !recorded.isEmpty else { continue }
                if let index = seasons.firstIndex(where: { $0.number == number }) {
                    seasons[index].episodes += recorded
                } else {
                    seasons.append(
                        SeasonEntry(number: number, season: old.item.flatMap { BaseItem($0) }, episodes: recorded))
                }
            }
            result.series[position].seasons = seasons.sorted { $0.number < $1.number }
        }
        return result
    }

    private static func versionInfos(_ entries: [IndexEntry], itemId: String?) -> [VersionInfo] {
        entries.sorted { ($0.versionId ?? "") < ($1.versionId ?? "") }.map { entry in
            VersionInfo(
                versionId: entry.versionId ?? entry.file.itemId, container: entry.container ?? "bin",
                isStatic: !(entry.validator ?? "").hasPrefix(Quality.transcodeValidatorPrefix),
                mediaSourceId: entry.mediaSourceId, downloadDate: entry.downloadedAt, taskId: entry.taskId,
                itemId: itemId)
        }
    }

    /// The bytes of a `metadata.json` (Jellyfin's or a podcast's): sorted keys, compact, a final newline.
    static func encode<Metadata: Encodable>(_ metadata: Metadata) throws -> [UInt8] {
        var bytes = try JSONWriter.sortedCompactBytes(metadata)
        bytes.append(0x0A)
        return bytes
    }

    /// The bytes of a `metadata.json` as ``encode(_:)`` writes them, and its facts for the export, from one tree.
    static func rendered<Metadata: Encodable>(_ metadata: Metadata) throws -> Rendered {
        let tree = try JSONWriter.value(metadata)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4096)
        JSONWriter.writeSortedCompact(tree, into: &bytes)
        bytes.append(0x0A)
        var facts: [UInt8] = []
        facts.reserveCapacity(256)
        JSONWriter.writeCompact(tree, keeping: ExportSource.metadataKeys, into: &facts)
        return Rendered(bytes: bytes, facts: facts)
    }

    /// The signature of a metadata file whose bytes are given (podcasts): their hash.
    static func signature(of bytes: [UInt8]) -> String {
        "sha256:" + SHA256.hex(bytes)
    }

    /// The signature a Jellyfin `metadata.json` is planned and recorded with, from what it is made of; reindexing
    /// computes it from the file's content. Server objects count by their `Etag` plus the parts that change
    /// without it (name, user data, image tags); an object without `Etag` counts whole.
    static func signature(of metadata: DownloadMetadata) -> String {
        var input: [UInt8] = []
        input.reserveCapacity(1024)
        func add(_ text: String?) {
            input.append(contentsOf: (text ?? "-").utf8)
            input.append(0)
        }
        func add(_ value: JSONValue?) {
            JSONWriter.write(value ?? .null, indent: 0, into: &input)
            input.append(0)
        }
        func addObject(_ raw: JSONValue?) {
            guard let raw, let etag = raw["Etag"]?.stringValue else {
                add(raw)
                return
            }
            add(etag)
            for key in ["Id", "Name", "UserData", "ImageTags", "BackdropImageTags"] { add(raw[key]) }
        }
        add(metadata.itemId)
        add(metadata.itemType)
        add(metadata.displayTitle)
        addObject(metadata.item)
        for version in metadata.versions {
            for field in [
                version.versionId, version.container, version.isStatic ? "static" : "dynamic", version.mediaSourceId,
                version.downloadDate, version.taskId, version.itemId,
            ] {
                add(field)
            }
        }
        add(metadata.episodes.map { "\($0.count) episodes" })
        for episode in metadata.episodes ?? [] { addObject(episode) }
        // Albums and lists only: a movie's, series' or season's inputs are as they were.
        if let tracks = metadata.tracks {
            add("\(tracks.count) tracks")
            for track in tracks { addObject(track) }
        }
        if let entries = metadata.entries {
            add("\(entries.count) entries")
            for entry in entries {
                for field in [entry.itemId, entry.itemType, entry.displayTitle, entry.folder] { add(field) }
            }
        }
        return "inputs:" + SHA256.hex(input)
    }

    /// A podcast's metadata file, rendered now (it is small) and signed by its bytes.
    static func file<Metadata: Encodable>(_ metadata: Metadata, key: FileKey, path: String, itemId: String) -> Composed
    {
        let rendered = (try? self.rendered(metadata)) ?? Rendered(bytes: [], facts: [])
        let bytes = rendered.bytes
        let file = RemoteFile(
            key: key, path: path, kind: .metadata, content: .inline(bytes), signature: signature(of: bytes),
            itemId: itemId, essential: true)
        return Composed(file: file) { rendered }
    }

    /// A Jellyfin metadata file, signed by its inputs (which abridged media sources do not change: objects with an
    /// `Etag` count by it and the parts that change without it) and rendered, with whole media sources, only when
    /// written.
    private static func file(_ metadata: DownloadMetadata, path: String, itemId: String, whole: Whole) -> Composed {
        let file = RemoteFile(
            key: .metadata(itemId: itemId), path: path, kind: .metadata, content: .inline([]),
            signature: signature(of: metadata),
            itemId: itemId, essential: true)
        return Composed(file: file) {
            var completed = metadata
            completed.item = try completed.item.map(whole.completing)
            completed.episodes = try completed.episodes?.map(whole.completing)
            completed.tracks = try completed.tracks?.map(whole.completing)
            return try rendered(completed)
        }
    }

    /// Puts the whole media sources back into the item objects whose listing got them abridged.
    struct Whole: Sendable {
        let abridged: Set<String>
        let fields: @Sendable (String) -> JSONValue?

        /// Nothing to complete.
        static let none = Whole(abridged: [], fields: { _ in nil })

        /// - Throws: ``SyncError`` when an abridged item's whole fields cannot be read: the file is not written (an
        ///   abridged one would count as current until the item changes), and the next sync writes it.
        func completing(_ item: JSONValue) throws -> JSONValue {
            guard !abridged.isEmpty, case .object(var members) = item, let id = members["Id"]?.stringValue,
                abridged.contains(id)
            else { return item }
            guard case .object(let whole)? = fields(id) else {
                throw SyncError.fileSystem("the media sources of item \(id) could not be read from the index")
            }
            members.merge(whole)
            return .object(members)
        }
    }
}
