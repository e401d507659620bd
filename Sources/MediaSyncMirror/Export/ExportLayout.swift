import Foundation
import MediaSyncCore

/// An extended M3U playlist of exported files, in order. Its entries name the files they list by target key, so
/// a name changed by a collision, or a file that is not exported (skipped, failed), is never listed wrongly.
public struct ExportPlaylist: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var title: String
        public var seconds: Int?
        /// The key of the target listed.
        public var key: String
        /// The listed file's path relative to the playlist's folder (filled in once every target has its path).
        public var path: String

        public init(title: String, seconds: Int?, key: String, path: String = "") {
            self.title = title
            self.seconds = seconds
            self.key = key
            self.path = path
        }
    }

    public var entries: [Entry]

    public init(_ entries: [Entry]) { self.entries = entries }

    /// UTF-8 text with paths relative to the playlist's own folder.
    public var bytes: [UInt8] {
        ExportLayout.playlist(entries.map { ($0.title, $0.seconds, $0.path) })
    }

    /// The playlist without the entries of these target keys (files that are not at the destination).
    public func without(keys: Set<String>) -> ExportPlaylist {
        keys.isEmpty ? self : ExportPlaylist(entries.filter { !keys.contains($0.key) })
    }
}

/// One file the export should hold at the destination.
public struct ExportTarget: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// Copied (or linked) from the mirror.
        case file(ExportSource.File)
        /// Written from the playlist's entries.
        case playlist(ExportPlaylist)
    }

    /// The path relative to the destination.
    public var path: String
    /// The mirror's index key of the source, or `playlist:…`.
    public var key: String
    /// `media` or `podcasts`.
    public var scope: String
    public var content: Content

    public init(path: String, key: String, scope: String, content: Content) {
        self.path = path
        self.key = key
        self.scope = scope
        self.content = content
    }

    public var size: Int64 {
        switch content {
        case .file(let file): return file.size
        case .playlist(let list): return Int64(list.bytes.count)
        }
    }

    /// What the manifest records to tell an unchanged file.
    public var identity: String {
        switch content {
        case .file(let file): return file.identity
        case .playlist(let list): return "sha1:" + SHA1.hex(list.bytes)
        }
    }

    public var isPlaylist: Bool {
        if case .playlist = content { return true }
        return false
    }

    public var sourcePath: String? {
        if case .file(let file) = content { return file.path }
        return nil
    }
}

/// What an export covers: Jellyfin's movies and shows, its music, its audiobooks and books, or the podcasts (all
/// unless told).
public enum ExportScope: String, Sendable, CaseIterable, Codable {
    case media, music, podcasts, books
}

/// The plain layout: where each file of the mirror goes (see ``ExportNaming``). Pure.
public enum ExportLayout {
    public static func targets(_ source: ExportSource, scope: ExportScope?, playlists: Bool) -> [ExportTarget] {
        var targets: [ExportTarget] = []
        if scope == nil || scope == .media {
            targets += movies(source.movies)
            targets += series(source.series, playlists: playlists)
        }
        if scope == nil || scope == .music {
            targets += music(source.albums)
        }
        if playlists {
            targets += lists(source, scope: scope)
        }
        if scope == nil || scope == .podcasts {
            targets += podcasts(source.podcasts, playlists: playlists)
        }
        if scope == nil || scope == .books {
            targets += audiobooks(source.audiobooks) + books(source.books)
        }
        return resolvePlaylists(separateCollisions(targets))
    }

    /// Each playlist entry's path, from the final path of the target it lists (after collisions were separated);
    /// entries of targets that are not there are dropped.
    static func resolvePlaylists(_ targets: [ExportTarget]) -> [ExportTarget] {
        var pathOfKey: [String: String] = [:]
        for target in targets {
            if case .file = target.content, pathOfKey[target.key] == nil { pathOfKey[target.key] = target.path }
        }
        return targets.map { target in
            guard case .playlist(let list) = target.content else { return target }
            let folder = target.path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            var resolved = target
            resolved.content = .playlist(
                ExportPlaylist(
                    list.entries.compactMap { entry in
                        guard let path = pathOfKey[entry.key] else { return nil }
                        var entry = entry
                        entry.path = relative(path, from: Array(folder))
                        return entry
                    }))
            return resolved
        }
    }

