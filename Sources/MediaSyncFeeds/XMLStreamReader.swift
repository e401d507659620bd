internal import CLibXML2
import Foundation

/// A thin owner of a libxml2 `xmlTextReader` fed by an ``InputRewriter`` (used by ``FeedParser`` and ``OPML``).
///
/// The corresponding C functions are `xmlReaderForIO`, `xmlTextReaderRead`, `xmlTextReaderNext` and `xmlFreeTextReader`.
final class XMLStreamReader {
    /// libxml2's node types as returned by `xmlTextReaderNodeType`.
    enum NodeType: Int32 {
        case element = 1
        case text = 3
        case cdata = 4
        case whitespace = 13
        case significantWhitespace = 14
        case endElement = 15
    }

    /// `XML_PARSE_RECOVER | XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR`, and deliberately not
    /// `XML_PARSE_NOENT`, `XML_PARSE_DTDLOAD` or `XML_PARSE_HUGE`.
    private static let options = Int32(
        XML_PARSE_RECOVER.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOWARNING.rawValue
            | XML_PARSE_NOERROR.rawValue)

    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    private let reader: xmlTextReaderPtr
    private let input: InputRewriter
    private let inputBox: Unmanaged<InputRewriter>
    private let errorBox: Unmanaged<ErrorRecorder>
    private var tagCache: [PointerPair: Int] = [:]
    /// Whether elements in no namespace are Atom's (see ``readUnqualifiedAsAtom()``).
    private var unqualifiedIsAtom = false
    private static let fastCacheSize = 128
    /// Owned storage (a pointer, so lookups need no exclusivity checks); names are interned in the reader's
    /// dictionary, which lives as long as the reader.
    private let fastCache:
        UnsafeMutablePointer<
            (namespace: UnsafePointer<UInt8>?, name: UnsafePointer<UInt8>?, tag: Int)
        > = {
            let cache = UnsafeMutablePointer<(namespace: UnsafePointer<UInt8>?, name: UnsafePointer<UInt8>?, tag: Int)>
                .allocate(capacity: XMLStreamReader.fastCacheSize)
            cache.initialize(repeating: (nil, nil, -1), count: XMLStreamReader.fastCacheSize)
            return cache
        }()

    /// Records the first fatal libxml2 error instead of letting libxml2 print it.
    final class ErrorRecorder {
        var line = 0
        var message: String?
    }

    private struct PointerPair: Hashable {
        var namespace: UnsafePointer<UInt8>?
        var name: UnsafePointer<UInt8>
    }

