import Foundation

/// Collects the raw values the walkers find and turns them into a ``Feed`` at the end.
///
/// Every ``FeedSchema/Field`` has one slot; the first occurrence wins. Priorities between fields that feed the same
/// value (for example `content:encoded` versus `description`) are decided here, in one place (``selectItem()``).
///
/// Feed-level values are kept as strings (there is one channel). Item values are kept as bytes in an arena that
/// is reused from item to item, so an item costs no allocation: ``endItem()`` makes an ``Episode`` of them, and
/// ``FeedJSON`` writes them out as they are (``selectItem()``).
struct FeedBuilder {
    typealias Field = FeedSchema.Field

    /// A value's bytes in ``arena``.
    struct Span: Equatable {
        var start: Int
        var count: Int
    }

    /// An enclosure of the current item.
    struct EnclosureSpans {
        var url: Span
        var length: Int64?
        var type: Span?
    }

    /// The values of the current item an ``Episode`` is made of, after priorities and fallbacks.
    struct ItemSelection {
        var guid: Span?
        var guidIsFallback = false
        var title: Span?
        var link: Span?
        var description: Span?
        var published: Date?
        var durationSeconds: Int?
        var season: Int?
        var episode: Int?
        var episodeType: Span?
        var explicit: Bool?
        var block: Bool?
        var enclosure: EnclosureSpans?
        var imageURL: Span?
        var chaptersURL: Span?
    }

    private var feedSlots = [String?](repeating: nil, count: Field.allCases.count)
    private var feedLinkFromAtom: String?
    private var xmlLang: String?
    private var funding: [Funding] = []
    /// `podcast:funding url`, waiting for the element's text.
    private var fundingURL: String?
    /// Every episode guid, for ``Feed/duplicateGUIDs`` (the episodes themselves are handed on).
    private var guids = GUIDSet()

    /// The current item's bytes: its values, then whatever ``selectItem()`` derives from them.
    private(set) var arena: [UInt8] = []
    private var itemSlots = [Span?](repeating: nil, count: Field.allCases.count)
    private var enclosure: EnclosureSpans?
    private var atomEnclosure: EnclosureSpans?
    private var mediaEnclosure: EnclosureSpans?
    private var atomLink: Span?
    /// How the text of an Atom text construct (or `media:title`) is carried, per field: recorded from the
    /// attributes of the element that fills the field (see ``TextConstruct``).
    private var constructs = [TextConstruct?](repeating: nil, count: Field.allCases.count)
    /// Whether the current item's `guid` is a permalink (`isPermaLink` absent or `true`).
    private var guidIsPermaLink = false
    /// `podcast:transcript` elements of the current item: URL and type.
    private(set) var transcripts: [(url: Span, type: Span?)] = []

    init() {
        arena.reserveCapacity(16 * 1024)
    }

    mutating func setLanguageFallback(_ lang: String?) {
        if xmlLang == nil { xmlLang = lang.flatMap(TextCleaner.trimmed) }
    }

    // MARK: Elements

    /// Reads what a field element carries in its attributes.
    /// - Parameters:
    ///   - field: The element's field.
    ///   - source: The element's attributes (no namespace, as `xmlGetNoNsProp` finds them) and base URI.
    mutating func readAttributes(of field: Field, from source: some AttributeSource) {
        switch field {
        case .feedItunesImage:
            set(field, urlString("href", source) ?? urlString("url", source))
        case .feedAtomLink:
            guard let href = urlString("href", source) else { return }
            let rel = source.withAttribute("rel") { String(decoding: $0, as: UTF8.self) }
            let relation = rel?.trimmingCharacters().lowercased() ?? "alternate"
            if relation == "alternate", feedLinkFromAtom == nil { feedLinkFromAtom = href }
        case .feedFunding:
            fundingURL = urlString("url", source)
        case .itemItunesImage, .itemChapters:
            guard itemSlots[field.rawValue] == nil else { return }
            let url =
                field == .itemChapters ? urlSpan("url", source) : urlSpan("href", source) ?? urlSpan("url", source)
            if let url { itemSlots[field.rawValue] = url }
        case .itemAtomLink:
            guard let href = urlSpan("href", source) else { return }
            let relation = source.withAttribute("rel") { Self.atomRelation($0) } ?? .alternate
            switch relation {
            case .alternate:
                if atomLink == nil { atomLink = href }
            case .enclosure:
                if atomEnclosure == nil { atomEnclosure = enclosure(url: href, lengthName: "length", source) }
            case .other:
                break
            }
        case .itemEnclosure:
            guard enclosure == nil, let url = urlSpan("url", source) else { return }
            enclosure = enclosure(url: url, lengthName: "length", source)
        case .itemMediaContent:
            guard mediaEnclosure == nil, let url = urlSpan("url", source) else { return }
            mediaEnclosure = enclosure(url: url, lengthName: "fileSize", source)
        case .itemTranscript:
            guard let url = urlSpan("url", source) else { return }
            transcripts.append((url, source.withAttribute("type") { appendTrimmed($0) } ?? nil))
        case .feedAtomTitle, .feedAtomSubtitle:
            guard feedSlots[field.rawValue] == nil else { return }
            constructs[field.rawValue] = TextConstruct(source)
        case .itemAtomTitle, .itemMediaTitle, .itemAtomSummary, .itemAtomContent:
            guard itemSlots[field.rawValue] == nil else { return }
            constructs[field.rawValue] = TextConstruct(source)
        case .itemGUID:
            guard itemSlots[field.rawValue] == nil else { return }
            guidIsPermaLink =
                source.withAttribute("isPermaLink") {
                    TextConstruct.lowercasedASCII(UnsafeBufferPointer(rebasing: $0[Self.trimmedRange($0)])) == "true"
                } ?? true
        default:
            break
        }
    }

