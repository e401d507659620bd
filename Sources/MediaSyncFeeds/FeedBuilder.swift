/// Collects the raw values the reader finds and turns them into a ``Feed`` at the end.
///
/// Every ``FeedSchema/Field`` has one slot; the first occurrence wins. Priorities between fields that feed the same
/// value (for example `content:encoded` versus `description`) are decided here, in one place.
struct FeedBuilder {
    typealias Field = FeedSchema.Field

    private var feedSlots = [String?](repeating: nil, count: Field.allCases.count)
    private var itemSlots = [String?](repeating: nil, count: Field.allCases.count)
    private var feedLinkFromAtom: String?
    private var xmlLang: String?
    private var funding: [Funding] = []
    /// How often each episode guid occurred, for ``Feed/duplicateGUIDs`` (the episodes themselves are handed on).
    private var guidCounts: [GUIDKey: Int] = [:]

    /// A guid with its hash computed once: growing the table then rehashes an `Int` per entry, not the string.
    private struct GUIDKey: Hashable {
        let value: String
        let hash: Int

        init(_ value: String) {
            self.value = value
            self.hash = value.hashValue
        }

        static func == (lhs: GUIDKey, rhs: GUIDKey) -> Bool {
            lhs.hash == rhs.hash && lhs.value == rhs.value
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }
    }

    private var enclosure: Enclosure?
    private var atomEnclosure: Enclosure?
    private var mediaEnclosure: Enclosure?
    private var atomLink: String?
    private var transcripts: [Transcript] = []
    /// `podcast:funding url`, waiting for the element's text.
    private var fundingURL: String?
    /// See ``FeedWalker``: item descriptions are collected as bytes (``setDescriptionBytes(_:_:)``).
    var descriptionsAsUTF8 = false
    private var descriptionBytes = [[UInt8]?](repeating: nil, count: 5)

    /// The item fields ``Episode/description`` is chosen from.
    static func isDescriptionField(_ field: Field) -> Bool {
        descriptionIndex(field) != nil
    }

    private static func descriptionIndex(_ field: Field) -> Int? {
        switch field {
        case .itemDescription: 0
        case .itemAtomSummary: 1
        case .itemContentEncoded: 2
        case .itemAtomContent: 3
        case .itemItunesSummary: 4
        default: nil
        }
    }

    /// Reads what a field element carries in its attributes.
    /// - Parameters:
    ///   - field: The element's field.
    ///   - attribute: An attribute of the element by name (no namespace), as libxml2 reports it.
    ///   - base: The base URI in effect at the element (asked for only when a URL is relative).
    mutating func readAttributes(
        of field: Field, attribute: (StaticString) -> String?, base: () -> String?
    ) {
        func url(_ name: StaticString) -> String? {
            guard let value = attribute(name) else { return nil }
            return URLResolver.resolve(value, base: base)
        }
        switch field {
        case .feedItunesImage, .itemItunesImage:
            set(field, url("href") ?? url("url"))
        case .feedAtomLink, .itemAtomLink:
            addAtomLink(
                rel: attribute("rel"), href: url("href"), length: attribute("length"), type: attribute("type"),
                inItem: field == .itemAtomLink)
        case .itemEnclosure:
            addEnclosure(url: url("url"), length: attribute("length"), type: attribute("type"))
        case .itemMediaContent:
            addMediaContent(url: url("url"), length: attribute("fileSize"), type: attribute("type"))
        case .itemTranscript:
            addTranscript(url: url("url"), type: attribute("type"))
        case .itemChapters:
            set(field, url("url"))
        case .feedFunding:
            fundingURL = url("url")
        default:
            break
        }
    }

    /// Stores a text field's value from the element's text (UTF-8, as libxml2 hands it out).
    /// - Parameters:
    ///   - field: A field of kind `.text`, `.urlText` or `.attributesAndText`.
    ///   - text: The element's text, markup inside it serialised.
    ///   - base: The base URI in effect at the element.
    mutating func finishText(_ field: Field, _ text: [UInt8], base: () -> String?) {
        if descriptionsAsUTF8, field.kind == .text, Self.isDescriptionField(field) {
            setDescriptionBytes(field, Self.trimmedUTF8(text))
            return
        }
        let value = String(decoding: text, as: UTF8.self)
        switch field.kind {
        case .urlText:
            set(field, URLResolver.resolve(value, base: base))
        case .attributesAndText:
            addFunding(url: fundingURL, title: value)
            fundingURL = nil
        case .text, .attributes:
            set(field, TextCleaner.trimmed(value))
        }
    }

