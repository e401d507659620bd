import Foundation
import MediaSyncCore
import MediaSyncJSON

/// A video's chapter (`ChapterInfo`, `MediaBrowser.Model/Entities/ChapterInfo.cs`, all four tags).
public struct TestChapter: Sendable, Equatable {
    public var name: String
    public var startPositionTicks: Int64
    /// When the chapter's image was extracted; nil for a chapter without an image (no `ImagePath`, no `ImageTag`,
    /// `ImageDateModified` `0001-01-01T00:00:00`).
    public var imageDateModified: Date?

    public init(name: String, startPositionTicks: Int64, imageDateModified: Date?) {
        self.name = name
        self.startPositionTicks = startPositionTicks
        self.imageDateModified = imageDateModified
    }
}

/// One trickplay width of a media source (`TrickplayInfo`, `Jellyfin.Data/Entities/TrickplayInfo.cs`, 10.9+).
public struct TestTrickplay: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var tileWidth: Int
    public var tileHeight: Int
    public var thumbnailCount: Int
    /// Milliseconds between thumbnails.
    public var interval: Int
    /// Bits per second of the tiles; nil for Jellyfin's own figure from the tiles' sizes (see
    /// ``JellyfinDTO/bandwidth(_:sourceId:)``).
    public var bandwidth: Int?
    /// Bump to change every tile's bytes (the server made the tiles again).
    public var contentVersion: Int = 0

    /// Jellyfin's defaults: 10 × 10 tiles, a thumbnail every 10 s (`TrickplayOptions` L40–55, v10.10.7).
    public init(
        width: Int, height: Int? = nil, tileWidth: Int = 10, tileHeight: Int = 10, thumbnailCount: Int,
        interval: Int = 10_000, bandwidth: Int? = nil
    ) {
        self.width = width
        self.height = height ?? width * 9 / 16
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.thumbnailCount = thumbnailCount
        self.interval = interval
        self.bandwidth = bandwidth
    }

    /// ⌈ThumbnailCount / (TileWidth × TileHeight)⌉ (`TrickplayManager.GetHlsPlaylist`, v10.10.7 L556).
    public var tileCount: Int {
        let per = max(1, tileWidth * tileHeight)
        return (thumbnailCount + per - 1) / per
    }
}

/// A media segment (`MediaSegmentDto`, 10.10+): `Type` one of `Unknown, Commercial, Preview, Recap, Outro, Intro`
/// (`Jellyfin.Data/Enums/MediaSegmentType.cs`, v10.10.7).
public struct TestSegment: Sendable, Equatable {
    public var id: String
    public var type: String
    public var startTicks: Int64
    public var endTicks: Int64

    public init(id: String, type: String, startTicks: Int64, endTicks: Int64) {
        self.id = id
        self.type = type
        self.startTicks = startTicks
        self.endTicks = endTicks
    }

    /// The types in the enum's order.
    public static let types = ["Unknown", "Commercial", "Preview", "Recap", "Outro", "Intro"]
}

extension TestLibrary {
    /// Gives every movie, episode and home video (their versions' items included) `count` chapters spread over the
    /// runtime, each with an image, and trickplay at `trickplayWidths` on each of its media sources, and an intro and
    /// an outro segment: what a Jellyfin server with chapter-image extraction, trickplay and an intro-skipper plugin
    /// holds. `thumbnailCount` nil: one thumbnail every 10 s of the version's runtime, as Jellyfin makes them.
    public mutating func addRichMedia(
        chapters count: Int = 3, trickplayWidths: [Int] = [320], thumbnailCount: Int? = 12, segments: Bool = true
    ) {
        let seed = self.seed
        for position in items.indices where !items[position].mediaSources.isEmpty {
            guard ["Movie", "Episode", "Video", "MusicVideo"].contains(items[position].type) else { continue }
            let runtime = items[position].runTimeTicks ?? 36_000_000_000
            let created = items[position].dateCreated
            items[position].chapters = (0..<max(0, count)).map { index in
                TestChapter(
                    name: "Chapter \(index + 1)", startPositionTicks: runtime / Int64(max(1, count)) * Int64(index),
                    imageDateModified: created.addingTimeInterval(Double(index + 1)))
            }
        }
        for source in allMediaSources where source.audio == nil && source.strmURL == nil {
            updateMediaSource(source.id) { changed in
                let thumbnails = thumbnailCount ?? Int(changed.runTimeTicks / 100_000_000)
                changed.trickplay = trickplayWidths.map { TestTrickplay(width: $0, thumbnailCount: thumbnails) }
                if segments {
                    let end = changed.runTimeTicks
                    changed.segments = [
                        TestSegment(
                            id: SplitMix64.hexID(seed: seed, label: "segment-intro-\(source.id)"), type: "Intro",
                            startTicks: 0, endTicks: min(end, 600_000_000)),
                        TestSegment(
                            id: SplitMix64.hexID(seed: seed, label: "segment-outro-\(source.id)"), type: "Outro",
                            startTicks: max(0, end - 600_000_000), endTicks: end),
                    ]
                }
            }
        }
    }

