/// The parser's table: (context, element) → what to do. One row per path, no branching on nesting
/// (podcastparser's `'rss/channel/item/itunes:season': EpisodeAttrSeason(...)`).
///
/// Elements are written as `prefix:local` with canonical prefixes (see ``ElementNames``), whatever prefix the
/// document binds: `itunes:` for both iTunes DTD URIs, `podcast:` for the current and the old Podcasting 2.0 URI,
/// `atom:`, `content:`, `dc:`, `media:`, `rdf:`; RSS 0.9x/1.0/2.0 elements have no prefix.
enum FeedSchema {
    /// Where the reader is. A context stands for the paths that lead to it.
    enum Context: Int, CaseIterable {
        /// Before the root element.
        case root
        /// `rss`
        case rss
        /// `rdf:RDF` (RSS 0.90 / 1.0)
        case rdf
        /// `rss/channel`, `rdf:RDF/channel`, `atom:feed`
        case channel
        /// `rss/channel/image`, `rdf:RDF/image`
        case channelImage
        /// `atom:feed/atom:author`
        case channelAuthor
        /// `rss/channel/item`, `rss/item`, `rdf:RDF/item`, `atom:feed/atom:entry`
        case item
        /// `…/item/media:group`
        case mediaGroup
    }

    /// The value an element feeds.
    enum Field: Int, CaseIterable {
        case feedTitle, feedAtomTitle, feedDCTitle, feedLink, feedDescription, feedItunesSummary, feedItunesSubtitle
        case feedAtomSubtitle
        case feedItunesAuthor, feedAtomAuthorName, feedDCCreator, feedManagingEditor
        case feedLanguage, feedDCLanguage
        case feedItunesImage, feedImageURL, feedAtomLogo, feedAtomIcon, feedAtomLink
        case feedNewFeedURL, feedPodcastGUID, feedLocked, feedFunding, feedBlock
        /// CDF: the channel's `HREF` (set from the attribute, not from a table row).
        case feedCDFHref
        case itemTitle, itemAtomTitle, itemDCTitle, itemMediaTitle, itemLink, itemAtomLink, itemDescription
        case itemContentEncoded, itemItunesSummary
        case itemAtomContent, itemAtomSummary, itemGUID, itemAtomID
        case itemPubDate, itemDCDate, itemAtomPublished, itemAtomUpdated
        case itemDuration, itemItunesSeason, itemPodcastSeason, itemItunesEpisode, itemPodcastEpisode
        case itemEpisodeType, itemExplicit, itemBlock
        case itemEnclosure, itemMediaContent, itemItunesImage, itemTranscript, itemChapters
        /// `rdf:about` on an RSS 1.0 `item` (set from the attribute, not from a table row).
        case itemRDFAbout
        /// CDF: an item's `HREF` and `LASTMOD` (set from the attributes, not from table rows).
        case itemCDFHref, itemCDFLastMod

        /// How the element carries its value.
        enum Kind {
            /// The element's text.
            case text
            /// The element's text, a URL to resolve against the element's base.
            case urlText
            /// Attributes only.
            case attributes
            /// Attributes and text.
            case attributesAndText
        }

        var kind: Kind {
            switch self {
            case .feedLink, .feedImageURL, .feedAtomLogo, .feedAtomIcon, .feedNewFeedURL, .itemLink:
                .urlText
            case .feedItunesImage, .feedAtomLink, .itemAtomLink, .itemEnclosure, .itemMediaContent,
                .itemItunesImage, .itemTranscript, .itemChapters:
                .attributes
            case .feedFunding:
                .attributesAndText
            default:
                .text
            }
        }

        var isItemField: Bool { rawValue >= Field.itemTitle.rawValue }
    }

    enum Action {
        case enter(Context)
        case field(Field)
    }