    /// Stores a text field's value from the element's text (UTF-8, as libxml2 hands it out).
    /// - Parameters:
    ///   - field: A field of kind `.text`, `.urlText` or `.attributesAndText`.
    ///   - text: The element's text, markup inside it serialised.
    ///   - base: The base URI in effect at the element.
    mutating func finishText(_ field: Field, _ text: UnsafeBufferPointer<UInt8>, base: () -> String?) {
        if field.isItemField {
            guard itemSlots[field.rawValue] == nil else { return }
            if constructs[field.rawValue]?.base64 == true, let decoded = TextConstruct.base64Decoded(text) {
                constructs[field.rawValue]?.base64 = false
                decoded.withUnsafeBufferPointer { finishText(field, $0, base: base) }
                return
            }
            let value: Span?
            switch field.kind {
            case .urlText:
                value = appendURL(text, base: base)
            case .text, .attributes, .attributesAndText:
                if field == .itemAtomID {
                    value = appendID(text, base: base)
                } else {
                    value = appendTrimmed(text)
                }
            }
            if let value { itemSlots[field.rawValue] = value }
            return
        }
        if constructs[field.rawValue]?.base64 == true, feedSlots[field.rawValue] == nil,
            let decoded = TextConstruct.base64Decoded(text)
        {
            constructs[field.rawValue]?.base64 = false
            decoded.withUnsafeBufferPointer { finishText(field, $0, base: base) }
            return
        }
        let value = String(decoding: text, as: UTF8.self)
        switch field.kind {
        case .urlText:
            set(field, URLResolver.resolve(value, base: base))
        case .attributesAndText:
            if let url = fundingURL { funding.append(Funding(url: url, title: TextCleaner.plainText(value))) }
            fundingURL = nil
        case .text, .attributes:
            set(field, TextCleaner.trimmed(value))
        }
    }

    /// Starts collecting a field's text straight into the arena (``appendText(_:)``, then
    /// ``finishText(_:collectedFrom:base:)``); returns where it starts.
    mutating func beginText() -> Int {
        arena.count
    }

    mutating func appendText(_ bytes: UnsafeBufferPointer<UInt8>) {
        arena.append(contentsOf: bytes)
    }

    /// ``finishText(_:_:base:)`` for the text collected since `start`: an item's text value stays where it was
    /// collected (no copy); anything else is taken out of the arena again.
    mutating func finishText(_ field: Field, collectedFrom start: Int, base: () -> String?) {
        if field.isItemField, field.kind == .text || field.kind == .urlText, field != .itemAtomID,
            constructs[field.rawValue]?.base64 != true
        {
            guard itemSlots[field.rawValue] == nil else {
                arena.removeLast(arena.count - start)
                return
            }
            var lower = start
            var upper = arena.count
            while lower < upper, Self.isSpace(arena[lower]) { lower += 1 }
            while upper > lower, Self.isSpace(arena[upper - 1]) { upper -= 1 }
            guard lower < upper else {
                arena.removeLast(arena.count - start)
                return
            }
            let span = Span(start: lower, count: upper - lower)
            if field.kind == .text || bytes(span, { URLResolver.isAbsoluteAsIs($0) }) {
                itemSlots[field.rawValue] = span
                return
            }
        }
        let text = Array(arena[start...])
        arena.removeLast(arena.count - start)
        finishText(field, text, base: base)
    }