    /// A chapter's `ImageTag`: Jellyfin's is the MD5 of the item's `Path` and the image's `ImageDateModified` ticks
    /// (`SqliteItemRepository.GetChapter` L1932–1955, `ImageProcessor.GetImageCacheTag` L411–424, v10.10.7); here
    /// a hash of the same two things.
    public func chapterImageTag(_ item: TestItem, _ chapter: TestChapter) -> String? {
        guard let date = chapter.imageDateModified else { return nil }
        return SplitMix64.hexID(seed: seed, label: "chapter-\(item.path)-\(date.timeIntervalSince1970)")
    }
}

extension JellyfinDTO {
    /// `Chapters` of a video (`DtoService` L1061, inside `if (item is Video video)`, v10.10.7; 10.8.13 L1048,
    /// 10.9.11 L1057, 10.11.11 L1126): `ChapterInfo {StartPositionTicks, Name, ImagePath, ImageDateModified,
    /// ImageTag}`.
    static func chapters(_ item: TestItem, library: TestLibrary) -> JSONValue {
        .array(
            item.chapters.enumerated().map { index, chapter in
                var m: [JSONMember] = [
                    JSONMember("StartPositionTicks", .int(chapter.startPositionTicks)),
                    JSONMember("Name", .string(chapter.name)),
                ]
                if let modified = chapter.imageDateModified, let tag = library.chapterImageTag(item, chapter) {
                    m.append(
                        JSONMember(
                            "ImagePath", .string("/config/metadata/library/\(item.id)/chapters/\(index).jpg")))
                    m.append(JSONMember("ImageDateModified", .string(date(modified))))
                    m.append(JSONMember("ImageTag", .string(tag)))
                } else {
                    m.append(JSONMember("ImageDateModified", .string("0001-01-01T00:00:00.0000000Z")))
                }
                return .members(m)
            })
    }

    /// `Trickplay` of a video (10.9+, `DtoService` L1066–1069; `TrickplayManager.GetTrickplayManifest` L504–523,
    /// v10.10.7): one entry per local media source that has trickplay, keyed by its id, then by width; `{}` when none.
    static func trickplay(_ item: TestItem) -> JSONValue {
        .members(
            item.mediaSources.filter { !$0.trickplay.isEmpty && $0.strmURL == nil }.map { source in
                JSONMember(
                    source.id,
                    .members(
                        source.trickplay.sorted { $0.width < $1.width }.map { info in
                            JSONMember(
                                String(info.width),
                                .members([
                                    JSONMember("Width", .integer(info.width)),
                                    JSONMember("Height", .integer(info.height)),
                                    JSONMember("TileWidth", .integer(info.tileWidth)),
                                    JSONMember("TileHeight", .integer(info.tileHeight)),
                                    JSONMember("ThumbnailCount", .integer(info.thumbnailCount)),
                                    JSONMember("Interval", .integer(info.interval)),
                                    JSONMember(
                                        "Bandwidth", .integer(info.bandwidth ?? bandwidth(info, sourceId: source.id))),
                                ]))
                        }))
            })
    }
}

extension JellyfinDTO {
    /// `Bandwidth` as Jellyfin figures it when it makes the tiles: the most bits per second of thumbnail time of any
    /// tile, ⌈bytes × 8 / TileWidth / TileHeight / (Interval / 1000)⌉ (`TrickplayManager` L384–385, v10.10.7).
    static func bandwidth(_ info: TestTrickplay, sourceId: String) -> Int {
        let seconds = Double(info.interval) / 1000
        let largest =
            (0..<info.tileCount).map { TestServer.trickplayTileSize(sourceId: sourceId, info: info, index: $0) }
            .max() ?? 0
        return Int((Double(largest * 8) / Double(info.tileWidth) / Double(info.tileHeight) / seconds).rounded(.up))
    }
}