    private static let readCallback: xmlInputReadCallback = { context, buffer, length in
        guard let context, let buffer, length > 0 else { return 0 }
        let input = Unmanaged<InputRewriter>.fromOpaque(context).takeUnretainedValue()
        return Int32(
            input.read(into: UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self), capacity: Int(length))
        )
    }

    private static let errorCallback: xmlStructuredErrorFunc = { context, error in
        guard let context, let error else { return }
        let recorder = Unmanaged<ErrorRecorder>.fromOpaque(context).takeUnretainedValue()
        guard recorder.message == nil, error.pointee.level == XML_ERR_FATAL else { return }
        recorder.line = Int(error.pointee.line)
        let text = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        // libxml2's messages may span lines ("…indicate encoding !\nBytes: 0xE9…"); errors are one line.
        recorder.message = String(text.map { $0.isNewline ? " " : $0 }).trimmingCharacters()
    }

    private let document: xmlDocPtr?

    /// Creates a streaming reader over a prepared input.
    /// - Parameters:
    ///   - input: The rewritten document.
    ///   - baseURL: The document URL that relative references and `xml:base` resolve against.
    convenience init(input: InputRewriter, baseURL: String?) throws {
        try self.init(input, baseURL: baseURL, recovering: false)
    }

    /// Creates a reader that walks a document libxml2 parsed in recovery mode (`xmlReadIO` with
    /// `XML_PARSE_RECOVER`, then `xmlReaderWalker`). libxml2's streaming reader stops at the first
    /// well-formedness error even in recover mode; this is the fallback for such feeds and holds the whole
    /// (recovered) document in memory.
    /// - Throws: ``FeedError/malformed(line:message:)`` when libxml2 cannot recover a document at all.
    convenience init(recovering input: InputRewriter, baseURL: String?) throws {
        try self.init(input, baseURL: baseURL, recovering: true)
    }

    /// ``init(input:baseURL:)`` or, when `recovering`, ``init(recovering:baseURL:)``.
    private init(_ input: InputRewriter, baseURL: String?, recovering: Bool) throws {
        _ = Self.initialized
        cxml_prepare_thread()
        let inputBox = Unmanaged.passRetained(input)
        let errorBox = Unmanaged.passRetained(ErrorRecorder())
        var document: xmlDocPtr?
        let reader: xmlTextReaderPtr?
        if recovering {
            // xmlReadIO has no per-document error handler; the thread's handler was silenced above.
            document = xmlReadIO(Self.readCallback, nil, inputBox.toOpaque(), baseURL, input.encoding, Self.options)
            reader = document.flatMap { xmlReaderWalker($0) }
        } else {
            reader = xmlReaderForIO(Self.readCallback, nil, inputBox.toOpaque(), baseURL, input.encoding, Self.options)
        }
        guard let reader else {
            if let document { xmlFreeDoc(document) }
            inputBox.release()
            errorBox.release()
            fastCache.deallocate()  // deinit does not run for an instance whose initialiser throws
            let message = recovering ? "libxml2 could not recover the document" : "libxml2 could not create a reader"
            throw input.failure ?? FeedError.malformed(line: 0, message: message)
        }
        self.reader = reader
        self.input = input
        self.inputBox = inputBox
        self.errorBox = errorBox
        self.document = document
        if !recovering { xmlTextReaderSetStructuredErrorHandler(reader, Self.errorCallback, errorBox.toOpaque()) }
    }

    deinit {
        fastCache.deallocate()
        xmlFreeTextReader(reader)
        if let document { xmlFreeDoc(document) }
        inputBox.release()
        errorBox.release()
    }

    /// Advances to the next node (or, with `skipChildren`, past the current element's subtree).
    /// - Returns: `false` at the end of the document.
    /// - Throws: The rewriter's failure, or ``FeedError/malformed(line:message:)`` when libxml2 gives up.
    func advance(skipChildren: Bool = false) throws -> Bool {
        let status: Int32
        if skipChildren, document != nil {
            status = skipSubtreeOfDocument()
        } else {
            status = skipChildren ? xmlTextReaderNext(reader) : xmlTextReaderRead(reader)
        }
        if status == 1 { return true }
        if let failure = input.failure { throw failure }
        if status == 0 { return false }
        let recorder = errorBox.takeUnretainedValue()
        throw FeedError.malformed(line: recorder.line, message: recorder.message ?? "libxml2 stopped reading")
    }

    /// `xmlTextReaderNext` for a reader walking a document (``init(recovering:baseURL:)``). libxml2's own
    /// (`xmlTextReaderNextTree`) moves from an element that is its parent's last child straight to the parent's
    /// next sibling, so the parent's end element is never reported and every context after it is wrong (a feed
    /// whose `<image>` ends `<link>…</link></image>` then loses all its items). Reads through the subtree instead,
    /// up to the element's own end, and one node further.
    private func skipSubtreeOfDocument() -> Int32 {
        let start = xmlTextReaderDepth(reader)
        var status: Int32
        repeat {
            status = xmlTextReaderRead(reader)
        } while status == 1
            && !(xmlTextReaderDepth(reader) == start && xmlTextReaderNodeType(reader) == NodeType.endElement.rawValue)
        return status == 1 ? xmlTextReaderRead(reader) : status
    }

    /// The current node's type, `nil` for types the parsers ignore.
    var nodeType: NodeType? { NodeType(rawValue: xmlTextReaderNodeType(reader)) }

    /// The current node's depth (the root element is 0). The corresponding C function is `xmlTextReaderDepth`.
    var depth: Int { Int(xmlTextReaderDepth(reader)) }

    /// Whether the current element is written `<x/>` (no end-element node follows).
    var isEmptyElement: Bool { xmlTextReaderIsEmptyElement(reader) == 1 }

    /// The current element's schema tag number (see ``FeedSchema/tags``), -1 when the parser does not read it.
    /// Names are interned in the reader's dictionary, so the lookup is cached by pointer.
    func tag() -> Int {
        guard let name = xmlTextReaderConstLocalName(reader) else { return -1 }
        let namespace = xmlTextReaderConstNamespaceUri(reader)
        // A direct-mapped cache in front of the dictionary: hashing the pointer pair costs more than libxml2's
        // own work for a small element.
        let slot =
            (Int(bitPattern: UInt(bitPattern: name)) >> 3 ^ Int(bitPattern: UInt(bitPattern: namespace)) >> 5)
            & (Self.fastCacheSize - 1)
        let entry = fastCache[slot]
        if entry.name == name, entry.namespace == namespace { return entry.tag }
        let pair = PointerPair(namespace: namespace, name: name)
        if let known = tagCache[pair] {
            fastCache[slot] = (namespace, name, known)
            return known
        }
        let key = ElementNames.key(
            namespaceURI: namespace.map { String(cString: $0) }, localName: String(cString: name),
            unqualifiedIsAtom: unqualifiedIsAtom)
        let tag = FeedSchema.tag(forKey: key)
        tagCache[pair] = tag
        fastCache[slot] = (namespace, name, tag)
        return tag
    }

    /// From now on, elements in no namespace are read as Atom's: the document is an Atom feed written without
    /// the namespace (a root `feed` in no namespace).
    func readUnqualifiedAsAtom() {
        guard !unqualifiedIsAtom else { return }
        unqualifiedIsAtom = true
        tagCache.removeAll()
        fastCache.update(repeating: (nil, nil, -1), count: Self.fastCacheSize)
    }

    /// Whether the current element is in no namespace and has no prefix.
    var isUnqualified: Bool {
        xmlTextReaderConstNamespaceUri(reader) == nil && xmlTextReaderConstPrefix(reader) == nil
    }

    /// Whether the current node's local name is `name`. The corresponding C function is `xmlStrEqual`.
    func localNameIs(_ name: StaticString) -> Bool {
        xmlStrEqual(xmlTextReaderConstLocalName(reader), name.utf8Start) == 1
    }

    /// The current element's qualified name (for error messages).
    var qualifiedName: String {
        xmlTextReaderConstName(reader).map { String(cString: $0) } ?? ""
    }

    /// An attribute of the current element by qualified name. The corresponding C function is `xmlTextReaderGetAttribute`.
    func attribute(_ name: StaticString) -> String? {
        guard let value = xmlTextReaderGetAttribute(reader, name.utf8Start) else { return nil }
        defer { cxml_free(value) }
        return String(cString: value)
    }

    /// Appends the current element serialised as XML (markup and all). The corresponding C function is
    /// `xmlTextReaderReadOuterXml`, which expands only this element's subtree.
    func appendOuterXML(to buffer: inout [UInt8]) {
        guard let value = xmlTextReaderReadOuterXml(reader) else { return }
        defer { cxml_free(value) }
        buffer.append(contentsOf: UnsafeBufferPointer(start: value, count: strlen(value)))
    }

    /// Appends the content of the current element serialised as XML (its children, markup and all). The
    /// corresponding C function is `xmlTextReaderReadInnerXml`.
    func appendInnerXML(to buffer: inout [UInt8]) {
        guard let value = xmlTextReaderReadInnerXml(reader) else { return }
        defer { cxml_free(value) }
        buffer.append(contentsOf: UnsafeBufferPointer(start: value, count: strlen(value)))
    }

    /// Whether the current node is in the namespace `uri`. The corresponding C function is `xmlStrEqual`.
    func namespaceIs(_ uri: StaticString) -> Bool {
        xmlStrEqual(xmlTextReaderConstNamespaceUri(reader), uri.utf8Start) == 1
    }

    /// The base URI in effect for the current node (`xml:base` applied to the document URL).
    /// The corresponding C function is `xmlTextReaderConstBaseUri`.
    var baseURI: String? {
        xmlTextReaderConstBaseUri(reader).map { String(cString: $0) }
    }

    /// The `xml:lang` in effect for the current node. The corresponding C function is `xmlTextReaderConstXmlLang`.
    var xmlLang: String? {
        xmlTextReaderConstXmlLang(reader).map { String(cString: $0) }
    }

    /// Appends the current text or CDATA node's bytes to `buffer` without making a `String`.
    func appendValue(to buffer: inout [UInt8]) {
        guard let value = xmlTextReaderConstValue(reader) else { return }
        buffer.append(contentsOf: UnsafeBufferPointer(start: value, count: strlen(value)))
    }
}