    /// ``finishText(_:_:base:)`` for text held in an array.
    mutating func finishText(_ field: Field, _ text: [UInt8], base: () -> String?) {
        text.withUnsafeBufferPointer { finishText(field, $0, base: base) }
    }

    /// `rdf:about` of an RSS 1.0 item: the attribute's value as it is (even empty).
    mutating func setRDFAbout(_ value: UnsafeBufferPointer<UInt8>) {
        guard itemSlots[Field.itemRDFAbout.rawValue] == nil else { return }
        itemSlots[Field.itemRDFAbout.rawValue] = append(value)
    }

    /// CDF's attributes: the channel's `HREF` (its link), an item's `HREF` (its link) and `LASTMOD` (its date),
    /// in upper or lower case.
    mutating func readCDFAttributes(of context: FeedSchema.Context, from source: some AttributeSource) {
        switch context {
        case .channel:
            set(.feedCDFHref, urlString("HREF", source) ?? urlString("href", source))
        case .item:
            if let href = urlSpan("HREF", source) ?? urlSpan("href", source) {
                itemSlots[Field.itemCDFHref.rawValue] = href
            }
            if let date = source.withAttribute("LASTMOD", { appendTrimmed($0) })
                ?? source.withAttribute(
                    "lastmod", { appendTrimmed($0) })
            {
                itemSlots[Field.itemCDFLastMod.rawValue] = date
            }
        default:
            break
        }
    }

    /// Stores a feed-level value (already resolved when it is a URL).
    private mutating func set(_ field: Field, _ value: String?) {
        guard let value, feedSlots[field.rawValue] == nil else { return }
        feedSlots[field.rawValue] = value
    }

    // MARK: Attribute values

    private enum AtomRelation {
        case alternate, enclosure, other
    }

    /// `rel` trimmed and lowercased, as `rel.trimmingCharacters().lowercased()` compares (a lowercased non-ASCII
    /// character never gives these two ASCII words).
    private static func atomRelation(_ value: UnsafeBufferPointer<UInt8>) -> AtomRelation {
        let trimmed = Self.trimmedRange(value)
        func equals(_ word: StaticString) -> Bool {
            guard trimmed.count == word.utf8CodeUnitCount else { return false }
            for (offset, index) in trimmed.enumerated() where value[index] | 0x20 != word.utf8Start[offset] {
                return false
            }
            return true
        }
        if equals("alternate") { return .alternate }
        if equals("enclosure") { return .enclosure }
        return .other
    }

    private mutating func enclosure(url: Span, lengthName: StaticString, _ source: some AttributeSource)
        -> EnclosureSpans
    {
        let length = source.withAttribute(lengthName) { Self.positiveInt64($0) } ?? nil
        let type = source.withAttribute("type") { appendTrimmed($0) } ?? nil
        return EnclosureSpans(url: url, length: length, type: type)
    }

    private func urlString(_ name: StaticString, _ source: some AttributeSource) -> String? {
        guard let value = source.withAttribute(name, { String(decoding: $0, as: UTF8.self) }) else { return nil }
        return URLResolver.resolve(value, base: { source.currentBase() })
    }

    private mutating func urlSpan(_ name: StaticString, _ source: some AttributeSource) -> Span? {
        source.withAttribute(name) { appendURL($0, base: { source.currentBase() }) } ?? nil
    }

    // MARK: Arena

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> Span {
        let start = arena.count
        arena.append(contentsOf: bytes)
        return Span(start: start, count: bytes.count)
    }

    private mutating func append(_ string: String) -> Span {
        let start = arena.count
        arena.append(contentsOf: string.utf8)
        return Span(start: start, count: arena.count - start)
    }

    /// The value trimmed of ASCII whitespace, `nil` when nothing is left (``TextCleaner/trimmed(_:)``).
    private mutating func appendTrimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> Span? {
        let range = Self.trimmedRange(bytes)
        guard !range.isEmpty else { return nil }
        return append(UnsafeBufferPointer(rebasing: bytes[range]))
    }

