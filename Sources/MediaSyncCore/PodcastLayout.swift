/// Where podcast episodes live: `Downloads/<podcast-id>/<episode-id>.<ext>`, with the podcast's
/// `metadata.json` beside them.
public enum PodcastLayout {
    /// Podcasting 2.0's namespace for `podcast:guid` (UUIDv5 of the feed URL).
    public static let guidNamespace = "ead4c236-bf58-58c6-a2c6-a6b28d128cb6"

    /// The podcast id: the feed's own `podcast:guid` when it declares a usable one, else the Podcasting 2.0
    /// rule — UUIDv5 of the feed URL without its scheme and trailing slashes.
    public static func podcastId(feedURL: String, declaredGUID: String?) -> String {
        if let declared = declaredGUID?.lowercased(), SafeName.id(declared) != nil, declared.count >= 8 {
            return declared
        }
        var text = feedURL
        if let schemeEnd = text.range(of: "://") { text = String(text[schemeEnd.upperBound...]) }
        while text.hasSuffix("/") { text.removeLast() }
        return UUIDv5.make(namespace: guidNamespace, name: text) ?? SHA1.hex(Array(text.utf8))
    }

    /// The longest episode id used as is.
    static let directLimit = 80

    /// A file-system-safe, deterministic and collision-free episode id for a guid.
    ///
    /// A guid made only of letters, digits, `.`, `_` and `-` (not starting with `.`, at most 80 long, not a
    /// reserved device name, not ending like a hashed id) is used as is. Any other guid becomes its sanitised
    /// start plus `-` and 12 hex digits of its SHA-1, so two guids that sanitise alike never share a file.
    public static func episodeId(guid: String) -> String {
        let safe = guid.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (isAlphanumeric(scalar) || scalar == "." || scalar == "_" || scalar == "-")
        }
        if safe, !guid.isEmpty, !guid.hasPrefix("."), guid.utf8.count <= directLimit, !looksHashed(guid),
            !SafeName.isWindowsReserved(guid)
        {
            return guid
        }
        var sanitized = String(
            guid.unicodeScalars.prefix(48).map { scalar -> Character in
                scalar.isASCII && isAlphanumeric(scalar) ? Character(scalar) : "_"
            })
        while sanitized.hasPrefix("_") { sanitized.removeFirst() }
        let hash = String(SHA1.hex(Array(guid.utf8)).prefix(12))
        return sanitized.isEmpty ? "episode-\(hash)" : "\(sanitized)-\(hash)"
    }

    public static func folder(_ podcastId: String) -> String {
        "\(LibraryLayout.downloads)/\(podcastId)"
    }

    public static func episode(podcastId: String, episodeId: String, fileExtension: String) -> String {
        "\(folder(podcastId))/\(episodeId).\(fileExtension)"
    }

    /// An episode's extra beside it: `<episode-id>.chapters.json`, `<episode-id>.transcript.vtt`,
    /// `<episode-id>.image.jpg`.
    public static func extra(podcastId: String, episodeId: String, suffix: String) -> String {
        "\(folder(podcastId))/\(episodeId).\(suffix)"
    }

    /// A transcript's file extension from its type (`text/vtt` → `vtt`, `application/x-subrip` or
    /// `application/srt` → `srt`, JSON, HTML, plain text), else its URL's, else `txt`.
    public static func transcriptExtension(type: String?, url: String) -> String {
        switch type?.lowercased().split(separator: ";").first.map({ String($0.filter { !$0.isWhitespace }) }) {
        case "text/vtt": return "vtt"
        case "application/x-subrip", "application/srt", "text/srt": return "srt"
        case "application/json": return "json"
        case "text/html": return "html"
        case "text/plain": return "txt"
        default: break
        }
        let fromURL = urlExtension(url)
        return ["vtt", "srt", "json", "html", "txt"].contains(fromURL ?? "") ? fromURL ?? "txt" : "txt"
    }

    /// An episode image's file extension from its URL (`jpg`, `png`, `webp`, `gif`), else `jpg`.
    public static func imageExtension(url: String) -> String {
        let fromURL = urlExtension(url) == "jpeg" ? "jpg" : urlExtension(url)
        return ["jpg", "png", "webp", "gif"].contains(fromURL ?? "") ? fromURL ?? "jpg" : "jpg"
    }

    private static func urlExtension(_ url: String) -> String? {
        let path = url.split(separator: "?").first.map(String.init) ?? url
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return name.contains(".") ? name.split(separator: ".").last.map { $0.lowercased() } : nil
    }

    public static func metadata(_ podcastId: String) -> String {
        "\(folder(podcastId))/\(LibraryLayout.metadataFile)"
    }

    /// The audio file extension from the enclosure's type, else its URL's extension, else `mp3`.
    public static func fileExtension(type: String?, url: String) -> String {
        let path = url.split(separator: "?").first.map(String.init) ?? url
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        let urlExtension = name.contains(".") ? name.split(separator: ".").last.map(String.init) : nil
        let known = [
            "mp3", "m4a", "aac", "wav", "ogg", "oga", "opus", "flac", "mp4", "m4v", "mov", "webm", "mkv", "m4b",
        ]
        let fromURL = urlExtension.map { $0.lowercased() }.flatMap { known.contains($0) ? $0 : nil }
        let chosen = MediaExtension.choose(mimeType: type, container: fromURL ?? "mp3")
        return chosen == "bin" ? "mp3" : chosen
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "0" && scalar <= "9") || (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
    }

    private static func looksHashed(_ name: String) -> Bool {
        let parts = name.split(separator: "-")
        guard name.contains("-"), let last = parts.last, last.count == 12 else { return false }
        return last.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

}

/// How many episodes of a podcast are kept.
public enum Retention: Codable, Equatable, Sendable {
    /// The newest N episodes.
    case newest(Int)
    /// Episodes published on or after this moment (seconds since 1970).
    case since(Double)
    /// Every episode.
    case all

    /// How many episodes new subscriptions keep.
    public static let newestDefault = 3

    /// New subscriptions keep the newest few, so a long back catalogue is not downloaded by surprise.
    public static let defaultForNewSubscriptions = Retention.newest(newestDefault)

    /// The indices of `episodes` to keep, given each one's publication date (nil when unknown), in feed order.
    /// Newest first by date; episodes without a date rank by their position in the feed.
    public func keep(published: [Double?]) -> [Int] {
        let order = published.indices.sorted { left, right in
            switch (published[left], published[right]) {
            case (let a?, let b?): return a != b ? a > b : left < right
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return left < right
            }
        }
        switch self {
        case .all: return order
        case .newest(let count): return Array(order.prefix(max(0, count)))
        case .since(let date): return order.filter { (published[$0] ?? -Double.infinity) >= date }
        }
    }
}
