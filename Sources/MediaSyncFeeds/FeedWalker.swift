/// Walks the reader's nodes and applies ``FeedSchema`` to them, filling a ``FeedBuilder``.
///
/// State: a stack of entered contexts and at most one field collecting text (`collecting`); markup nested inside
/// that field is kept as serialised XML. Elements the table does not know are skipped with `xmlTextReaderNext`,
/// subtree and all.
struct FeedWalker {
    typealias Field = FeedSchema.Field

    private let reader: XMLStreamReader
    private var builder = FeedBuilder()
    private var contexts: [(context: FeedSchema.Context, depth: Int)] = []
    private var collecting: Field?
    private var collectingDepth = 0
    private var text: [UInt8] = []
    /// Whether the field being collected is Atom 1.0 `type="xhtml"` whose first element may be the wrapping `div`.
    private var unwrapsXHTMLDiv = false
    /// Whether the root is CDF's `CHANNEL`, whose channel and items carry their link and date in attributes.
    private var isCDF = false

    init(reader: XMLStreamReader) {
        self.reader = reader
    }

    /// Walks the whole document, handing each episode to `onEpisode` as its item ends.
    /// - Returns: The feed-level values, with ``Feed/episodes`` empty.
    mutating func run(onEpisode: (Episode) throws -> Void) throws -> Feed {
        var sawRoot = false
        var skip = false
        text.reserveCapacity(4096)
        while try reader.advance(skipChildren: skip) {
            skip = false
            guard let type = reader.nodeType else { continue }
            switch type {
            case .element:
                if collecting != nil {
                    // Unescaped markup inside a text field (`<description><p>…</p></description>`): keep it as
                    // markup, then skip the subtree the serialisation already covered. Atom 1.0's XHTML is
                    // wrapped in a `div` that is not part of the content (RFC 4287 §3.1.1.3).
                    let start = text.count
                    if unwrapsXHTMLDiv, reader.depth == collectingDepth + 1, reader.localNameIs("div"),
                        reader.namespaceIs("http://www.w3.org/1999/xhtml")
                    {
                        reader.appendInnerXML(to: &text)
                    } else {
                        reader.appendOuterXML(to: &text)
                    }
                    unwrapsXHTMLDiv = false
                    MarkupNamespaces.removeFeedDeclarations(from: &text, start: start)
                    skip = true
                    continue
                }
                if !sawRoot, reader.isUnqualified, reader.localNameIs("feed") {
                    // An Atom feed without its namespace (feedparser reads one): its elements are Atom's.
                    reader.readUnqualifiedAsAtom()
                }
                let tag = reader.tag()
                let action = FeedSchema.action(in: contexts.last?.context ?? .root, tag: tag)
                if !sawRoot {
                    sawRoot = true
                    guard case .enter? = action else { throw FeedError.notAFeed(rootElement: reader.qualifiedName) }
                    isCDF = tag == FeedSchema.cdfChannelTag
                }
                switch action {
                case nil:
                    skip = !reader.isEmptyElement
                case .enter(let context)?:
                    if let episode = enter(context) { try onEpisode(episode) }
                case .field(let field)?:
                    skip = start(field)
                }
            case .text, .cdata, .whitespace, .significantWhitespace:
                if collecting != nil { reader.appendValue(to: &text) }
            case .endElement:
                // End elements are matched by depth: a reader walking a recovered document reports an end for
                // childless elements that it also calls empty, and those were already handled at their start.
                let depth = reader.depth
                if let field = collecting {
                    if depth == collectingDepth { finish(field) }
                    continue
                }
                if let top = contexts.last, top.depth == depth {
                    contexts.removeLast()
                    if top.context == .item { try onEpisode(builder.endItem()) }
                }
            }
        }
        guard sawRoot else { throw FeedError.empty }
        return builder.finish()
    }

    /// Enters a context; returns the episode of an empty `<item/>`.
    private mutating func enter(_ context: FeedSchema.Context) -> Episode? {
        if context == .channel { builder.setLanguageFallback(reader.xmlLang) }
        if context == .item {
            builder.beginItem()
            let reader = self.reader
            reader.withAttribute(namespace: "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "about") {
                builder.setRDFAbout($0)
            }
        }
        if isCDF, context == .channel || context == .item { builder.readCDFAttributes(of: context, from: reader) }
        if reader.isEmptyElement {
            if context == .item { return builder.endItem() }
        } else {
            contexts.append((context, reader.depth))
        }
        return nil
    }

    /// Handles an element's start. Returns whether to skip its subtree.
    private mutating func start(_ field: Field) -> Bool {
        let reader = self.reader
        builder.readAttributes(of: field, from: reader)
        switch field.kind {
        case .attributes:
            return !reader.isEmptyElement
        case .text, .urlText, .attributesAndText:
            text.removeAll(keepingCapacity: true)
            unwrapsXHTMLDiv =
                reader.withAttribute("type") { TextConstruct.lowercasedASCII(TextConstruct.trimmed($0)) } == "xhtml"
            if reader.isEmptyElement {
                finish(field)
            } else {
                collecting = field
                collectingDepth = reader.depth
            }
            return false
        }
    }

    private mutating func finish(_ field: Field) {
        collecting = nil
        // The reader is on the end tag (or the empty element), whose base is the element's own.
        let reader = self.reader
        builder.finishText(field, text, base: { reader.baseURI })
    }
}
