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

    /// Reads a timestamp: without a zone it is UTC; fractions of a second, and a trailing `Z` or `±HH:MM` offset,
    /// are accepted (servers and phones write them). Read by hand: a formatter per action made thousands of
    /// actions slow.
    public static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 19, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x20,
            bytes[13] == 0x3A, bytes[16] == 0x3A, let year = number(0, 4), let month = number(5, 2),
            let day = number(8, 2), let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var position = 19
        if position < bytes.count, bytes[position] == 0x2E {
            position += 1
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        }
        var offset = 0
        if position < bytes.count {
            switch bytes[position] {
            case 0x5A, 0x7A:
                guard position + 1 == bytes.count else { return nil }
            case 0x2B, 0x2D:
                let colon = position + 3 < bytes.count && bytes[position + 3] == 0x3A
                guard let hours = number(position + 1, 2), let minutes = number(position + (colon ? 4 : 3), 2),
                    position + (colon ? 6 : 5) == bytes.count
                else { return nil }
                offset = (hours * 3600 + minutes * 60) * (bytes[position] == 0x2D ? -1 : 1)
            default:
                return nil
            }
        }
        // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
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