    /// The bytes `TextCleaner.trimmed(String(decoding: bytes, as: UTF8.self))` would hold, `nil` for empty.
    /// Only used on the speculative path (``InputRewriter/init(speculative:chunkSize:)``), whose input was checked
    /// to be UTF-8: libxml2 then hands out well-formed UTF-8 (it rejects character references to surrogates and
    /// non-characters, and no DTD entity survives the rewriter), so no repair is needed.
    private static func trimmedUTF8(_ bytes: [UInt8]) -> [UInt8]? {
        @inline(__always) func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
        }
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        return Array(bytes[start..<end])
    }

    /// ``set(_:_:)`` for a description field's trimmed bytes.
    mutating func setDescriptionBytes(_ field: Field, _ value: [UInt8]?) {
        guard let value, let index = Self.descriptionIndex(field), descriptionBytes[index] == nil else { return }
        descriptionBytes[index] = value
    }

    mutating func setLanguageFallback(_ lang: String?) {
        if xmlLang == nil { xmlLang = lang.flatMap(TextCleaner.trimmed) }
    }

    /// Stores a text value (already resolved when it is a URL).
    mutating func set(_ field: Field, _ value: String?) {
        guard let value else { return }
        if field.isItemField {
            if itemSlots[field.rawValue] == nil { itemSlots[field.rawValue] = value }
        } else if feedSlots[field.rawValue] == nil {
            feedSlots[field.rawValue] = value
        }
    }

    mutating func addFunding(url: String?, title: String?) {
        guard let url else { return }
        funding.append(Funding(url: url, title: title.flatMap(TextCleaner.plainText)))
    }

    /// An Atom `link`: `rel` defaults to `alternate`.
    mutating func addAtomLink(rel: String?, href: String?, length: String?, type: String?, inItem: Bool) {
        guard let href else { return }
        let relation = rel?.trimmingCharacters().lowercased() ?? "alternate"
        switch (relation, inItem) {
        case ("alternate", false):
            if feedLinkFromAtom == nil { feedLinkFromAtom = href }
        case ("alternate", true):
            if atomLink == nil { atomLink = href }
        case ("enclosure", true):
            if atomEnclosure == nil { atomEnclosure = Self.enclosure(url: href, length: length, type: type) }
        default:
            break
        }
    }

    mutating func addEnclosure(url: String?, length: String?, type: String?) {
        guard enclosure == nil, let url else { return }
        enclosure = Self.enclosure(url: url, length: length, type: type)
    }

    mutating func addMediaContent(url: String?, length: String?, type: String?) {
        guard mediaEnclosure == nil, let url else { return }
        mediaEnclosure = Self.enclosure(url: url, length: length, type: type)
    }

    mutating func addTranscript(url: String?, type: String?) {
        guard let url else { return }
        transcripts.append(Transcript(url: url, type: type.flatMap(TextCleaner.trimmed)))
    }

    private static func enclosure(url: String, length: String?, type: String?) -> Enclosure {
        let size = length.flatMap { Int64($0.trimmingCharacters()) }.flatMap { $0 > 0 ? $0 : nil }
        return Enclosure(url: url, length: size, type: type.flatMap(TextCleaner.trimmed))
    }

    mutating func beginItem() {
        for index in itemSlots.indices where itemSlots[index] != nil { itemSlots[index] = nil }
        enclosure = nil
        atomEnclosure = nil
        mediaEnclosure = nil
        atomLink = nil
        transcripts = []
        if descriptionsAsUTF8 {
            for index in descriptionBytes.indices where descriptionBytes[index] != nil { descriptionBytes[index] = nil }
        }
    }

    /// Finishes the current item and returns its episode.
    mutating func endItem() -> Episode {
        // Each slot is read at most once here: move the value out (no retain now, no release in `beginItem`).
        func slot(_ field: Field) -> String? {
            guard itemSlots[field.rawValue] != nil else { return nil }
            return itemSlots[field.rawValue].take()
        }
        var episode = Episode()
        episode.title = slot(.itemTitle).flatMap(TextCleaner.plainText)
        episode.link = slot(.itemLink) ?? atomLink
        episode.description =
            Self.richest(
                plain: slot(.itemDescription) ?? slot(.itemAtomSummary),
                rich: slot(.itemContentEncoded) ?? slot(.itemAtomContent)) ?? slot(.itemItunesSummary)
        if descriptionsAsUTF8 {
            func bytes(_ index: Int) -> [UInt8]? {
                guard descriptionBytes[index] != nil else { return nil }
                return descriptionBytes[index].take()
            }
            let plain = bytes(0) ?? bytes(1)
            let rich = bytes(2) ?? bytes(3)
            let chosen: [UInt8]?
            if let rich, let plain {
                chosen = rich.count > plain.count ? rich : plain
            } else {
                chosen = rich ?? plain
            }
            episode.descriptionUTF8 = chosen ?? bytes(4)
        }
        episode.published =
            (slot(.itemPubDate) ?? slot(.itemDCDate)).flatMap(DateParser.date)
            ?? (slot(.itemAtomPublished) ?? slot(.itemAtomUpdated)).flatMap(DateParser.date)
        episode.durationSeconds = slot(.itemDuration).flatMap(DurationParser.seconds)
        episode.season = Self.integer(slot(.itemItunesSeason)) ?? Self.integer(slot(.itemPodcastSeason))
        episode.episode = Self.integer(slot(.itemItunesEpisode)) ?? Self.integer(slot(.itemPodcastEpisode))
        episode.episodeType = slot(.itemEpisodeType)?.lowercased()
        episode.explicit = Self.flag(slot(.itemExplicit))
        episode.block = Self.flag(slot(.itemBlock))
        episode.enclosure = enclosure ?? atomEnclosure ?? mediaEnclosure
        episode.imageURL = slot(.itemItunesImage)
        episode.transcripts = transcripts
        episode.chaptersURL = slot(.itemChapters)
        if let guid = slot(.itemGUID) ?? slot(.itemAtomID) ?? slot(.itemRDFAbout) {
            episode.guid = guid
        } else if let url = episode.enclosure?.url {
            episode.guid = url
            episode.guidIsFallback = true
        } else if episode.link != nil || episode.title != nil {
            episode.guid = [episode.link, episode.title].compactMap { $0 }.joined(separator: " ")
            episode.guidIsFallback = true
        }
        if let guid = episode.guid { guidCounts[GUIDKey(guid), default: 0] += 1 }
        return episode
    }

    /// The feed-level values (``Feed/episodes`` stays empty: every episode went out through ``endItem()``).
    func finish() -> Feed {
        func slot(_ field: Field) -> String? { feedSlots[field.rawValue] }
        var feed = Feed()
        feed.title = slot(.feedTitle).flatMap(TextCleaner.plainText)
        feed.link = slot(.feedLink) ?? feedLinkFromAtom
        feed.description =
            slot(.feedDescription) ?? slot(.feedItunesSummary) ?? slot(.feedItunesSubtitle) ?? slot(.feedAtomSubtitle)
        feed.author =
            (slot(.feedItunesAuthor) ?? slot(.feedAtomAuthorName) ?? slot(.feedDCCreator)
            ?? slot(.feedManagingEditor)).flatMap(TextCleaner.plainText)
        feed.language = slot(.feedLanguage) ?? slot(.feedDCLanguage) ?? xmlLang
        feed.imageURL = slot(.feedItunesImage) ?? slot(.feedImageURL) ?? slot(.feedAtomLogo) ?? slot(.feedAtomIcon)
        feed.newFeedURL = slot(.feedNewFeedURL)
        feed.podcastGUID = slot(.feedPodcastGUID)
        feed.locked = Self.flag(slot(.feedLocked))
        feed.block = Self.flag(slot(.feedBlock))
        feed.funding = funding
        feed.duplicateGUIDs = guidCounts.filter { $0.value > 1 }.map(\.key.value).sorted()
        return feed
    }

    /// `rich` (`content:encoded`, Atom `content`) wins when it is longer than `plain` or `plain` is missing.
    private static func richest(plain: String?, rich: String?) -> String? {
        guard let rich else { return plain }
        guard let plain else { return rich }
        return rich.utf8.count > plain.utf8.count ? rich : plain
    }

    private static func integer(_ text: String?) -> Int? {
        text.flatMap { Int($0) }
    }

    private static func flag(_ text: String?) -> Bool? {
        switch text?.lowercased() {
        case "yes", "true", "explicit": true
        case "no", "false", "clean": false
        default: nil
        }
    }
}
