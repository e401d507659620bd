/// A podcast feed as read by ``FeedParser``: channel-level values plus the episodes in document order.
///
/// Every value is optional because real feeds omit almost anything. Relative URLs are already resolved
/// against `xml:base` or the feed's base URL.
public struct Feed: Codable, Equatable, Sendable {
    /// The channel title, HTML tags stripped and whitespace squashed.
    public var title: String?
    /// The show's web page (RSS `link`, Atom `link rel="alternate"`).
    public var link: String?
    /// The channel description (`description`, else `itunes:summary`, else `itunes:subtitle`, else Atom `subtitle`).
    public var description: String?
    /// `itunes:author`, else the Atom author name, else `dc:creator`, else `managingEditor`.
    public var author: String?
    /// `language`, else `dc:language`, else `xml:lang` on the root or channel element, as written (a POSIX-style
    /// `en_US` as the BCP 47 tag `en-US`; see ``LanguageTag/asWritten(_:)``).
    public var language: String?
    /// `itunes:image href`, else RSS `image/url`, else Atom `logo`/`icon`.
    public var imageURL: String?
    /// `itunes:new-feed-url`: the publisher moved the feed here.
    public var newFeedURL: String?
    /// `podcast:guid` (Podcasting 2.0), when the feed declares one.
    public var podcastGUID: String?
    /// `podcast:locked`: `true` when the publisher forbids importing the feed elsewhere.
    public var locked: Bool?
    /// `itunes:block` on the channel.
    public var block: Bool?
    /// `podcast:funding` links, in document order.
    public var funding: [Funding]
    /// The episodes (RSS `item`, Atom `entry`) in document order. Duplicate guids are all kept.
    public var episodes: [Episode]
    /// Every ``Episode/guid`` that occurs more than once, sorted. The layout layer disambiguates them.
    public var duplicateGUIDs: [String]
    /// Set when the document was not well-formed and had to be repaired: the first repair made while streaming
    /// ("dropped the stray end tag </i>", "the document ends inside <rss> (truncated?); …"), or libxml2's first
    /// error ("line 5: …") when the document had to be re-read in libxml2's recovery mode. The feed may then be
    /// incomplete (a truncated download reads as its first part), so callers may prefer their last good copy.
    public var recoveredError: String?

    /// Creates a feed value.
    public init(
        title: String? = nil,
        link: String? = nil,
        description: String? = nil,
        author: String? = nil,
        language: String? = nil,
        imageURL: String? = nil,
        newFeedURL: String? = nil,
        podcastGUID: String? = nil,
        locked: Bool? = nil,
        block: Bool? = nil,
        funding: [Funding] = [],
        episodes: [Episode] = [],
        duplicateGUIDs: [String] = [],
        recoveredError: String? = nil
    ) {
        self.title = title
        self.link = link
        self.description = description
        self.author = author
        self.language = language
        self.imageURL = imageURL
        self.newFeedURL = newFeedURL
        self.podcastGUID = podcastGUID
        self.locked = locked
        self.block = block
        self.funding = funding
        self.episodes = episodes
        self.duplicateGUIDs = duplicateGUIDs
        self.recoveredError = recoveredError
    }

    private enum CodingKeys: String, CodingKey {
        case title, link, description, author, language, imageURL, newFeedURL, podcastGUID, locked, block
        case funding, episodes, duplicateGUIDs, recoveredError
    }

    /// Decodes a feed; missing arrays decode as empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        link = try container.decodeIfPresent(String.self, forKey: .link)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        author = try container.decodeIfPresent(String.self, forKey: .author)
        language = try container.decodeIfPresent(String.self, forKey: .language)
        imageURL = try container.decodeIfPresent(String.self, forKey: .imageURL)
        newFeedURL = try container.decodeIfPresent(String.self, forKey: .newFeedURL)
        podcastGUID = try container.decodeIfPresent(String.self, forKey: .podcastGUID)
        locked = try container.decodeIfPresent(Bool.self, forKey: .locked)
        block = try container.decodeIfPresent(Bool.self, forKey: .block)
        funding = try container.decodeIfPresent([Funding].self, forKey: .funding) ?? []
        episodes = try container.decodeIfPresent([Episode].self, forKey: .episodes) ?? []
        duplicateGUIDs = try container.decodeIfPresent([String].self, forKey: .duplicateGUIDs) ?? []
        recoveredError = try container.decodeIfPresent(String.self, forKey: .recoveredError)
    }

    /// Encodes the feed; absent values and empty `funding` / `duplicateGUIDs` are omitted, `episodes` is always written.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(link, forKey: .link)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encodeIfPresent(author, forKey: .author)
        try container.encodeIfPresent(language, forKey: .language)
        try container.encodeIfPresent(imageURL, forKey: .imageURL)
        try container.encodeIfPresent(newFeedURL, forKey: .newFeedURL)
        try container.encodeIfPresent(podcastGUID, forKey: .podcastGUID)
        try container.encodeIfPresent(locked, forKey: .locked)
        try container.encodeIfPresent(block, forKey: .block)
        if !funding.isEmpty { try container.encode(funding, forKey: .funding) }
        try container.encode(episodes, forKey: .episodes)
        if !duplicateGUIDs.isEmpty { try container.encode(duplicateGUIDs, forKey: .duplicateGUIDs) }
        try container.encodeIfPresent(recoveredError, forKey: .recoveredError)
    }
}