    /// ``URLResolver/resolve(_:base:)`` of the bytes.
    private mutating func appendURL(_ bytes: UnsafeBufferPointer<UInt8>, base: () -> String?) -> Span? {
        let range = Self.trimmedRange(bytes)
        guard !range.isEmpty else { return nil }
        let trimmed = UnsafeBufferPointer(rebasing: bytes[range])
        if URLResolver.isAbsoluteAsIs(trimmed) { return append(trimmed) }
        return URLResolver.resolve(String(decoding: bytes, as: UTF8.self), base: base).map { append($0) }
    }

    /// An Atom `id`: an IRI, so a relative one resolves against the element's base like a link; one with a scheme
    /// (`urn:`, `tag:`, `https:`) is kept exactly as written (trimmed): it is the episode's identity.
    private mutating func appendID(_ bytes: UnsafeBufferPointer<UInt8>, base: () -> String?) -> Span? {
        let range = Self.trimmedRange(bytes)
        guard !range.isEmpty else { return nil }
        let trimmed = UnsafeBufferPointer(rebasing: bytes[range])
        if URLResolver.hasScheme(trimmed) { return append(trimmed) }
        return URLResolver.resolve(String(decoding: trimmed, as: UTF8.self), base: base).map { append($0) }
    }

    private func bytes<R>(_ span: Span, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        arena.withUnsafeBufferPointer {
            body(UnsafeBufferPointer(rebasing: $0[span.start..<(span.start + span.count)]))
        }
    }

