internal import CLibXML2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fast path of ``FeedParser``'s streaming parse, for consumers that can take back what they were given:
/// libxml2's SAX2 push parser over the speculative ``InputRewriter``, applying ``FeedSchema`` as ``FeedWalker``
/// does, without the `xmlTextReader` layer (which builds, links and frees a node for every element and text).
///
/// Whenever its result could differ from ``FeedWalker``'s on the careful path it gives up with a ``FeedError``
/// and the caller reads the document again the careful way: at libxml2's first well-formedness error (the
/// streaming reader stops there too), on markup inside a text field (the walker keeps it as serialised XML), on
/// `xml:base` (the reader resolves it), and on a text node over libxml2's 10 MB limit (the reader's tree builder
/// refuses it).
///
/// The state lives behind a pointer the parse owns, handed to libxml2 as the callbacks' context: no reference
/// counting and no dynamic exclusivity checks per callback.
///
/// The corresponding C functions are `xmlCreatePushParserCtxt`, `xmlParseChunk` and `xmlStopParser`.
struct FeedSAXParser {
    typealias Field = FeedSchema.Field

    /// `XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR`: not `XML_PARSE_RECOVER`, so libxml2 stops at
    /// the first well-formedness error, which ends this path anyway.
    private static let options = Int32(
        XML_PARSE_NONET.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOERROR.rawValue)
    /// libxml2's `XML_MAX_TEXT_LENGTH`: the tree builder behind `xmlTextReader` refuses a longer text node.
    private static let maxTextNode = 10_000_000
    /// The most bytes handed to `xmlParseChunk` at a time.
    private static let pushSize = 64 * 1024
    private static let xmlNamespace: StaticString = "http://www.w3.org/XML/1998/namespace"
    private static let rdfNamespace: StaticString = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

    private var builder = FeedBuilder()
    /// Entered contexts with their depth and the `xml:lang` in effect there.
    private var contexts: [(context: FeedSchema.Context, depth: Int, lang: String?)] = []
    /// The current element's depth (the root element is 0).
    private var depth = -1
    /// Deeper documents are left to the careful path (libxml2's own limit is 256 without `XML_PARSE_HUGE`).
    static let maxDepth = 200
    /// The depth of the element whose subtree is being skipped, `Int.max` when none is.
    private var skipDepth = Int.max
    private var collecting: Field?
    private var collectingDepth = 0
    /// Where the collected field's text starts in the builder's arena.
    private var textStart = 0
    /// Bytes of the current text node as the tree builder would merge it (for ``maxTextNode``).
    private var textRun = 0
    private var sawRoot = false
    /// The document URL as libxml2 records it (`xmlPathToURI`), the base of relative URLs without `xml:base`.
    private let documentBase: String?
    /// Receives each finished item (``FeedBuilder/endItem()`` or ``FeedBuilder/selectItem()``).
    private let onItem: (inout FeedBuilder) throws -> Void
    private var context: xmlParserCtxtPtr?
    /// Why parsing stopped early: a ``FeedError`` (give up) or the consumer's error.
    private var failure: (any Error)?
    private let tagCache = TagCache()

    private init(baseURL: String?, onItem: @escaping (inout FeedBuilder) throws -> Void) {
        documentBase = baseURL.flatMap { url -> String? in
            guard let converted = xmlPathToURI(url) else { return nil }
            defer { cxml_free(converted) }
            return String(cString: converted)
        }
        self.onItem = onItem
    }

    /// Parses the rewritten document, handing each item to `onItem` as it ends.
    /// - Parameters:
    ///   - input: A speculative rewriter (``InputRewriter/init(speculative:chunkSize:)``).
    ///   - baseURL: The URL relative references resolve against.
    ///   - chunkSize: How many bytes to hand libxml2 at a time.
    ///   - onItem: Called once per item, in document order, with the builder holding it: it calls
    ///     ``FeedBuilder/endItem()`` or ``FeedBuilder/selectItem()``.
    /// - Returns: The feed-level values, with ``Feed/episodes`` empty.
    /// - Throws: A ``FeedError`` when this path gives up (see the type's description), and whatever `onItem`
    ///   throws.
    static func parse(
        input: InputRewriter, baseURL: String?, chunkSize: Int, onItem: (inout FeedBuilder) throws -> Void
    ) throws -> Feed {
        try withoutActuallyEscaping(onItem) { onItem in
            let state = UnsafeMutablePointer<FeedSAXParser>.allocate(capacity: 1)
            state.initialize(to: FeedSAXParser(baseURL: baseURL, onItem: onItem))
            defer {
                state.deinitialize(count: 1)
                state.deallocate()
            }
            // libxml2 appends each chunk to its input buffer and shrinks it lazily: small pushes keep that
            // buffer small (256 KiB pushes grew it to 4 MiB, reallocated and copied on the way).
            return try run(state, input: input, chunkSize: min(max(chunkSize, 1), Self.pushSize))
        }
    }

