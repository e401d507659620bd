import Foundation

/// One episode action as the gPodder APIs carry it (mygpo API 2 `episodes`, Nextcloud gPodder Sync
/// `episode_action`): what a device did with an episode, and when (UTC, `YYYY-MM-DDTHH:MM:SS`, no zone).
public struct EpisodeAction: Codable, Sendable, Equatable, Hashable {
    /// The feed URL of the episode's podcast.
    public var podcast: String
    /// The episode's enclosure URL.
    public var episode: String
    /// The episode's guid, where known.
    public var guid: String?
    /// `download`, `play`, `delete` or `new` (lowercase; Nextcloud answers uppercase, read either way).
    public var action: String
    /// When it happened, UTC, without a zone.
    public var timestamp: String?
    /// For `play`: where playback started, stopped, and the episode's length, in seconds.
    public var started: Int?
    public var position: Int?
    public var total: Int?
    /// The device that did it (mygpo only).
    public var device: String?

    public init(
        podcast: String, episode: String, guid: String? = nil, action: String, timestamp: String?,
        started: Int? = nil, position: Int? = nil, total: Int? = nil, device: String? = nil
    ) {
        self.podcast = podcast
        self.episode = episode
        self.guid = guid
        self.action = action
        self.timestamp = timestamp
        self.started = started
        self.position = position
        self.total = total
        self.device = device
    }

    enum CodingKeys: String, CodingKey {
        case podcast, episode, guid, action, timestamp, started, position, total, device
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        podcast = try container.decode(String.self, forKey: .podcast)
        episode = try container.decode(String.self, forKey: .episode)
        guid = try container.decodeIfPresent(String.self, forKey: .guid)
        action = try container.decode(String.self, forKey: .action).lowercased()
        timestamp = try container.decodeIfPresent(String.self, forKey: .timestamp)
        // Nextcloud sends -1 for "not given".
        func seconds(_ key: CodingKeys) -> Int? {
            let value = (try? container.decodeIfPresent(Int.self, forKey: key)) ?? nil
            return value.flatMap { $0 < 0 ? nil : $0 }
        }
        started = seconds(.started)
        position = seconds(.position)
        total = seconds(.total)
        device = try? container.decodeIfPresent(String.self, forKey: .device)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(podcast, forKey: .podcast)
        try container.encode(episode, forKey: .episode)
        try container.encodeIfPresent(guid, forKey: .guid)
        try container.encode(action, forKey: .action)
        try container.encodeIfPresent(timestamp, forKey: .timestamp)
        try container.encodeIfPresent(started, forKey: .started)
        try container.encodeIfPresent(position, forKey: .position)
        try container.encodeIfPresent(total, forKey: .total)
        try container.encodeIfPresent(device, forKey: .device)
    }

    /// What identifies this action among the ones read back: everything but the device (Nextcloud has none).
    public var key: String {
        [
            podcast, episode, guid ?? "", action, timestamp ?? "", position.map(String.init) ?? "",
            total.map(String.init) ?? "",
        ].joined(separator: "\u{1F}")
    }

    /// The action's time, nil when it has none or it cannot be read.
    public var date: Date? { timestamp.flatMap(EpisodeAction.date) }

    /// Formats a time as the APIs write it: UTC, `YYYY-MM-DDTHH:MM:SS`, no zone.
    public static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1,
            parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }

    /// Reads a timestamp: without a zone it is UTC; a trailing `Z` or offset, and fractions of a second, are
    /// accepted (servers and phones write them).
    public static func date(_ text: String) -> Date? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if let dot = text.firstIndex(of: ".") {
            let rest = text[text.index(after: dot)...].drop { $0.isNumber }
            text = String(text[..<dot]) + rest
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        return formatter.date(from: text + "Z")
    }
}

/// A subscription change list: `GET subscriptions?since=` answers it, `POST` sends `add`/`remove`.
struct SubscriptionChanges: Codable, Sendable, Equatable {
    var add: [String]
    var remove: [String]
    var timestamp: Int64?
}

/// The answer to an upload: the server's time, and the URLs it rewrote (`[old, new]`, mygpo only).
struct UploadAnswer: Decodable, Sendable {
    var timestamp: Int64?
    var updateURLs: [[String]]

    enum CodingKeys: String, CodingKey {
        case timestamp
        case updateURLs = "update_urls"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        timestamp = try container.decodeIfPresent(Int64.self, forKey: .timestamp)
        updateURLs = (try? container.decodeIfPresent([[String]].self, forKey: .updateURLs)) ?? []
    }
}

/// The answer to `GET episodes?since=`: the actions and the server's time to ask from next.
struct ActionsAnswer: Decodable, Sendable {
    var actions: [EpisodeAction]
    var timestamp: Int64?
}