    /// The span's bytes as a string.
    func string(_ span: Span) -> String {
        bytes(span) { String(decoding: $0, as: UTF8.self) }
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    private static func trimmedRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    // MARK: Items

    mutating func beginItem() {
        arena.removeAll(keepingCapacity: true)
        for index in itemSlots.indices where itemSlots[index] != nil { itemSlots[index] = nil }
        enclosure = nil
        atomEnclosure = nil
        mediaEnclosure = nil
        atomLink = nil
        guidIsPermaLink = false
        constructs[Field.itemAtomTitle.rawValue] = nil
        constructs[Field.itemMediaTitle.rawValue] = nil
        constructs[Field.itemAtomSummary.rawValue] = nil
        constructs[Field.itemAtomContent.rawValue] = nil
        transcripts.removeAll(keepingCapacity: true)
    }

    /// Finishes the current item: its values after priorities and fallbacks (derived values are appended to
    /// ``arena``), its guid counted for ``Feed/duplicateGUIDs``.
    mutating func selectItem() -> ItemSelection {
        func slot(_ field: Field) -> Span? { itemSlots[field.rawValue] }
        var item = ItemSelection()
        item.title =
            slot(.itemTitle).flatMap { plainText($0) } ?? constructText(.itemAtomTitle)
            ?? slot(.itemDCTitle).flatMap { plainText($0) } ?? constructText(.itemMediaTitle)
        item.link = slot(.itemLink) ?? atomLink ?? slot(.itemCDFHref) ?? permalink(slot(.itemGUID))
        let plain = slot(.itemDescription) ?? slot(.itemAtomSummary)
        let rich = slot(.itemContentEncoded) ?? slot(.itemAtomContent)
        if let rich, let plain {
            // `content:encoded` (Atom `content`) wins when it is longer.
            item.description = rich.count > plain.count ? rich : plain
        } else {
            item.description = rich ?? plain ?? slot(.itemItunesSummary)
        }
        item.published =
            (slot(.itemPubDate) ?? slot(.itemDCDate)).flatMap { span in bytes(span) { DateParser.date(bytes: $0) } }
            ?? (slot(.itemAtomPublished) ?? slot(.itemAtomUpdated) ?? slot(.itemCDFLastMod)).flatMap { span in
                bytes(span) { DateParser.date(bytes: $0) }
            }
        item.durationSeconds = slot(.itemDuration).flatMap { span in bytes(span) { DurationParser.seconds(bytes: $0) } }
        item.season = integer(slot(.itemItunesSeason)) ?? integer(slot(.itemPodcastSeason))
        item.episode = integer(slot(.itemItunesEpisode)) ?? integer(slot(.itemPodcastEpisode))
        item.episodeType = slot(.itemEpisodeType).map { lowercased($0) }
        item.explicit = flag(slot(.itemExplicit))
        item.block = flag(slot(.itemBlock))
        item.enclosure = enclosure ?? atomEnclosure ?? mediaEnclosure
        item.imageURL = slot(.itemItunesImage)
        item.chaptersURL = slot(.itemChapters)
        if let guid = slot(.itemGUID) ?? slot(.itemAtomID) ?? slot(.itemRDFAbout) {
            item.guid = guid
        } else if let url = item.enclosure?.url {
            item.guid = url
            item.guidIsFallback = true
        } else if item.link != nil || item.title != nil {
            // `[link, title].compactMap { $0 }.joined(separator: " ")`
            let start = arena.count
            if let link = item.link { arena.append(contentsOf: arena[link.start..<(link.start + link.count)]) }
            if item.link != nil, item.title != nil { arena.append(0x20) }
            if let title = item.title { arena.append(contentsOf: arena[title.start..<(title.start + title.count)]) }
            item.guid = Span(start: start, count: arena.count - start)
            item.guidIsFallback = true
        }
        if let guid = item.guid {
            arena.withUnsafeBufferPointer {
                guids.insert(UnsafeBufferPointer(rebasing: $0[guid.start..<(guid.start + guid.count)]))
            }
        }
        return item
    }

    /// Finishes the current item and returns its episode.
    mutating func endItem() -> Episode {
        let item = selectItem()
        var episode = Episode()
        episode.guid = item.guid.map { string($0) }
        episode.guidIsFallback = item.guidIsFallback
        episode.title = item.title.map { string($0) }
        episode.link = item.link.map { string($0) }
        episode.description = item.description.map { string($0) }
        episode.published = item.published
        episode.durationSeconds = item.durationSeconds
        episode.season = item.season
        episode.episode = item.episode
        episode.episodeType = item.episodeType.map { string($0) }
        episode.explicit = item.explicit
        episode.block = item.block
        episode.enclosure = item.enclosure.map {
            Enclosure(url: string($0.url), length: $0.length, type: $0.type.map { string($0) })
        }
        episode.imageURL = item.imageURL.map { string($0) }
        episode.transcripts = transcripts.map { Transcript(url: string($0.url), type: $0.type.map { string($0) }) }
        episode.chaptersURL = item.chaptersURL.map { string($0) }
        return episode
    }

    /// A title from a text construct: literal text (ASCII whitespace collapsed) for `type="text"`, plain text
    /// (markup removed, references decoded) for HTML and XHTML.
    private mutating func constructText(_ field: Field) -> Span? {
        guard let span = itemSlots[field.rawValue] else { return nil }
        switch constructs[field.rawValue]?.kind ?? .text {
        case .text:
            if bytes(span, { TextCleaner.isCollapsed($0) }) { return span }
            return TextCleaner.literalText(string(span)).map { append($0) }
        case .html, .xhtml:
            return plainText(span)
        }
    }

    /// The `guid` as the episode's link: when it is a permalink and an absolute `http(s)` URL.
    private mutating func permalink(_ span: Span?) -> Span? {
        guard let span, guidIsPermaLink, bytes(span, { URLResolver.isHTTPURL($0) }) else { return nil }
        if bytes(span, { URLResolver.isAbsoluteAsIs($0) }) { return span }
        return URLResolver.resolve(string(span), base: nil).map { append($0) }
    }

    /// ``TextCleaner/plainText(_:)`` of a title.
    private mutating func plainText(_ span: Span) -> Span? {
        if bytes(span, { TextCleaner.isAlreadyPlainASCII($0) }) { return span }
        return TextCleaner.plainText(string(span)).map { append($0) }
    }

    /// `String.lowercased()`.
    private mutating func lowercased(_ span: Span) -> Span {
        let (ascii, lower) = bytes(span) { value -> (Bool, Bool) in
            var ascii = true
            var lower = true
            for byte in value {
                if byte >= 0x80 { ascii = false }
                if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { lower = false }
            }
            return (ascii, lower)
        }
        if ascii, lower { return span }
        guard ascii else { return append(string(span).lowercased()) }
        let start = arena.count
        for index in span.start..<(span.start + span.count) {
            let byte = arena[index]
            arena.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
        }
        return Span(start: start, count: span.count)
    }

    /// `Int(text)`: an optional sign and decimal digits, `nil` on overflow.
    private func integer(_ span: Span?) -> Int? {
        guard let span else { return nil }
        return bytes(span) { value -> Int? in
            var index = 0
            var negative = false
            if let first = value.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
                negative = first == UInt8(ascii: "-")
                index = 1
            }
            guard index < value.count else { return nil }
            var result = 0
            while index < value.count {
                let digit = Int(value[index]) - 0x30
                guard digit >= 0, digit <= 9 else { return nil }
                let (multiplied, overflow) = result.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                let (added, overflow2) =
                    negative
                    ? multiplied.subtractingReportingOverflow(digit) : multiplied.addingReportingOverflow(digit)
                guard !overflow2 else { return nil }
                result = added
                index += 1
            }
            return result
        }
    }