    /// ``parse(input:baseURL:chunkSize:onItem:)`` delivering episodes.
    static func parse(
        input: InputRewriter, baseURL: String?, chunkSize: Int, onEpisode: (Episode) throws -> Void
    ) throws -> Feed {
        try parse(input: input, baseURL: baseURL, chunkSize: chunkSize) { try onEpisode($0.endItem()) }
    }

    private static func run(_ state: UnsafeMutablePointer<FeedSAXParser>, input: InputRewriter, chunkSize: Int)
        throws -> Feed
    {
        cxml_prepare_thread()
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = startElement
        handler.endElementNs = endElement
        handler.characters = characters
        handler.ignorableWhitespace = characters
        handler.cdataBlock = cdata
        handler.comment = comment
        handler.processingInstruction = instruction
        handler.serror = cxml_ignore_structured_error
        guard let context = xmlCreatePushParserCtxt(&handler, UnsafeMutableRawPointer(state), nil, 0, nil) else {
            throw FeedError.malformed(line: 0, message: "libxml2 could not create a parser")
        }
        state.pointee.context = context
        defer {
            state.pointee.context = nil
            xmlFreeParserCtxt(context)
        }
        xmlCtxtUseOptions(context, Self.options)
        xmlSwitchEncoding(context, XML_CHAR_ENCODING_UTF8)
        while true {
            // Unchanged input goes to libxml2 straight from the rewriter's window.
            var status: Int32 = 0
            let count = input.readChunk(maximum: chunkSize) { chunk in
                status = chunk.withMemoryRebound(to: CChar.self) {
                    xmlParseChunk(context, $0.baseAddress, Int32($0.count), 0)
                }
            }
            if count < 0 { throw input.failure ?? FeedError.malformed(line: 0, message: "input failed") }
            if count == 0 { status = xmlParseChunk(context, nil, 0, 1) }
            if let failure = state.pointee.failure { throw failure }
            guard status == 0, context.pointee.wellFormed == 1 else {
                throw FeedError.malformed(line: Int(xmlSAX2GetLineNumber(context)), message: "not well-formed")
            }
            if count == 0 { break }
        }
        if let failure = input.failure { throw failure }
        guard state.pointee.sawRoot else { throw FeedError.empty }
        return state.pointee.builder.finish()
    }

    /// Stops libxml2 and records why (the first reason wins).
    private mutating func fail(_ error: any Error) {
        if failure == nil { failure = error }
        if let context { xmlStopParser(context) }
    }

    // MARK: Events

