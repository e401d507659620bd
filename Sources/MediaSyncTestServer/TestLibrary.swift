import Foundation
import MediaSyncCore

/// A generated, deterministic Jellyfin library (same arguments ⇒ same ids, names, sizes and bytes).
///
/// Layout: two CollectionFolder views (`movies`, `tvshows`); movies under the movies view; series under
/// the tvshows view, seasons under series, episodes under seasons. Movie 0 has two versions: its own
/// MediaSource (id = movie id) and a second one whose id is a separate hidden item (`isAlternateVersion`).
/// Music, playlists and box sets are added on request (`music:` or ``addMusic(_:)``, see `TestLibrary+Music.swift`).
public struct TestLibrary: Sendable, Equatable {
    /// Login name accepted by `/Users/AuthenticateByName`.
    public var userName = "demo"
    /// Password accepted by `/Users/AuthenticateByName`.
    public var password = "demo"
    /// The user's id.
    public var userId: String
    /// The server id (`Id` in `/System/Info/Public`, `ServerId` everywhere).
    public var serverId: String
    /// `ServerName` in `/System/Info/Public`.
    public var serverName = "mediasync test server"
    /// User access token returned by authentication; accepted in `Authorization: MediaBrowser Token="..."`.
    public var accessToken: String
    /// An admin API key; also accepted as token (and allowed to call `/Items` without `userId`).
    public var apiKey: String
    /// Number of `/QuickConnect/Connect` polls answered with `Authenticated: false` before it flips to true.
    public var quickConnectPollsBeforeAuthorized = 2
    /// Library views the user may no longer access (an administrator took the library away): they leave
    /// `/UserViews`, a listing below them answers 401 with a text body, their items answer 404 by id and on
    /// Download, and `/Users/Me` still answers 200 (`ItemsController.GetItems` L298–306, v10.10.7).
    public var inaccessibleViews: Set<String> = [] {
        didSet { lookup = LibraryLookup() }
    }
    /// The user's `Policy.EnableContentDownloading`: without it Download answers 403 with an empty body before
    /// the item is looked up (`[Authorize(Policy = Policies.Download)]` on `LibraryController.GetDownload` L662).
    public var userMayDownload = true
    /// The user's `Policy.EnableVideoPlaybackTranscoding`: without it PlaybackInfo still offers a transcode, and its
    /// HLS stream copies the original video (`EncodingHelper.TryStreamCopy`, 10.11.11 L7129).
    public var userMayTranscode = true
    /// The seed everything is derived from.
    public var seed: UInt64
    /// The library views: movies first, then tvshows (CollectionFolders); with music then `music`, the playlists
    /// folder and `boxsets`.
    public var views: [TestItem] {
        didSet { lookup = LibraryLookup() }
    }
    /// All items (movies incl. the hidden alternate version, series, seasons, episodes), in library order.
    public var items: [TestItem] {
        didSet { lookup = LibraryLookup() }
    }
    /// The ids of the music special cases, once ``addMusic(_:)`` ran.
    public var musicIds: MusicIds?
    /// Playlist loads so far (see ``reloadPlaylists()``): 10.8/10.9's `PlaylistItemId`s are derived from it.
    public var playlistLoads = 0
    /// Indexes over `items`, rebuilt lazily after any change.
    var lookup = LibraryLookup()

    /// Id of the `movies` CollectionFolder.
    public var moviesViewId: String { views.first(where: { $0.collectionType == "movies" })?.id ?? "" }
    /// Id of the `tvshows` CollectionFolder.
    public var showsViewId: String { views.first(where: { $0.collectionType == "tvshows" })?.id ?? "" }

