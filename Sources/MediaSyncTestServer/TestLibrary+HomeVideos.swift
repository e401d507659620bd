import Foundation
import MediaSyncCore

/// A home videos library, added on request (``TestLibrary/addHomeVideos(_:)``) so a library without it keeps its
/// views and ids.
///
/// In a library of `CollectionType` `homevideos` every video file is a plain `Video` item (`MovieResolver.Resolve`:
/// `ResolveVideo<Video>` for one file, L160–162, and `ResolveVideos<Video>` for a folder of them, L203–205,
/// v10.10.7), listed under the library's CollectionFolder; it has media sources, chapters and trickplay as a movie has.
extension TestLibrary {
    /// Id of the `homevideos` CollectionFolder ("" without home videos).
    public var homeVideosViewId: String { views.first(where: { $0.collectionType == "homevideos" })?.id ?? "" }

    /// Every home video (`Video`), in library order.
    public var homeVideos: [TestItem] { items.filter { $0.type == "Video" } }

    /// Adds a "Home Videos" library of `count` videos; deterministic from the seed. A library that already has one is
    /// left as it is. Returns the videos' ids.
    @discardableResult
    public mutating func addHomeVideos(_ count: Int = 2, mediaSize: Int = 4_000) -> [String] {
        let seed = self.seed
        func id(_ label: String) -> String { SplitMix64.hexID(seed: seed, label: label) }
        let view = id("view-homevideos")
        let ids = (0..<max(0, count)).map { id("home-video-\($0)") }
        guard homeVideosViewId.isEmpty else { return ids }
        let baseDate = 1_690_000_000.0 + 30_000_000
        views.append(
            TestItem(
                id: view, name: "Home Videos", type: "CollectionFolder", path: "/config/root/default/Home Videos",
                collectionType: "homevideos", imageTags: ["Primary": id("img-\(view)")],
                dateCreated: Date(timeIntervalSince1970: baseDate), etag: id("etag-\(view)"), isFolder: true))
        let ticks: Int64 = 1_800_000_000
        for (n, videoId) in ids.enumerated() {
            let name = "Holiday \(n + 1)"
            let created = Date(timeIntervalSince1970: baseDate + Double(n + 1) * 60)
            let path = "/media/Home Videos/\(name).mp4"
            let source = TestMediaSource(
                id: videoId, name: name, path: path, container: "mp4", size: mediaSize + n,
                etag: id("source-etag-\(videoId)"), runTimeTicks: ticks, lastModified: created)
            var video = TestItem(
                id: videoId, name: name, type: "Video", parentId: view, path: path, mediaSources: [source],
                imageTags: ["Primary": id("img-\(videoId)")], dateCreated: created, etag: id("etag-\(videoId)"),
                runTimeTicks: ticks, isFolder: false)
            video.mediaType = "Video"
            items.append(video)
        }
        return ids
    }
}