extension TestServer {
    static func tileLabel(sourceId: String, info: TestTrickplay, index: Int) -> String {
        "tile-\(sourceId)-\(info.width)-\(index)-\(info.contentVersion)"
    }

    /// The size of one trickplay tile (see ``trickplayTileBytes(sourceId:info:index:)``).
    public static func trickplayTileSize(sourceId: String, info: TestTrickplay, index: Int) -> Int {
        4 + 900 + Int(SplitMix64.hash(tileLabel(sourceId: sourceId, info: info, index: index)) % 256)
    }

    /// The bytes of one trickplay tile: a JPEG start and deterministic bytes (about 1 KiB).
    public static func trickplayTileBytes(sourceId: String, info: TestTrickplay, index: Int) -> [UInt8] {
        let label = tileLabel(sourceId: sourceId, info: info, index: index)
        let size = trickplayTileSize(sourceId: sourceId, info: info, index: index) - 4
        return [0xFF, 0xD8, 0xFF, 0xE0] + SplitMix64.bytes(seed: SplitMix64.hash(label), count: size)
    }

    /// The bytes of a chapter image (the same shape as other images, from its tag).
    public static func chapterImageBytes(tag: String) -> [UInt8] {
        imageBytes(tag: "chapter-\(tag)")
    }

    /// Chapter images, trickplay and media segments; nil when the request is none of those routes.
    func richMediaResponse(_ request: RecordedRequest) -> HTTPResponse? {
        let route = RoutePath(request.path)
        let isGet = request.method == "GET" || request.method == "HEAD"
        let profile = self.profile
        if let c = route.match(["items", "*", "images", "chapter", "*"]), isGet {
            return chapterImage(request, itemId: c[0], index: c[1])
        }
        let trickplayPlaylist = route.match(["videos", "*", "trickplay", "*", "tiles.m3u8"])
        let trickplayTile = trickplayPlaylist == nil ? route.match(["videos", "*", "trickplay", "*", "*"]) : nil
        let segments = route.match(["mediasegments", "*"])
        guard trickplayPlaylist != nil || trickplayTile != nil || segments != nil else { return nil }
        // No such routes before their version: `TrickplayController` is new in 10.9, `MediaSegmentsController` in
        // 10.10 (absent from 10.8.13, and 10.9.11 for segments). ASP.NET answers an unknown route 404.
        if segments != nil, profile == .v10_8 || profile == .v10_9 { return .empty(404) }
        if segments == nil, profile == .v10_8 { return .empty(404) }
        guard isGet else { return .empty(405) }
        let library = self.library
        // Every one is `[Authorize]` (`TrickplayController` L50/L79, `MediaSegmentsController` L45, v10.10.7).
        guard caller(request, library: library) != .anonymous else { return .empty(401) }
        if let c = segments {
            return mediaSegments(request, itemId: c[0], library: library)
        }
        if let c = trickplayPlaylist {
            return playlist(request, itemId: c[0], width: c[1], library: library)
        }
        if let c = trickplayTile {
            return tile(request, itemId: c[0], width: c[1], file: c[2], library: library)
        }
        return nil
    }

    /// `GET /Items/{id}/Images/Chapter/{index}` (`ImageController.GetItemImageByIndex` L623, anonymous; the chapter
    /// at that index, `BaseItem.GetImageInfo` L2032–2056): none, or one without an image, is 404 with the JSON string
    /// `"<name> does not have an image of type Chapter"` (L1948, v10.10.7).
    func chapterImage(_ request: RecordedRequest, itemId: String, index: String) -> HTTPResponse {
        let library = self.library
        guard let item = library.item(withId: TestServer.normalizeID(itemId)) else { return .empty(404) }
        guard let position = Int(index), position >= 0, position < item.chapters.count,
            let tag = library.chapterImageTag(item, item.chapters[position])
        else {
            return .json(.string("\(item.name) does not have an image of type Chapter"), status: 404)
        }
        let cacheControl = request.queryValue("tag") != nil ? "public, max-age=31536000" : "public"
        var file = ServedFile(
            contents: TestServer.chapterImageBytes(tag: tag), lastModified: item.dateCreated,
            contentType: "image/jpeg", etag: "\"\(tag)\"", contentDispositionFilename: nil)
        file.extraHeaders = [("Cache-Control", cacheControl)]
        return file.response(method: request.method, headers: request.headers)
    }