    static let rules: [(Context, String, Action)] = [
        (.root, "rss", .enter(.rss)),
        (.root, "rdf:RDF", .enter(.rdf)),
        (.root, "atom:feed", .enter(.channel)),
        // Microsoft's Channel Definition Format: `<CHANNEL HREF=…><TITLE/><ABSTRACT/><ITEM HREF=… LASTMOD=…>`.
        (.root, "channel", .enter(.channel)),
        (.rss, "channel", .enter(.channel)),
        // Items directly under `rss`: seen in broken feeds and after libxml2 recovers from a stray end tag.
        (.rss, "item", .enter(.item)),
        (.rdf, "channel", .enter(.channel)),
        (.rdf, "image", .enter(.channelImage)),
        (.rdf, "item", .enter(.item)),

        (.channel, "title", .field(.feedTitle)),
        (.channel, "atom:title", .field(.feedAtomTitle)),
        (.channel, "dc:title", .field(.feedDCTitle)),
        (.channel, "link", .field(.feedLink)),
        (.channel, "atom:link", .field(.feedAtomLink)),
        (.channel, "description", .field(.feedDescription)),
        (.channel, "itunes:summary", .field(.feedItunesSummary)),
        (.channel, "itunes:subtitle", .field(.feedItunesSubtitle)),
        (.channel, "atom:subtitle", .field(.feedAtomSubtitle)),
        (.channel, "abstract", .field(.feedDescription)),
        // Atom 0.3's name for the subtitle.
        (.channel, "atom:tagline", .field(.feedAtomSubtitle)),
        (.channel, "itunes:author", .field(.feedItunesAuthor)),
        (.channel, "atom:author", .enter(.channelAuthor)),
        (.channelAuthor, "atom:name", .field(.feedAtomAuthorName)),
        (.channel, "dc:creator", .field(.feedDCCreator)),
        (.channel, "managingEditor", .field(.feedManagingEditor)),
        (.channel, "language", .field(.feedLanguage)),
        (.channel, "dc:language", .field(.feedDCLanguage)),
        (.channel, "itunes:image", .field(.feedItunesImage)),
        (.channel, "image", .enter(.channelImage)),
        (.channelImage, "url", .field(.feedImageURL)),
        (.channel, "atom:logo", .field(.feedAtomLogo)),
        (.channel, "atom:icon", .field(.feedAtomIcon)),
        (.channel, "itunes:new-feed-url", .field(.feedNewFeedURL)),
        (.channel, "podcast:guid", .field(.feedPodcastGUID)),
        (.channel, "podcast:locked", .field(.feedLocked)),
        (.channel, "podcast:funding", .field(.feedFunding)),
        (.channel, "itunes:block", .field(.feedBlock)),
        (.channel, "item", .enter(.item)),
        (.channel, "atom:entry", .enter(.item)),

        (.item, "title", .field(.itemTitle)),
        (.item, "atom:title", .field(.itemAtomTitle)),
        (.item, "dc:title", .field(.itemDCTitle)),
        (.item, "media:title", .field(.itemMediaTitle)),
        (.mediaGroup, "media:title", .field(.itemMediaTitle)),
        (.item, "link", .field(.itemLink)),
        (.item, "atom:link", .field(.itemAtomLink)),
        (.item, "description", .field(.itemDescription)),
        (.item, "content:encoded", .field(.itemContentEncoded)),
        (.item, "itunes:summary", .field(.itemItunesSummary)),
        (.item, "atom:content", .field(.itemAtomContent)),
        (.item, "atom:summary", .field(.itemAtomSummary)),
        (.item, "abstract", .field(.itemDescription)),
        (.item, "guid", .field(.itemGUID)),
        (.item, "atom:id", .field(.itemAtomID)),
        (.item, "pubDate", .field(.itemPubDate)),
        (.item, "dc:date", .field(.itemDCDate)),
        (.item, "atom:published", .field(.itemAtomPublished)),
        (.item, "atom:updated", .field(.itemAtomUpdated)),
        // Atom 0.3's names for the dates.
        (.item, "atom:issued", .field(.itemAtomPublished)),
        (.item, "atom:modified", .field(.itemAtomUpdated)),
        (.item, "itunes:duration", .field(.itemDuration)),
        (.item, "itunes:season", .field(.itemItunesSeason)),
        (.item, "podcast:season", .field(.itemPodcastSeason)),
        (.item, "itunes:episode", .field(.itemItunesEpisode)),
        (.item, "podcast:episode", .field(.itemPodcastEpisode)),
        (.item, "itunes:episodeType", .field(.itemEpisodeType)),
        (.item, "itunes:explicit", .field(.itemExplicit)),
        (.item, "itunes:block", .field(.itemBlock)),
        (.item, "enclosure", .field(.itemEnclosure)),
        (.item, "media:content", .field(.itemMediaContent)),
        (.item, "media:group", .enter(.mediaGroup)),
        (.mediaGroup, "media:content", .field(.itemMediaContent)),
        (.item, "itunes:image", .field(.itemItunesImage)),
        (.item, "podcast:transcript", .field(.itemTranscript)),
        (.item, "podcast:chapters", .field(.itemChapters)),
    ]

    /// Element key (`itunes:duration`) → tag number, in the order of first appearance in ``rules``.
    static let tags: [String: Int] = {
        var tags: [String: Int] = [:]
        for (_, element, _) in rules where tags[element] == nil { tags[element] = tags.count }
        return tags
    }()

    /// `table[context.rawValue * tags.count + tag]`.
    static let table: [Action?] = {
        var table = [Action?](repeating: nil, count: Context.allCases.count * tags.count)
        for (context, element, action) in rules {
            guard let tag = tags[element] else { continue }
            table[context.rawValue * tags.count + tag] = action
        }
        return table
    }()

    /// Keys lowercased → tag number, for elements written in another case than the table's.
    private static let lowercasedTags: [String: Int] = {
        var lowered: [String: Int] = [:]
        for (key, tag) in tags where lowered[key.lowercased()] == nil { lowered[key.lowercased()] = tag }
        return lowered
    }()

    /// The tag number of an element key (``ElementNames/key(namespaceURI:localName:unqualifiedIsAtom:)``), -1
    /// when the parser does not read it. Names are matched exactly, else ignoring ASCII case, as feedparser and
    /// iTunes read them (`<TiTlE>`, `<itunes:AUTHOR>`, CDF's `<CHANNEL>`).
    static func tag(forKey key: String?) -> Int {
        guard let key else { return -1 }
        return tags[key] ?? lowercasedTags[key.lowercased()] ?? -1
    }

    /// The tag of CDF's `CHANNEL` as the root (``FeedWalker`` reads its `HREF`; the fast path leaves it to the
    /// careful one).
    static let cdfChannelTag = tags["channel"] ?? -1

    static func action(in context: Context, tag: Int) -> Action? {
        guard tag >= 0 else { return nil }
        return table[context.rawValue * tags.count + tag]
    }
}