    private mutating func startElement(
        _ localName: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?,
        _ attributes: SAXAttributes
    ) {
        depth += 1
        textRun = 0
        if depth >= FeedSAXParser.maxDepth {
            // libxml2 treats documents this deep differently in its push and reader parsers: read carefully.
            fail(FeedError.malformed(line: 0, message: "nested deeper than the fast path reads"))
            return
        }
        if depth > skipDepth { return }
        if collecting != nil {
            fail(FeedError.malformed(line: 0, message: "markup inside a text field"))
            return
        }
        let tag = tagCache.tag(localName, prefix: prefix, uri: uri)
        let action = FeedSchema.action(in: contexts.last?.context ?? .root, tag: tag)
        if !sawRoot {
            sawRoot = true
            // CDF and Atom without its namespace are rare: the careful path reads them.
            if tag == FeedSchema.cdfChannelTag || (uri == nil && prefix == nil && xmlStrEqual(localName, "feed") == 1) {
                fail(FeedError.malformed(line: 0, message: "a CDF channel or an Atom feed in no namespace"))
                return
            }
            guard case .enter? = action else {
                var name = String(cString: localName)
                if let prefix { name = String(cString: prefix) + ":" + name }
                fail(FeedError.notAFeed(rootElement: name))
                return
            }
        }
        guard let action else {
            skipDepth = depth
            return
        }
        if attributes.count > 0, attributes.withAttribute(namespace: Self.xmlNamespace, "base", { _ in true }) != nil {
            fail(FeedError.malformed(line: 0, message: "xml:base"))
            return
        }
        switch action {
        case .enter(let context):
            var lang = contexts.last?.lang
            if attributes.count > 0,
                let own = attributes.withAttribute(
                    namespace: Self.xmlNamespace, "lang", { String(decoding: $0, as: UTF8.self) })
            {
                lang = own
            }
            if context == .channel { builder.setLanguageFallback(lang) }
            if context == .item {
                builder.beginItem()
                if attributes.count > 0 {
                    attributes.withAttribute(namespace: Self.rdfNamespace, "about") { builder.setRDFAbout($0) }
                }
            }
            contexts.append((context, depth, lang))
        case .field(let field):
            builder.readAttributes(of: field, from: attributes)
            switch field.kind {
            case .attributes:
                skipDepth = depth
            case .text, .urlText, .attributesAndText:
                textStart = builder.beginText()
                collecting = field
                collectingDepth = depth
            }
        }
    }

    private mutating func endElement() {
        textRun = 0
        defer { depth -= 1 }
        if depth >= skipDepth {
            if depth == skipDepth { skipDepth = .max }
            return
        }
        if let field = collecting {
            if depth == collectingDepth {
                collecting = nil
                let base = documentBase
                builder.finishText(field, collectedFrom: textStart, base: { base })
            }
            return
        }
        if let top = contexts.last, top.depth == depth {
            contexts.removeLast()
            if top.context == .item {
                do {
                    try onItem(&builder)
                } catch {
                    fail(error)
                }
            }
        }
    }

    private mutating func characters(_ bytes: UnsafePointer<xmlChar>, _ count: Int) {
        textRun += count
        if textRun > Self.maxTextNode {
            fail(FeedError.malformed(line: 0, message: "text node over \(Self.maxTextNode) bytes"))
            return
        }
        if collecting != nil { builder.appendText(UnsafeBufferPointer(start: bytes, count: count)) }
    }

    private mutating func cdata(_ bytes: UnsafePointer<xmlChar>, _ count: Int) {
        textRun = 0
        if collecting != nil { builder.appendText(UnsafeBufferPointer(start: bytes, count: count)) }
    }

    // MARK: C callbacks

    private static func state(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<FeedSAXParser>? {
        context?.assumingMemoryBound(to: FeedSAXParser.self)
    }

    private static let startElement: startElementNsSAX2Func = {
        context, localName, prefix, uri, _, _, attributeCount, _, attributes in
        guard let state = state(context), let localName else { return }
        state.pointee.startElement(
            localName, prefix, uri,
            SAXAttributes(entries: attributes, count: Int(attributeCount), base: state.pointee.documentBase))
    }

    private static let endElement: endElementNsSAX2Func = { context, _, _, _ in
        state(context)?.pointee.endElement()
    }

    private static let characters: charactersSAXFunc = { context, bytes, count in
        guard let state = state(context), let bytes, count > 0 else { return }
        state.pointee.characters(bytes, Int(count))
    }

    private static let cdata: cdataBlockSAXFunc = { context, bytes, count in
        guard let state = state(context), let bytes, count > 0 else { return }
        state.pointee.cdata(bytes, Int(count))
    }

    private static let comment: commentSAXFunc = { context, _ in
        state(context)?.pointee.textRun = 0
    }

    private static let instruction: processingInstructionSAXFunc = { context, _, _ in
        state(context)?.pointee.textRun = 0
    }
}

/// The attributes libxml2's SAX2 `startElementNs` hands out: per attribute, five pointers (local name, prefix,
/// namespace URI, value, end of value).
struct SAXAttributes: AttributeSource {
    let entries: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int
    let base: String?

    func withAttribute<R>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let entries else { return nil }
        for index in 0..<count {
            let entry = entries + index * 5
            guard entry[1] == nil, let local = entry[0], xmlStrEqual(local, name.utf8Start) == 1 else { continue }
            return Self.withValue(entry, body)
        }
        return nil
    }