    /// Generates a library.
    /// - Parameters:
    ///   - mediaSize: base file size; each media source gets `mediaSize` plus a small per-item extra.
    ///   - seed: changes every id, tag and byte.
    ///   - music: music, playlists and box sets to add (none by default; see ``addMusic(_:)``).
    public init(
        movies: Int = 2, series: Int = 1, seasonsPerSeries: Int = 2, episodesPerSeason: Int = 3,
        mediaSize: Int = 64 * 1024, seed: UInt64 = 1, music: MusicSpec? = nil
    ) {
        self.seed = seed
        func id(_ label: String) -> String { SplitMix64.hexID(seed: seed, label: label) }
        func sizeFor(_ label: String) -> Int {
            let spread = UInt64(max(1, min(4096, mediaSize / 8)))
            return max(0, mediaSize) + Int(SplitMix64.hash("size-\(seed)-\(label)") % spread)
        }
        userId = id("user")
        serverId = id("server")
        accessToken = id("token")
        apiKey = id("apikey")
        let moviesView = id("view-movies")
        let showsView = id("view-tvshows")
        let baseDate = 1_690_000_000.0
        var counter = 0
        func nextDate() -> Date {
            counter += 1
            return Date(timeIntervalSince1970: baseDate + Double(counter) * 3600)
        }
        views = [
            TestItem(
                id: moviesView, name: "Movies", type: "CollectionFolder", path: "/config/root/default/Movies",
                collectionType: "movies", imageTags: ["Primary": id("img-\(moviesView)")],
                dateCreated: Date(timeIntervalSince1970: baseDate), etag: id("etag-\(moviesView)"), isFolder: true),
            TestItem(
                id: showsView, name: "Shows", type: "CollectionFolder", path: "/config/root/default/Shows",
                collectionType: "tvshows", imageTags: ["Primary": id("img-\(showsView)")],
                dateCreated: Date(timeIntervalSince1970: baseDate), etag: id("etag-\(showsView)"), isFolder: true),
        ]
        var items: [TestItem] = []
        let movieTicks: Int64 = 36_000_000_000
        let episodeTicks: Int64 = 13_200_000_000
        for m in 0..<max(0, movies) {
            let movieId = id("movie-\(m)")
            let year = 2000 + m
            let title = "Test Movie \(m + 1)"
            let folder = "/media/Movies/\(title) (\(year))"
            let created = nextDate()
            let primary = TestMediaSource(
                id: movieId, name: "\(title) (\(year))", path: "\(folder)/\(title) (\(year)).mkv",
                size: sizeFor(movieId), etag: id("source-etag-\(movieId)"),
                runTimeTicks: movieTicks, lastModified: created)
            var sources = [primary]
            var alternate: TestItem?
            if m == 0 {
                let altId = id("movie-\(m)-version-2")
                let altSource = TestMediaSource(
                    id: altId, name: "\(title) (\(year)) - 720p",
                    path: "\(folder)/\(title) (\(year)) - 720p.mkv",
                    size: sizeFor(altId), etag: id("source-etag-\(altId)"),
                    runTimeTicks: movieTicks, lastModified: created)
                sources.append(altSource)
                alternate = TestItem(
                    id: altId, name: title, type: "Movie", parentId: moviesView, productionYear: year,
                    path: altSource.path, mediaSources: [altSource],
                    imageTags: ["Primary": id("img-\(altId)")], dateCreated: created,
                    etag: id("etag-\(altId)"), runTimeTicks: movieTicks, isFolder: false,
                    isAlternateVersion: true)
            }
            items.append(
                TestItem(
                    id: movieId, name: title, type: "Movie", parentId: moviesView, productionYear: year,
                    path: primary.path, mediaSources: sources,
                    imageTags: ["Primary": id("img-\(movieId)")],
                    backdropImageTags: [id("backdrop-\(movieId)")], played: m % 2 == 1,
                    playbackPositionTicks: m == 0 ? 6_000_000_000 : 0, dateCreated: created,
                    etag: id("etag-\(movieId)"), runTimeTicks: movieTicks, isFolder: false))
            if let alternate { items.append(alternate) }
        }
        for s in 0..<max(0, series) {
            let seriesId = id("series-\(s)")
            let seriesName = "Test Series \(s + 1)"
            let seriesPath = "/media/Shows/\(seriesName)"
            items.append(
                TestItem(
                    id: seriesId, name: seriesName, type: "Series", parentId: showsView,
                    productionYear: 2010 + s, path: seriesPath,
                    imageTags: ["Primary": id("img-\(seriesId)")],
                    backdropImageTags: [id("backdrop-\(seriesId)")], dateCreated: nextDate(),
                    etag: id("etag-\(seriesId)"), isFolder: true))
            for n in 0..<max(0, seasonsPerSeries) {
                let seasonId = id("season-\(s)-\(n)")
                let seasonName = "Season \(n + 1)"
                let seasonNumber = n + 1
                let twoDigit = seasonNumber < 10 ? "0\(seasonNumber)" : "\(seasonNumber)"
                let seasonPath = "\(seriesPath)/Season \(twoDigit)"
                items.append(
                    TestItem(
                        id: seasonId, name: seasonName, type: "Season", parentId: seriesId,
                        seriesId: seriesId, seriesName: seriesName, indexNumber: seasonNumber,
                        path: seasonPath, imageTags: ["Primary": id("img-\(seasonId)")],
                        dateCreated: nextDate(), etag: id("etag-\(seasonId)"), isFolder: true))
                for e in 0..<max(0, episodesPerSeason) {
                    let episodeId = id("episode-\(s)-\(n)-\(e)")
                    let episodeNumber = e + 1
                    let epTwo = episodeNumber < 10 ? "0\(episodeNumber)" : "\(episodeNumber)"
                    let episodeName = "Episode \(episodeNumber)"
                    let base = "\(seriesName) - S\(twoDigit)E\(epTwo) - \(episodeName)"
                    let created = nextDate()
                    let source = TestMediaSource(
                        id: episodeId, name: base, path: "\(seasonPath)/\(base).mkv",
                        size: sizeFor(episodeId), etag: id("source-etag-\(episodeId)"),
                        runTimeTicks: episodeTicks, lastModified: created)
                    items.append(
                        TestItem(
                            id: episodeId, name: episodeName, type: "Episode", parentId: seasonId,
                            seriesId: seriesId, seriesName: seriesName, seasonId: seasonId,
                            seasonName: seasonName, indexNumber: episodeNumber,
                            parentIndexNumber: seasonNumber, productionYear: 2010 + s,
                            path: source.path, mediaSources: [source],
                            imageTags: ["Primary": id("img-\(episodeId)")],
                            played: e == 0, dateCreated: created, etag: id("etag-\(episodeId)"),
                            runTimeTicks: episodeTicks, isFolder: false))
                }
            }
        }
        self.items = items
        if let music { addMusic(music) }
    }