extension XMLStreamReader: AttributeSource {
    /// The corresponding C function is `xmlTextReaderGetAttribute`.
    func withAttribute<R>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let value = xmlTextReaderGetAttribute(reader, name.utf8Start) else { return nil }
        defer { cxml_free(value) }
        return body(UnsafeBufferPointer(start: value, count: strlen(value)))
    }

    /// An attribute by namespace URI and local name. The corresponding C function is `xmlTextReaderGetAttributeNs`.
    func withAttribute<R>(namespace: StaticString, _ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R)
        -> R?
    {
        guard let value = xmlTextReaderGetAttributeNs(reader, name.utf8Start, namespace.utf8Start) else { return nil }
        defer { cxml_free(value) }
        return body(UnsafeBufferPointer(start: value, count: strlen(value)))
    }

    func currentBase() -> String? {
        baseURI
    }
}

extension String {
    /// The string without leading and trailing ASCII whitespace.
    func trimmingCharacters() -> String {
        @inline(__always) func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
        }
        var copy = self
        return copy.withUTF8 { bytes -> String in
            var start = 0
            var end = bytes.count
            while start < end, isSpace(bytes[start]) { start += 1 }
            while end > start, isSpace(bytes[end - 1]) { end -= 1 }
            if start == 0, end == bytes.count, end > 0 { return self }
            if start == end { return "" }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
    }
}