    /// `path` relative to a folder (both relative to the destination), with `../` where they part.
    static func relative(_ path: String, from folder: [Substring]) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        var common = 0
        while common < folder.count, common < parts.count - 1, folder[common] == parts[common] { common += 1 }
        let up = Array(repeating: "..", count: folder.count - common)
        return (up + parts[common...].map(String.init)).joined(separator: "/")
    }

    static func movies(_ movies: [ExportSource.Movie]) -> [ExportTarget] {
        let suffixes = ExportNaming.resolve(movies.map { ($0.id, ExportNaming.titled($0.title, year: $0.year)) })
        // Each movie's names depend on nothing but the movie and its suffix: made on every core, kept in order.
        return Parallel.map(movies) { movie in
            var targets: [ExportTarget] = []
            let folderName = ExportNaming.component(
                ExportNaming.titled(movie.title, year: movie.year), suffix: suffixes[movie.id] ?? "")
            let folder = "Movies/" + folderName
            targets += versions(
                movie.versions, itemStem: folderName, itemName: ExportNaming.titled(movie.title, year: movie.year),
                folder: folder)
            if let poster = movie.poster { targets.append(file(folder + "/poster.jpg", poster, scope: "media")) }
            if let backdrop = movie.backdrop {
                targets.append(file(folder + "/backdrop.jpg", backdrop, scope: "media"))
            }
            return targets
        }.flatMap { $0 }
    }

    /// Media and subtitles of one item's versions: `stem.ext` for one version; with several, `stem - label.ext`
    /// (the first version without a label of its own keeps `stem.ext`).
    static func versions(_ versions: [ExportSource.Version], itemStem: String, itemName: String, folder: String)
        -> [ExportTarget]
    {
        var targets: [ExportTarget] = []
        var stems: [(id: String, stem: String)] = []
        for version in versions {
            let label =
                versions.count > 1
                ? ExportNaming.versionLabel(version.name, itemName: itemName, otherNames: [itemStem]) : ""
            stems.append((version.versionId, label.isEmpty ? itemStem : "\(itemStem) - \(label)"))
        }
        let suffixes = ExportNaming.resolve(stems)
        for (version, stem) in zip(versions, stems) {
            let suffix = suffixes[version.versionId] ?? ""
            targets.append(
                file(
                    folder + "/"
                        + ExportNaming.component(stem.stem, suffix: suffix, fileExtension: version.media.fileExtension),
                    version.media, scope: "media"))
            for subtitle in version.subtitles {
                let tail = "\(subtitle.language)\(subtitle.forced ? ".forced" : "").\(subtitle.format)"
                targets.append(
                    file(
                        folder + "/" + ExportNaming.component(stem.stem, suffix: suffix, fileExtension: tail),
                        subtitle.file, scope: "media"))
            }
        }
        return targets
    }

    static func series(_ allSeries: [ExportSource.Series], playlists: Bool) -> [ExportTarget] {
        let suffixes = ExportNaming.resolve(allSeries.map { ($0.id, ExportNaming.titled($0.title, year: $0.year)) })
        // Each series' names depend on nothing but the series and its suffix: made on every core, kept in order.
        return Parallel.map(allSeries) { series in
            var targets: [ExportTarget] = []
            let folder =
                "Shows/"
                + ExportNaming.component(
                    ExportNaming.titled(series.title, year: series.year), suffix: suffixes[series.id] ?? "")
            if let poster = series.poster { targets.append(file(folder + "/poster.jpg", poster, scope: "media")) }
            if let backdrop = series.backdrop {
                targets.append(file(folder + "/backdrop.jpg", backdrop, scope: "media"))
            }
            let seriesName = ExportNaming.clean(series.title)
            for season in series.seasons {
                let seasonName = ExportNaming.seasonFolder(season.number)
                let seasonFolder = folder + "/" + seasonName
                if let poster = season.poster {
                    targets.append(file(seasonFolder + "/folder.jpg", poster, scope: "media"))
                }
                let stems = season.episodes.map { episode in
                    (
                        id: episode.id,
                        stem: ExportNaming.episodeStem(
                            series: seriesName, season: season.number, episode: episode.number,
                            episodeEnd: episode.numberEnd,
                            title: episode.title)
                    )
                }
                let episodeSuffixes = ExportNaming.resolve(stems)
                var entries: [ExportPlaylist.Entry] = []
                let ordered = zip(season.episodes, stems).sorted { left, right in
                    (left.0.number ?? Int.max, left.0.id) < (right.0.number ?? Int.max, right.0.id)
                }
                for (episode, stem) in ordered {
                    let itemStem = ExportNaming.component(stem.stem, suffix: episodeSuffixes[episode.id] ?? "")
                    let made = versions(
                        episode.versions, itemStem: itemStem, itemName: episode.title ?? "", folder: seasonFolder)
                    targets += made
                    if let thumb = episode.thumb {
                        targets.append(
                            file(
                                seasonFolder + "/"
                                    + ExportNaming.component(itemStem, suffix: "-thumb", fileExtension: "jpg"), thumb,
                                scope: "media"))
                    }
                    if let first = made.first {
                        entries.append(
                            ExportPlaylist.Entry(
                                title: episode.title ?? itemStem, seconds: episode.runTimeSeconds, key: first.key))
                    }
                }
                if playlists && !entries.isEmpty {
                    targets.append(
                        ExportTarget(
                            path: seasonFolder + "/" + ExportNaming.component(seasonName, fileExtension: "m3u8"),
                            key: "playlist:season:\(series.id):\(season.number)", scope: "media",
                            content: .playlist(ExportPlaylist(entries))))
                }
            }
            return targets
        }.flatMap { $0 }
    }

    /// `Music/Album Artist/Album (Year)/[Disc-]Track - Title.ext`, lyrics beside each track with its name, the
    /// album's cover as `cover.jpg`.
    static func music(_ albums: [ExportSource.Album]) -> [ExportTarget] {
        func folder(_ album: ExportSource.Album) -> String {
            ExportNaming.component(album.artist ?? "Unknown Artist") + "/"
                + ExportNaming.titled(album.title, year: album.year)
        }
        let suffixes = ExportNaming.resolve(albums.map { ($0.id, folder($0)) })
        return Parallel.map(albums) { album in
            var targets: [ExportTarget] = []
            let artist = ExportNaming.component(album.artist ?? "Unknown Artist")
            let albumFolder =
                "Music/" + artist + "/"
                + ExportNaming.component(
                    ExportNaming.titled(album.title, year: album.year), suffix: suffixes[album.id] ?? "")
            if let cover = album.cover { targets.append(file(albumFolder + "/cover.jpg", cover, scope: "music")) }
            let severalDiscs = Set(album.tracks.map { $0.disc ?? 1 }).count > 1
            let stems = album.tracks.map { track in
                (
                    id: track.id,
                    stem: ExportNaming.trackStem(
                        disc: track.disc, number: track.number, title: track.title, severalDiscs: severalDiscs)
                )
            }
            let trackSuffixes = ExportNaming.resolve(stems)
            for (track, stem) in zip(album.tracks, stems) {
                let suffix = trackSuffixes[track.id] ?? ""
                targets.append(
                    file(
                        albumFolder + "/"
                            + ExportNaming.component(
                                stem.stem, suffix: suffix, fileExtension: track.media.fileExtension),
                        track.media, scope: "music"))
                if let lyrics = track.lyrics {
                    targets.append(
                        file(
                            albumFolder + "/" + ExportNaming.component(stem.stem, suffix: suffix, fileExtension: "lrc"),
                            lyrics, scope: "music"))
                }
            }
            return targets
        }.flatMap { $0 }
    }

    /// `Audiobooks/<Author>/<Title>/`: a book of one file as `<Title>.<ext>`, a book in parts as `NN - <Part>.<ext>`
    /// in play order (numbered from 01 by place, so every player lists them in order), and `cover.jpg`.
    static func audiobooks(_ books: [ExportSource.Audiobook]) -> [ExportTarget] {
        func folder(_ book: ExportSource.Audiobook) -> String {
            ExportNaming.component(book.author ?? "Unknown Author") + "/" + book.title
        }
        let suffixes = ExportNaming.resolve(books.map { ($0.id, folder($0)) })
        return books.flatMap { book in
            var targets: [ExportTarget] = []
            let bookFolder =
                "Audiobooks/" + ExportNaming.component(book.author ?? "Unknown Author") + "/"
                + ExportNaming.component(book.title, suffix: suffixes[book.id] ?? "")
            if let cover = book.cover { targets.append(file(bookFolder + "/cover.jpg", cover, scope: "books")) }
            let single = book.parts.count == 1
            let width = max(2, String(book.parts.count).count)
            let stems = book.parts.enumerated().map { position, part in
                let number = String(position + 1)
                let padded = String(repeating: "0", count: max(0, width - number.count)) + number
                return (id: part.id, stem: single ? book.title : padded + " - " + part.title)
            }
            let partSuffixes = ExportNaming.resolve(stems)
            for (part, stem) in zip(book.parts, stems) {
                targets.append(
                    file(
                        bookFolder + "/"
                            + ExportNaming.component(
                                stem.stem, suffix: partSuffixes[part.id] ?? "", fileExtension: part.media.fileExtension),
                        part.media, scope: "books"))
            }
            return targets
        }
    }

    /// `Books/<Author>/<Title>.<ext>`: each book's file as the server had it.
    static func books(_ books: [ExportSource.Book]) -> [ExportTarget] {
        func name(_ book: ExportSource.Book) -> String {
            ExportNaming.component(book.author ?? "Unknown Author") + "/" + book.title + "." + book.file.fileExtension
        }
        let suffixes = ExportNaming.resolve(books.map { ($0.id, name($0)) })
        return books.map { book in
            file(
                "Books/" + ExportNaming.component(book.author ?? "Unknown Author") + "/"
                    + ExportNaming.component(
                        book.title, suffix: suffixes[book.id] ?? "", fileExtension: book.file.fileExtension),
                book.file, scope: "books")
        }
    }

    /// `Playlists/Name.m3u8` for each playlist and collection, its entries in its order: a track, a movie or an
    /// episode by its file (the first version), an album or a series by all of its files. A list goes with the music
    /// when it holds a track, with the movies and shows otherwise.
    static func lists(_ source: ExportSource, scope: ExportScope?) -> [ExportTarget] {
        var files: [String: [ExportPlaylist.Entry]] = [:]
        var tracks = Set<String>()
        for album in source.albums {
            var all: [ExportPlaylist.Entry] = []
            for track in album.tracks {
                let entry = ExportPlaylist.Entry(
                    title: track.title, seconds: track.runTimeSeconds, key: track.media.key)
                files[track.id] = [entry]
                tracks.insert(track.id)
                all.append(entry)
            }
            files[album.id] = all
            tracks.insert(album.id)
        }
        for movie in source.movies {
            if let first = movie.versions.first {
                files[movie.id] = [ExportPlaylist.Entry(title: movie.title, seconds: nil, key: first.media.key)]
            }
        }
        for series in source.series {
            var all: [ExportPlaylist.Entry] = []
            for season in series.seasons {
                for episode in season.episodes.sorted(by: {
                    ($0.number ?? Int.max, $0.id) < ($1.number ?? Int.max, $1.id)
                }) {
                    guard let first = episode.versions.first else { continue }
                    let entry = ExportPlaylist.Entry(
                        title: episode.title ?? series.title, seconds: episode.runTimeSeconds, key: first.media.key)
                    files[episode.id] = [entry]
                    all.append(entry)
                }
            }
            files[series.id] = all
        }
        let names = ExportNaming.resolve(source.lists.map { ($0.id, $0.title) }, fileExtension: "m3u8")
        var targets: [ExportTarget] = []
        for list in source.lists {
            let entries = list.entries.flatMap { files[$0] ?? [] }
            guard !entries.isEmpty else { continue }
            let listScope: ExportScope = list.entries.contains(where: tracks.contains) ? .music : .media
            guard scope == nil || scope == listScope else { continue }
            targets.append(
                ExportTarget(
                    path: "Playlists/"
                        + ExportNaming.component(list.title, suffix: names[list.id] ?? "", fileExtension: "m3u8"),
                    key: "playlist:list:\(list.id)", scope: listScope.rawValue,
                    content: .playlist(ExportPlaylist(entries))))
        }
        return targets
    }

    static func podcasts(_ podcasts: [ExportSource.Podcast], playlists: Bool) -> [ExportTarget] {
        var targets: [ExportTarget] = []
        let suffixes = ExportNaming.resolve(podcasts.map { ($0.id, $0.title) })
        for podcast in podcasts {
            let folderName = ExportNaming.component(podcast.title, suffix: suffixes[podcast.id] ?? "")
            let folder = "Podcasts/" + folderName
            let ordered = podcast.episodes.sorted {
                ($0.published ?? "", $0.title, $0.id) < ($1.published ?? "", $1.title, $1.id)
            }
            let stems = ordered.map {
                (id: $0.id, stem: ExportNaming.podcastEpisodeStem(published: $0.published, title: $0.title))
            }
            let episodeSuffixes = ExportNaming.resolve(stems)
            var entries: [ExportPlaylist.Entry] = []
            for (episode, stem) in zip(ordered, stems) {
                let name = ExportNaming.component(
                    stem.stem, suffix: episodeSuffixes[episode.id] ?? "", fileExtension: episode.file.fileExtension)
                targets.append(file(folder + "/" + name, episode.file, scope: "podcasts"))
                entries.append(ExportPlaylist.Entry(title: episode.title, seconds: nil, key: episode.file.key))
            }
            if playlists && !entries.isEmpty {
                targets.append(
                    ExportTarget(
                        path: folder + "/" + ExportNaming.component(folderName, fileExtension: "m3u8"),
                        key: "playlist:podcast:\(podcast.id)",
                        scope: "podcasts", content: .playlist(ExportPlaylist(entries))))
            }
        }
        return targets
    }

    /// An extended M3U playlist in UTF-8 with paths relative to its own folder (see ``ExportPlaylist``).
    public static func playlist(_ entries: [(title: String, seconds: Int?, name: String)]) -> [UInt8] {
        var text = "#EXTM3U\n"
        for entry in entries {
            let title = entry.title.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
            text += "#EXTINF:\(entry.seconds ?? -1),\(title)\n\(entry.name)\n"
        }
        return Array(text.utf8)
    }

    private static func file(_ path: String, _ source: ExportSource.File, scope: String) -> ExportTarget {
        ExportTarget(path: path, key: source.key, scope: scope, content: .file(source))
    }

    /// The last safety net: two targets whose paths still fold alike (two subtitles of one language, names cut to
    /// the same 255 bytes) — the one with the smaller key keeps the path, the others get a disambiguator.
    static func separateCollisions(_ targets: [ExportTarget]) -> [ExportTarget] {
        let folded = Parallel.map(targets) { ExportNaming.foldKey($0.path) }
        var groups: [String: [Int]] = [:]
        groups.reserveCapacity(targets.count)
        for (position, key) in folded.enumerated() {
            groups[key, default: []].append(position)
        }
        var result = targets
        var used = Set(folded)
        for key in groups.filter({ $0.value.count > 1 }).keys.sorted() {
            guard let members = groups[key] else { continue }
            for position in members.sorted(by: { targets[$0].key < targets[$1].key }).dropFirst() {
                let path = targets[position].path
                let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
                let folder = String(path[..<slash])
                let name = String(path[slash...])
                let firstDot = name.firstIndex(of: ".") ?? name.endIndex
                let stem = String(name[..<firstDot])
                let tail = firstDot < name.endIndex ? String(name[name.index(after: firstDot)...]) : nil
                var extra = 0
                var candidate: String
                repeat {
                    let id = extra == 0 ? targets[position].key : targets[position].key + "#\(extra)"
                    candidate =
                        folder
                        + ExportNaming.component(stem, suffix: ExportNaming.disambiguator(id), fileExtension: tail)
                    extra += 1
                } while used.contains(ExportNaming.foldKey(candidate))
                used.insert(ExportNaming.foldKey(candidate))
                result[position].path = candidate
            }
        }
        return result
    }
}