    // MARK: Queries

    /// Listed movies (excluding hidden alternate versions).
    public var movies: [TestItem] { items.filter { $0.type == "Movie" && !$0.isAlternateVersion } }
    /// All series.
    public var series: [TestItem] { items.filter { $0.type == "Series" } }
    /// All seasons.
    public var seasons: [TestItem] { items.filter { $0.type == "Season" } }
    /// All episodes.
    public var episodes: [TestItem] { items.filter { $0.type == "Episode" } }

    /// The item (or view) with this id.
    public func item(withId id: String) -> TestItem? {
        let lowered = id.lowercased()
        if let position = lookup.tables(for: self).position[lowered] { return items[position] }
        return views.first(where: { $0.id == lowered })
    }

    /// The media source with this id (first occurrence; copies on other items are kept in sync by the mutators).
    public func mediaSource(withId id: String) -> TestMediaSource? {
        let lowered = id.lowercased()
        for item in items {
            if let source = item.mediaSources.first(where: { $0.id == lowered }) { return source }
        }
        return nil
    }

    /// Every distinct media source, in library order.
    public var allMediaSources: [TestMediaSource] {
        var seen = Set<String>()
        var result: [TestMediaSource] = []
        for item in items {
            for source in item.mediaSources where !seen.contains(source.id) {
                seen.insert(source.id)
                result.append(source)
            }
        }
        return result
    }

    /// Deterministic pseudo-random bytes of the media source (size = its `size`), or nil for an unknown id.
    public func mediaBytes(forMediaSourceId id: String) -> [UInt8]? {
        guard let source = mediaSource(withId: id) else { return nil }
        return TestLibrary.bytes(of: source, seed: seed)
    }

    static func bytes(of source: TestMediaSource, seed: UInt64) -> [UInt8] {
        if let override = source.contentOverride { return override }
        let mixed = seed ^ SplitMix64.hash("media-\(source.id)") ^ (source.contentVersion &* 0x9E37_79B9_7F4A_7C15)
        return SplitMix64.bytes(seed: mixed, count: source.size)
    }

    // MARK: Mutations (for reconciliation tests)

    /// Applies `change` to every copy of the media source `id` (a movie's version list and the version's own item).
    public mutating func updateMediaSource(_ id: String, _ change: (inout TestMediaSource) -> Void) {
        let lowered = id.lowercased()
        for i in items.indices {
            for j in items[i].mediaSources.indices where items[i].mediaSources[j].id == lowered {
                change(&items[i].mediaSources[j])
            }
        }
    }

    /// Replaces a media source's bytes; updates its `size`, gives it a new `etag` and bumps `lastModified`.
    public mutating func setMediaBytes(_ bytes: [UInt8], forMediaSourceId id: String) {
        let seed = self.seed
        updateMediaSource(id) { source in
            source.contentOverride = bytes
            source.size = bytes.count
            source.contentVersion &+= 1
            source.etag = SplitMix64.hexID(seed: seed, label: "source-etag-\(source.id)-v\(source.contentVersion)")
            source.lastModified = source.lastModified.addingTimeInterval(60)
        }
    }

    /// Changes a media source's generated bytes (same size), new `etag`, `lastModified` + 60 s.
    public mutating func changeMediaContent(ofMediaSourceId id: String) {
        let seed = self.seed
        updateMediaSource(id) { source in
            source.contentOverride = nil
            source.contentVersion &+= 1
            source.etag = SplitMix64.hexID(seed: seed, label: "source-etag-\(source.id)-v\(source.contentVersion)")
            source.lastModified = source.lastModified.addingTimeInterval(60)
        }
    }

    /// Removes an item and all its descendants (and its versions from other items' lists).
    public mutating func removeItem(withId id: String) {
        let lowered = id.lowercased()
        var doomed: Set<String> = [lowered]
        // A removed movie takes its alternate-version items with it.
        for item in items where item.id == lowered {
            for source in item.mediaSources where source.id != lowered { doomed.insert(source.id) }
        }
        var changed = true
        while changed {
            changed = false
            for item in items where !doomed.contains(item.id) {
                if let parent = item.parentId, doomed.contains(parent) {
                    doomed.insert(item.id)
                    changed = true
                }
            }
        }
        items.removeAll { doomed.contains($0.id) }
        for i in items.indices {
            let ownId = items[i].id
            items[i].mediaSources.removeAll { doomed.contains($0.id) && $0.id != ownId }
        }
    }
}