    /// An attribute by namespace URI and local name (`xmlGetNsProp`).
    func withAttribute<R>(namespace: StaticString, _ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R)
        -> R?
    {
        guard let entries else { return nil }
        for index in 0..<count {
            let entry = entries + index * 5
            guard let local = entry[0], let uri = entry[2], xmlStrEqual(local, name.utf8Start) == 1,
                xmlStrEqual(uri, namespace.utf8Start) == 1
            else { continue }
            return Self.withValue(entry, body)
        }
        return nil
    }

    func currentBase() -> String? {
        base
    }

    /// An attribute's value. Without `XML_PARSE_NOENT` libxml2 hands out every `&` as `&#38;` (and nothing else
    /// escaped), which its tree builder turns back into `&`; so does this.
    private static func withValue<R>(
        _ entry: UnsafeMutablePointer<UnsafePointer<xmlChar>?>, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        guard let start = entry[3], let end = entry[4], end > start else {
            return body(UnsafeBufferPointer(start: nil, count: 0))
        }
        let bytes = UnsafeBufferPointer(start: start, count: end - start)
        guard memchr(start, Int32(UInt8(ascii: "&")), bytes.count) != nil else { return body(bytes) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "&"), index + 5 <= bytes.count, bytes[index + 1] == UInt8(ascii: "#"),
                bytes[index + 2] == UInt8(ascii: "3"), bytes[index + 3] == UInt8(ascii: "8"),
                bytes[index + 4] == UInt8(ascii: ";")
            {
                decoded.append(UInt8(ascii: "&"))
                index += 5
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded.withUnsafeBufferPointer(body)
    }
}

/// Element name → ``FeedSchema`` tag, cached by the interned pointers libxml2 hands out (names and namespace URIs
/// live in the parser's dictionary as long as the parser): a two-way set-associative table in front of a dictionary.
final class TagCache {
    private struct Key: Hashable {
        var name: UnsafePointer<UInt8>?
        /// The namespace URI, or for an undeclared prefix the prefix (then `prefixed` is set).
        var qualifier: UnsafePointer<UInt8>?
        var prefixed: Bool
    }

    private static let slotBits = 8
    /// Owned storage (a pointer, so lookups need no bounds or exclusivity checks).
    private let recent: UnsafeMutablePointer<(key: Key, tag: Int)>
    private var known: [Key: Int] = [:]

    init() {
        recent = .allocate(capacity: 1 << Self.slotBits)
        recent.initialize(repeating: (Key(name: nil, qualifier: nil, prefixed: false), -1), count: 1 << Self.slotBits)
    }

    deinit {
        recent.deinitialize(count: 1 << Self.slotBits)
        recent.deallocate()
    }

    /// The tag of an element as ``XMLStreamReader/tag(in:)`` finds it: an undeclared prefix is part of the name.
    func tag(_ name: UnsafePointer<UInt8>, prefix: UnsafePointer<UInt8>?, uri: UnsafePointer<UInt8>?) -> Int {
        let key = Key(name: name, qualifier: uri ?? prefix, prefixed: uri == nil && prefix != nil)
        let mixed =
            UInt(bitPattern: name) &* 0x9E37_79B9_7F4A_7C15 ^ UInt(bitPattern: key.qualifier) &* 0xC2B2_AE3D_27D4_EB4F
        // Two ways per set (the newest first): `item` and `description` shared a slot on the bench feed.
        let slot = recent + Int(mixed >> (UInt.bitWidth - Self.slotBits)) & ~1
        if slot[0].key == key { return slot[0].tag }
        if slot[1].key == key { return slot[1].tag }
        let tag = known[key] ?? lookUp(name, prefix: prefix, uri: uri)
        known[key] = tag
        slot[1] = slot[0]
        slot[0] = (key, tag)
        return tag
    }

    private func lookUp(_ name: UnsafePointer<UInt8>, prefix: UnsafePointer<UInt8>?, uri: UnsafePointer<UInt8>?)
        -> Int
    {
        let local = String(cString: name)
        let elementKey: String?
        if let uri {
            elementKey = ElementNames.key(namespaceURI: String(cString: uri), localName: local)
        } else if let prefix {
            elementKey = ElementNames.key(namespaceURI: nil, localName: String(cString: prefix) + ":" + local)
        } else {
            elementKey = ElementNames.key(namespaceURI: nil, localName: local)
        }
        return FeedSchema.tag(forKey: elementKey)
    }
}
