import MediaSyncCore
import MediaSyncJSON

/// One chapter of a video (`ChapterInfo`): where it starts, its name, and its image's tag when it has one.
public struct Chapter: Sendable, Hashable {
    public var name: String?
    public var startPositionTicks: Int64?
    /// `ImageTag`: present only when the chapter has an image (it changes when the image is made again).
    public var imageTag: String?
}

extension BaseItem {
    /// `Chapters` (sent only when the `Chapters` field is requested, and only for videos), in order.
    public var chapters: [Chapter] {
        (raw["Chapters"]?.arrayValue ?? []).map { value in
            Chapter(
                name: value["Name"]?.stringValue, startPositionTicks: value["StartPositionTicks"]?.intValue,
                imageTag: value["ImageTag"]?.stringValue)
        }
    }

    /// `Trickplay`: media source id → width → its description (sent only when the `Trickplay` field is requested,
    /// by 10.9 and later; absent on 10.8). Entries that are not whole descriptions are skipped.
    public var trickplay: [String: [Int: TrickplayWidth]] {
        guard let sources = raw["Trickplay"]?.objectValue else { return [:] }
        var result: [String: [Int: TrickplayWidth]] = [:]
        for (sourceId, widths) in sources {
            guard let widths = widths.objectValue else { continue }
            for (key, value) in widths {
                guard let width = Int(key), let info = TrickplayWidth(json: value), info.width == width else {
                    continue
                }
                result[sourceId, default: [:]][width] = info
            }
        }
        return result
    }
}

extension MediaSource {
    /// `HasSegments` (10.10 and later): whether the version's item has media segments (intro, outro…).
    public var hasSegments: Bool? { raw["HasSegments"]?.boolValue }
}