    /// The trickplay widths of the media source `id` (a version is its own item, so its id names it either way).
    func trickplayInfo(sourceId: String, width: String, library: TestLibrary) -> (TestMediaSource, TestTrickplay)? {
        guard let wanted = Int(width), let source = library.mediaSource(withId: TestServer.normalizeID(sourceId)),
            let info = source.trickplay.first(where: { $0.width == wanted })
        else { return nil }
        return (source, info)
    }

    /// `GET /Videos/{itemId}/Trickplay/{width}/tiles.m3u8?mediaSourceId=` (`TrickplayController` L50–67,
    /// `TrickplayManager.GetHlsPlaylist` L538–608, v10.10.7): the playlist of `mediaSourceId ?? itemId`; 404 for a
    /// width it lacks; the tile URLs carry the caller's token as `api_key=` (10.11.11 L606: `ApiKey=`).
    func playlist(_ request: RecordedRequest, itemId: String, width: String, library: TestLibrary) -> HTTPResponse {
        let id = request.queryValue("mediaSourceId").map(TestServer.normalizeID) ?? TestServer.normalizeID(itemId)
        guard let (source, info) = trickplayInfo(sourceId: id, width: width, library: library),
            info.thumbnailCount > 0
        else {
            return .empty(404)
        }
        let token = TestServer.authorizationParameters(request.headers["authorization"])?["token"] ?? ""
        let key = profile == .v10_11 ? "ApiKey" : "api_key"
        let width = TrickplayWidth(
            width: info.width, height: info.height, tileWidth: info.tileWidth, tileHeight: info.tileHeight,
            thumbnailCount: info.thumbnailCount, interval: info.interval, bandwidth: info.bandwidth ?? 0)
        guard let text = TrickplayText.playlist(width, mediaSourceId: source.id, tokenKey: key, token: token) else {
            return .empty(404)
        }
        return .text(text, status: 200, contentType: "application/x-mpegURL")
    }

    /// `GET /Videos/{itemId}/Trickplay/{width}/{index}.jpg` (`TrickplayController` L79–104): 10.9.11 and 10.10.7 take
    /// the tile of `itemId` and ignore `mediaSourceId`; 10.11.11 L89 uses `mediaSourceId ?? itemId`. 404 past the
    /// last tile; `image/jpeg`, `Content-Disposition: attachment`, ranges.
    func tile(_ request: RecordedRequest, itemId: String, width: String, file: String, library: TestLibrary)
        -> HTTPResponse
    {
        guard file.lowercased().hasSuffix(".jpg"), let index = Int(file.dropLast(4)), index >= 0 else {
            return .empty(404)
        }
        let id =
            profile == .v10_11
            ? request.queryValue("mediaSourceId").map(TestServer.normalizeID) ?? TestServer.normalizeID(itemId)
            : TestServer.normalizeID(itemId)
        guard let (source, info) = trickplayInfo(sourceId: id, width: width, library: library), index < info.tileCount
        else {
            return .empty(404)
        }
        let served = ServedFile(
            contents: TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: index),
            lastModified: source.lastModified, contentType: "image/jpeg", etag: nil,
            contentDispositionFilename: "\(index).jpg")
        return served.response(method: request.method, headers: request.headers)
    }

    /// `GET /MediaSegments/{itemId}?includeSegmentTypes=` (10.10+, `MediaSegmentsController` L45–60; 404 for an
    /// unknown item): `{Items, TotalRecordCount, StartIndex: 0}` ordered by `StartTicks`
    /// (`MediaSegmentManager.GetSegmentsAsync` L156–189, v10.10.7). The filter is read as one value or a comma list
    /// here (this server keeps one value per query key).
    func mediaSegments(_ request: RecordedRequest, itemId: String, library: TestLibrary) -> HTTPResponse {
        let id = TestServer.normalizeID(itemId)
        guard let item = library.item(withId: id) else { return .empty(404) }
        let source = item.mediaSources.first { $0.id == id } ?? item.mediaSources.first
        let wanted = request.queryValue("includeSegmentTypes").map {
            Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        }
        let segments = (source?.segments ?? []).filter { wanted?.contains($0.type.lowercased()) ?? true }
            .sorted { $0.startTicks < $1.startTicks }
        let items: [JSONValue] = segments.map { segment in
            .members([
                JSONMember("Id", .string(segment.id)), JSONMember("ItemId", .string(id)),
                JSONMember("Type", .string(segment.type)), JSONMember("StartTicks", .int(segment.startTicks)),
                JSONMember("EndTicks", .int(segment.endTicks)),
            ])
        }
        return .json(JellyfinDTO.queryResult(items, total: items.count, startIndex: 0))
    }
}
