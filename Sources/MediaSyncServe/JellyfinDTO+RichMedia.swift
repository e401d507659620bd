import MediaSyncCore
import MediaSyncJSON
import MediaSyncMirror

/// Chapters, trickplay and media segments, answered from what the mirror holds.
extension JellyfinDTO {
    /// The item types whose DTO carries `Chapters` and `Trickplay`: videos (`DtoService` fills them inside
    /// `if (item is Video video)`, L1061–1069, v10.10.7).
    static let videoTypes: Set<String> = ["Movie", "Episode", "Video", "MusicVideo"]

    /// `Chapters` as the home server gave them, without its `ImagePath` (a path on its disk); a chapter whose image
    /// the mirror does not hold has no `ImageTag` (a client asks for the image only with one). Nil for a non-video.
    /// - Parameter raw: the item's upstream object, when the caller has it parsed.
    func chapters(_ item: CatalogItem, raw: JSONObject? = nil) -> JSONValue? {
        guard Self.videoTypes.contains(item.type), item.isPlayable else { return nil }
        let upstream = (raw ?? item.raw)["Chapters"]?.arrayValue ?? []
        return .array(
            upstream.enumerated().map { index, value in
                guard var chapter = value.objectValue else { return value }
                chapter["ImagePath"] = nil
                if item.images[LibraryLayout.chapterImageType(index)] == nil { chapter["ImageTag"] = nil }
                return .object(chapter)
            })
    }

    /// `Trickplay`: the home server's description of each width whose every tile the mirror holds, by version id
    /// and width (`TrickplayManager.GetTrickplayManifest`, L504–523, v10.10.7: `{}` when there is none). Nil for a
    /// non-video, and for an item from a home server without trickplay (10.8 sends no such field).
    func trickplay(_ item: CatalogItem) -> JSONValue? {
        guard Self.videoTypes.contains(item.type), item.isPlayable, item.upstream("Trickplay") != nil else {
            return nil
        }
        var sources = JSONObject()
        for version in item.versions {
            var widths = JSONObject()
            for (width, _, raw) in Self.heldTrickplay(item, version) { widths[String(width)] = raw }
            if !widths.members.isEmpty { sources[version.id] = .object(widths) }
        }
        return .object(sources)
    }

    /// The widths of a version whose tiles are all held: each with its description (typed and as the server sent it).
    static func heldTrickplay(_ item: CatalogItem, _ version: HeldVersion) -> [(Int, TrickplayWidth, JSONValue)] {
        guard !version.trickplay.isEmpty, let upstream = item.upstream("Trickplay")?[version.id]?.objectValue else {
            return []
        }
        var result: [(Int, TrickplayWidth, JSONValue)] = []
        for (width, tiles) in version.trickplay.sorted(by: { $0.key < $1.key }) {
            guard let raw = upstream[String(width)], let info = TrickplayWidth(json: raw), info.width == width,
                info.tileCount > 0, (0..<info.tileCount).allSatisfy({ tiles[$0] != nil })
            else { continue }
            result.append((width, info, raw))
        }
        return result
    }
}
