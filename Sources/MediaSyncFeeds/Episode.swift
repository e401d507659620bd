import Foundation

/// One episode of a ``Feed`` (an RSS `item` or an Atom `entry`).
public struct Episode: Codable, Equatable, Sendable {
    /// The episode's identity. The feed's `guid` (Atom `id`, RSS 1.0 `rdf:about`); when the item has none, the enclosure URL;
    /// when it has no enclosure either, `link` and `title` joined by a space (either alone when the other is
    /// missing); `nil` only when all of these are missing. See ``guidIsFallback``.
    public var guid: String?
    /// `true` when ``guid`` was derived (the item declared no guid).
    public var guidIsFallback: Bool
    /// The title, HTML tags stripped, HTML entities decoded and whitespace squashed.
    public var title: String?
    /// The episode's web page.
    public var link: String?
    /// The description as HTML: `content:encoded` when it is longer than `description` or `description`
    /// is missing; otherwise `description`; else `itunes:summary`. Atom: `content`, else `summary`, same rule.
    public var description: String?
    /// `pubDate` (RFC 822), else `dc:date`; Atom `published`, else `updated`.
    public var published: Date?
    /// `itunes:duration` in whole seconds (fractions are truncated).
    public var durationSeconds: Int?
    /// `itunes:season`, else `podcast:season`.
    public var season: Int?
    /// `itunes:episode`, else `podcast:episode`.
    public var episode: Int?
    /// `itunes:episodeType` (`full`, `trailer`, `bonus`), lowercased.
    public var episodeType: String?
    /// `itunes:explicit`: `yes`/`true`/`explicit` are `true`, `no`/`false`/`clean` are `false`.
    public var explicit: Bool?
    /// `itunes:block` on the item.
    public var block: Bool?
    /// The first `enclosure` (Atom `link rel="enclosure"`, else the first `media:content`).
    public var enclosure: Enclosure?
    /// `itunes:image href` on the item.
    public var imageURL: String?
    /// `podcast:transcript` elements in document order.
    public var transcripts: [Transcript]
    /// `podcast:chapters url`.
    public var chaptersURL: String?

    /// Creates an episode value.
    public init(
        guid: String? = nil,
        guidIsFallback: Bool = false,
        title: String? = nil,
        link: String? = nil,
        description: String? = nil,
        published: Date? = nil,
        durationSeconds: Int? = nil,
        season: Int? = nil,
        episode: Int? = nil,
        episodeType: String? = nil,
        explicit: Bool? = nil,
        block: Bool? = nil,
        enclosure: Enclosure? = nil,
        imageURL: String? = nil,
        transcripts: [Transcript] = [],
        chaptersURL: String? = nil
    ) {
        self.guid = guid
        self.guidIsFallback = guidIsFallback
        self.title = title
        self.link = link
        self.description = description
        self.published = published
        self.durationSeconds = durationSeconds
        self.season = season
        self.episode = episode
        self.episodeType = episodeType
        self.explicit = explicit
        self.block = block
        self.enclosure = enclosure
        self.imageURL = imageURL
        self.transcripts = transcripts
        self.chaptersURL = chaptersURL
    }

    private enum CodingKeys: String, CodingKey {
        case guid, guidIsFallback, title, link, description, published, durationSeconds, season, episode
        case episodeType, explicit, block, enclosure, imageURL, transcripts, chaptersURL
    }

    /// Decodes an episode; missing `transcripts` decode as empty, missing `guidIsFallback` as `false`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guid = try container.decodeIfPresent(String.self, forKey: .guid)
        guidIsFallback = try container.decodeIfPresent(Bool.self, forKey: .guidIsFallback) ?? false
        title = try container.decodeIfPresent(String.self, forKey: .title)
        link = try container.decodeIfPresent(String.self, forKey: .link)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        published = try container.decodeIfPresent(Date.self, forKey: .published)
        durationSeconds = try container.decodeIfPresent(Int.self, forKey: .durationSeconds)
        season = try container.decodeIfPresent(Int.self, forKey: .season)
        episode = try container.decodeIfPresent(Int.self, forKey: .episode)
        episodeType = try container.decodeIfPresent(String.self, forKey: .episodeType)
        explicit = try container.decodeIfPresent(Bool.self, forKey: .explicit)
        block = try container.decodeIfPresent(Bool.self, forKey: .block)
        enclosure = try container.decodeIfPresent(Enclosure.self, forKey: .enclosure)
        imageURL = try container.decodeIfPresent(String.self, forKey: .imageURL)
        transcripts = try container.decodeIfPresent([Transcript].self, forKey: .transcripts) ?? []
        chaptersURL = try container.decodeIfPresent(String.self, forKey: .chaptersURL)
    }

    /// Encodes the episode; absent values, an empty `transcripts` array and a `false` `guidIsFallback` are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(guid, forKey: .guid)
        if guidIsFallback { try container.encode(true, forKey: .guidIsFallback) }
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(link, forKey: .link)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(published, forKey: .published)
        try container.encodeIfPresent(durationSeconds, forKey: .durationSeconds)
        try container.encodeIfPresent(season, forKey: .season)
        try container.encodeIfPresent(episode, forKey: .episode)
        try container.encodeIfPresent(episodeType, forKey: .episodeType)
        try container.encodeIfPresent(explicit, forKey: .explicit)
        try container.encodeIfPresent(block, forKey: .block)
        try container.encodeIfPresent(enclosure, forKey: .enclosure)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        if !transcripts.isEmpty { try container.encode(transcripts, forKey: .transcripts) }
        try container.encodeIfPresent(chaptersURL, forKey: .chaptersURL)
    }
}
