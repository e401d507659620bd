/// The stable logical name of a mirrored file, independent of its path: what the index, the plan and the executor call
/// it. Made only by the typed constructors below; read back from the index as it was stored (``init(rawValue:)``).
///
/// | file | stored as |
/// |---|---|
/// | a version's media | `media:<itemId>:<versionId>` |
/// | an external subtitle | `subtitle:<itemId>:<versionId>:<streamIndex>` |
/// | an image | `image:<itemId>:<imageType>` |
/// | a movie's, series', season's, album's, playlist's or collection's `metadata.json` | `metadata:<itemId>` |
/// | a track's lyrics | `lyrics:<itemId>` |
/// | a chapter image | `image:<itemId>:Chapter-<index>` |
/// | a trickplay tile | `trickplay:<itemId>:<versionId>:<width>:<index>` |
/// | a version's media segments | `segments:<itemId>:<versionId>` |
/// | a podcast episode's enclosure | `podcast:<podcastId>:<episodeId>` |
/// | an episode extra (transcript, chapters, image) | `podcast-extra:<podcastId>:<episodeId>:<what>` |
/// | a podcast's metadata | `podcast-metadata:<podcastId>` |
///
/// Ids are single path segments (``SafeName/id(_:)``) and never contain `:`.
public struct FileKey: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// A key as the index stored it (the spellings above, or one of an older version).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: FileKey, rhs: FileKey) -> Bool { lhs.rawValue < rhs.rawValue }

    // MARK: Making one

    public static func media(itemId: String, versionId: String) -> FileKey {
        FileKey(rawValue: "media:\(itemId):\(versionId)")
    }

    public static func subtitle(itemId: String, versionId: String, streamIndex: Int) -> FileKey {
        FileKey(rawValue: "subtitle:\(itemId):\(versionId):\(streamIndex)")
    }

    public static func image(itemId: String, type: String) -> FileKey {
        FileKey(rawValue: "image:\(itemId):\(type)")
    }

    public static func metadata(itemId: String) -> FileKey {
        FileKey(rawValue: "metadata:\(itemId)")
    }

    public static func lyrics(itemId: String) -> FileKey {
        FileKey(rawValue: "lyrics:\(itemId)")
    }

    public static func trickplay(itemId: String, versionId: String, width: Int, index: Int) -> FileKey {
        FileKey(rawValue: "trickplay:\(itemId):\(versionId):\(width):\(index)")
    }

    public static func segments(itemId: String, versionId: String) -> FileKey {
        FileKey(rawValue: "segments:\(itemId):\(versionId)")
    }

    public static func podcastEpisode(podcastId: String, episodeId: String) -> FileKey {
        FileKey(rawValue: "podcast:\(podcastId):\(episodeId)")
    }

    public static func podcastExtra(podcastId: String, episodeId: String, what: String) -> FileKey {
        FileKey(rawValue: "podcast-extra:\(podcastId):\(episodeId):\(what)")
    }

    public static func podcastMetadata(podcastId: String) -> FileKey {
        FileKey(rawValue: "podcast-metadata:\(podcastId)")
    }

    // MARK: Reading one

    /// What a key names, parsed.
    public enum Parts: Hashable, Sendable {
        case media(itemId: String, versionId: String)
        case subtitle(itemId: String, versionId: String, streamIndex: Int)
        case image(itemId: String, type: String)
        case metadata(itemId: String)
        case lyrics(itemId: String)
        case trickplay(itemId: String, versionId: String, width: Int, index: Int)
        case segments(itemId: String, versionId: String)
        case podcastEpisode(podcastId: String, episodeId: String)
        case podcastExtra(podcastId: String, episodeId: String, what: String)
        case podcastMetadata(podcastId: String)
    }

    /// The parts of a key made by this version; nil for a spelling it does not know.
    public var parts: Parts? {
        guard let colon = rawValue.firstIndex(of: ":") else { return nil }
        let prefix = rawValue[..<colon]
        let rest = String(rawValue[rawValue.index(after: colon)...])
        func split(first: Int) -> [String]? {
            // `first` fields without a colon, then the rest as one field.
            var fields: [String] = []
            var remainder = Substring(rest)
            for _ in 0..<first {
                guard let next = remainder.firstIndex(of: ":") else { return nil }
                fields.append(String(remainder[..<next]))
                remainder = remainder[remainder.index(after: next)...]
            }
            fields.append(String(remainder))
            return fields.allSatisfy({ !$0.isEmpty }) ? fields : nil
        }
        func lastField(_ text: String) -> (String, String)? {
            guard let last = text.lastIndex(of: ":") else { return nil }
            let head = String(text[..<last])
            let tail = String(text[text.index(after: last)...])
            return head.isEmpty || tail.isEmpty ? nil : (head, tail)
        }
        switch prefix {
        case "media":
            guard let fields = split(first: 1), !fields[1].contains(":") else { return nil }
            return .media(itemId: fields[0], versionId: fields[1])
        case "subtitle":
            guard let fields = split(first: 2), let index = Int(fields[2]) else { return nil }
            return .subtitle(itemId: fields[0], versionId: fields[1], streamIndex: index)
        case "image":
            guard let fields = split(first: 1) else { return nil }
            return .image(itemId: fields[0], type: fields[1])
        case "metadata":
            return rest.isEmpty ? nil : .metadata(itemId: rest)
        case "lyrics":
            return rest.isEmpty || rest.contains(":") ? nil : .lyrics(itemId: rest)
        case "trickplay":
            guard let fields = split(first: 3), let width = Int(fields[2]), let index = Int(fields[3]),
                !fields[3].contains(":")
            else { return nil }
            return .trickplay(itemId: fields[0], versionId: fields[1], width: width, index: index)
        case "segments":
            guard let fields = split(first: 1), !fields[1].contains(":") else { return nil }
            return .segments(itemId: fields[0], versionId: fields[1])
        case "podcast":
            guard let fields = split(first: 1) else { return nil }
            return .podcastEpisode(podcastId: fields[0], episodeId: fields[1])
        case "podcast-extra":
            guard let fields = split(first: 1), let (episode, what) = lastField(fields[1]) else { return nil }
            return .podcastExtra(podcastId: fields[0], episodeId: episode, what: what)
        case "podcast-metadata":
            return rest.isEmpty ? nil : .podcastMetadata(podcastId: rest)
        default:
            return nil
        }
    }

    /// Whether the file belongs to a podcast subscription (an episode, an extra, a podcast's metadata) rather than to a
    /// Jellyfin selection.
    public var isPodcast: Bool { rawValue.hasPrefix("podcast:") || rawValue.hasPrefix("podcast-") }
}