    /// `Int64(text.trimmingCharacters())` when positive.
    private static func positiveInt64(_ value: UnsafeBufferPointer<UInt8>) -> Int64? {
        let range = trimmedRange(value)
        var index = range.lowerBound
        guard index < range.upperBound else { return nil }
        if value[index] == UInt8(ascii: "-") { return nil }  // never positive (or not a number)
        if value[index] == UInt8(ascii: "+") { index += 1 }
        guard index < range.upperBound else { return nil }
        var result: Int64 = 0
        while index < range.upperBound {
            let digit = Int64(value[index]) - 0x30
            guard digit >= 0, digit <= 9 else { return nil }
            let (multiplied, overflow) = result.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            let (added, overflow2) = multiplied.addingReportingOverflow(digit)
            guard !overflow2 else { return nil }
            result = added
            index += 1
        }
        return result > 0 ? result : nil
    }

    /// `yes`/`true`/`explicit` → `true`, `no`/`false`/`clean` → `false`, compared lowercased.
    private func flag(_ span: Span?) -> Bool? {
        guard let span else { return nil }
        return bytes(span) { value -> Bool? in
            func equals(_ word: StaticString) -> Bool {
                guard value.count == word.utf8CodeUnitCount else { return false }
                for index in 0..<value.count where value[index] | 0x20 != word.utf8Start[index] { return false }
                return true
            }
            // `| 0x20` folds ASCII capitals; it maps no other byte onto these lowercase letters.
            if equals("yes") || equals("true") || equals("explicit") { return true }
            if equals("no") || equals("false") || equals("clean") { return false }
            return nil
        }
    }

    // MARK: Feed

    /// The feed-level values (``Feed/episodes`` stays empty: every episode went out through ``endItem()``).
    func finish() -> Feed {
        func slot(_ field: Field) -> String? { feedSlots[field.rawValue] }
        var feed = Feed()
        feed.title =
            slot(.feedTitle).flatMap(TextCleaner.plainText)
            ?? slot(.feedAtomTitle).flatMap { text in
                constructs[Field.feedAtomTitle.rawValue]?.kind ?? .text == .text
                    ? TextCleaner.literalText(text) : TextCleaner.plainText(text)
            } ?? slot(.feedDCTitle).flatMap(TextCleaner.plainText)
        feed.link = slot(.feedLink) ?? feedLinkFromAtom ?? slot(.feedCDFHref)
        feed.description =
            slot(.feedDescription) ?? slot(.feedItunesSummary) ?? slot(.feedItunesSubtitle) ?? slot(.feedAtomSubtitle)
        feed.author =
            (slot(.feedItunesAuthor) ?? slot(.feedAtomAuthorName) ?? slot(.feedDCCreator)
            ?? slot(.feedManagingEditor)).flatMap(TextCleaner.plainText)
        feed.language = (slot(.feedLanguage) ?? slot(.feedDCLanguage) ?? xmlLang).flatMap(LanguageTag.asWritten)
        feed.imageURL = slot(.feedItunesImage) ?? slot(.feedImageURL) ?? slot(.feedAtomLogo) ?? slot(.feedAtomIcon)
        feed.newFeedURL = slot(.feedNewFeedURL)
        feed.podcastGUID = slot(.feedPodcastGUID)
        feed.locked = Self.flag(slot(.feedLocked))
        feed.block = Self.flag(slot(.feedBlock))
        feed.funding = funding
        feed.duplicateGUIDs = guids.duplicates()
        return feed
    }

    private static func flag(_ text: String?) -> Bool? {
        switch text?.lowercased() {
        case "yes", "true", "explicit": true
        case "no", "false", "clean": false
        default: nil
        }
    }
}

/// An element's attributes as a walker sees them.
protocol AttributeSource {
    /// Calls `body` with the value of attribute `name` (qualified, without a namespace; the corresponding C
    /// function is `xmlGetNoNsProp`), or returns `nil` when the element has none.
    func withAttribute<R>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R?
    /// The base URI in effect at the element (`xml:base` applied to the document URL).
    func currentBase() -> String?
}
