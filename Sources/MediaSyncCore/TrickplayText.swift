import MediaSyncJSON

/// A trickplay width as the server describes it (`TrickplayInfo`: Width, Height, TileWidth, TileHeight,
/// ThumbnailCount, Interval in milliseconds, Bandwidth in bits per second).
public struct TrickplayWidth: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var tileWidth: Int
    public var tileHeight: Int
    public var thumbnailCount: Int
    public var interval: Int
    public var bandwidth: Int

    public init(
        width: Int, height: Int, tileWidth: Int, tileHeight: Int, thumbnailCount: Int, interval: Int, bandwidth: Int
    ) {
        self.width = width
        self.height = height
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
        self.thumbnailCount = thumbnailCount
        self.interval = interval
        self.bandwidth = bandwidth
    }

    /// A `TrickplayInfo` object as the server sends it; nil when a member is missing or out of range.
    public init?(json value: JSONValue) {
        guard let width = value["Width"]?.intValue, let height = value["Height"]?.intValue,
            let tileWidth = value["TileWidth"]?.intValue, let tileHeight = value["TileHeight"]?.intValue,
            let count = value["ThumbnailCount"]?.intValue, let interval = value["Interval"]?.intValue,
            (1...16_384).contains(width), (1...16_384).contains(height), (1...100).contains(tileWidth),
            (1...100).contains(tileHeight), (0...10_000_000).contains(count), (1...86_400_000).contains(interval)
        else { return nil }
        let bandwidth = value["Bandwidth"]?.intValue ?? 0
        self.init(
            width: Int(width), height: Int(height), tileWidth: Int(tileWidth), tileHeight: Int(tileHeight),
            thumbnailCount: Int(count), interval: Int(interval),
            bandwidth: Int(clamping: bandwidth))
    }

    /// How many tile images hold the thumbnails: ⌈ThumbnailCount / (TileWidth × TileHeight)⌉.
    public var tileCount: Int {
        let per = tileWidth * tileHeight
        guard per > 0, thumbnailCount > 0 else { return 0 }
        return (thumbnailCount + per - 1) / per
    }
}

/// The trickplay playlist (`tiles.m3u8`) as Jellyfin writes it (`TrickplayManager.GetHlsPlaylist`, v10.10.7
/// L538–608; 10.11.11 names the token `ApiKey`).
public enum TrickplayText {
    /// The playlist of one width: VOD, images only, one `#EXT-X-TILES` and tile URL per tile; the last tile's
    /// `#EXTINF` counts only the thumbnails it holds. `#EXT-X-TARGETDURATION` is the tile count, as Jellyfin writes
    /// it. Nil when there are no thumbnails (the server then answers 404).
    public static func playlist(
        _ info: TrickplayWidth, mediaSourceId: String, tokenKey: String, token: String
    ) -> String? {
        let count = info.tileCount
        guard count > 0 else { return nil }
        let perTile = info.tileWidth * info.tileHeight
        let thumbnailSeconds = Double(info.interval) / 1000
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:\(count)\n#EXT-X-VERSION:7\n#EXT-X-MEDIA-SEQUENCE:1\n"
        text += "#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-IMAGES-ONLY\n"
        for index in 0..<count {
            let thumbnails = index == count - 1 ? info.thumbnailCount - index * perTile : perTile
            text += "#EXTINF:\(decimal(thumbnailSeconds * Double(thumbnails))),\n"
            text += "#EXT-X-TILES:RESOLUTION=\(info.width)x\(info.height),LAYOUT=\(info.tileWidth)x\(info.tileHeight)"
            text += ",DURATION=\(decimal(thumbnailSeconds))\n"
            text += "\(index).jpg?MediaSourceId=\(mediaSourceId)&\(tokenKey)=\(token)\n"
        }
        text += "#EXT-X-ENDLIST\n"
        return text
    }

    /// .NET's `{0:0.###}`: at most three decimals, rounded half away from zero, no trailing zeros.
    public static func decimal(_ value: Double) -> String {
        let thousandths = (abs(value) * 1000).rounded(.toNearestOrAwayFromZero)
        let whole = Int64(thousandths) / 1000
        var fraction = Int64(thousandths) % 1000
        let sign = value < 0 && thousandths > 0 ? "-" : ""
        guard fraction > 0 else { return "\(sign)\(whole)" }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = String(fraction)
        return "\(sign)\(whole)." + String(repeating: "0", count: digits - text.count) + text
    }
}

/// Which trickplay width a selection keeps: the server's smallest (the default; Jellyfin's default width is 320),
/// one asked for, or none.
public enum TrickplayChoice: Sendable, Hashable, Codable {
    case smallest
    case none
    case width(Int)

    /// The width to keep of those the server has: the smallest; the one asked for, else the nearest to it (the
    /// smaller of two as near); nil for none or when the server has none.
    public func pick(from widths: [Int]) -> Int? {
        let sorted = widths.filter { $0 > 0 }.sorted()
        switch self {
        case .none: return nil
        case .smallest: return sorted.first
        case .width(let wanted):
            return sorted.min { abs($0 - wanted) < abs($1 - wanted) }
        }
    }

    /// As the index stores it: nil for the smallest, 0 for none, else the width.
    public var stored: Int? {
        switch self {
        case .smallest: return nil
        case .none: return 0
        case .width(let width): return width
        }
    }

    /// How `selections` says it: `smallest`, `none` or the width.
    public var description: String {
        switch self {
        case .smallest: return "smallest"
        case .none: return "none"
        case .width(let width): return String(width)
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        switch text {
        case "smallest": self = .smallest
        case "none": self = .none
        default: self = Int(text).map { TrickplayChoice(stored: $0) } ?? .smallest
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// From the index's value (see ``stored``).
    public init(stored: Int?) {
        switch stored {
        case nil: self = .smallest
        case 0?: self = .none
        case let width?: self = width > 0 ? .width(width) : .smallest
        }
    }
}
