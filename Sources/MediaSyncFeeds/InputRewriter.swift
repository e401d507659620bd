internal import CLibXML2

/// Turns raw feed bytes into a stream libxml2 can read safely; libxml2 pulls it through `xmlReaderForIO`.
///
/// Before parsing (``init(_:)``) it skips a BOM and leading whitespace, drops the XML declaration, picks the
/// encoding (valid UTF-8 wins over a wrong declaration; invalid UTF-8 falls back to the declared encoding, else
/// windows-1252) and removes the DOCTYPE, keeping only its internal general entities after checking that none
/// expands past ``maxEntityExpansion`` (billion laughs). libxml2 therefore never sees a DTD: nothing is loaded and
/// nothing expands inside libxml2.
///
/// While streaming (``read(into:capacity:)``) it rewrites, outside CDATA sections, comments and processing
/// instructions: it repairs structure the way browsers do (a stray `<` becomes `&lt;`, an end tag that matches no
/// open element is dropped, elements left open inside a closing one are closed, and elements still open at the end
/// of a truncated document are closed; see ``repair``), and it rewrites HTML named entities (`&nbsp;`) to character references, a bare `&` to `&amp;` (so "Q&A" survives),
/// unknown entity references to literal text, references to DTD-declared internal entities to their expansion
/// (external ones are dropped, never read), character references to C1 controls to their windows-1252 meaning, and
/// it drops control characters XML 1.0 forbids.
final class InputRewriter {
    /// Largest expansion of one DTD-declared entity.
    static let maxEntityExpansion = 64 * 1024
    /// Largest total of expanded entity text in one document.
    static let maxTotalExpansion = 4 * 1024 * 1024
    /// Deepest entity nesting.
    static let maxEntityDepth = 8
    /// How many open elements, innermost first, an end tag is matched against (libxml2 allows a depth of 256).
    static let maxEndTagSearch = 300

    private enum Entity {
        case inline([UInt8])
        case external
    }

    private enum Mode {
        case markup
        case cdata
        case comment
        case instruction
    }

    private enum Reference {
        case verbatim(length: Int)
        case replace(length: Int, bytes: [UInt8])
        case bareAmpersand
    }

    /// The input available so far: the whole document for ``init(_:)``, a sliding window for
    /// ``init(streaming:)`` (offsets are relative to the window and shift when it is compacted).
    private var bytes: UnsafeBufferPointer<UInt8>
    private var end: Int
    /// The window's storage when streaming (owned), `nil` for a caller's buffer.
    private var window: UnsafeMutableBufferPointer<UInt8>?
    /// Where more input comes from when streaming; `nil` when `bytes` is the whole document.
    private let source: RewriterSource?
    /// Whether `bytes` ends where the document ends.
    private var atEOF: Bool
    private var position: Int
    private var verbatimUntil: Int
    private var mode = Mode.markup
    private var pending: [UInt8] = []
    private var pendingIndex = 0
    private var entities: [[UInt8]: Entity] = [:]
    private var expansionSizes: [[UInt8]: Int] = [:]
    private var expansionBudget = InputRewriter.maxTotalExpansion
    /// ``specialTable`` copied into memory this instance owns, so the hot loop does not touch a lazy global.
    private let special: UnsafeMutableBufferPointer<UInt8>
    /// Open elements as (offset, length) of their names in `names`: no allocation per tag, and valid after the
    /// streaming window moves on.
    private var openElements: [(start: Int, count: Int)] {
        get { tagStack.pointee.openElements }
        _modify { yield &tagStack.pointee.openElements }
    }
    private var names: [UInt8] {
        get { tagStack.pointee.names }
        _modify { yield &tagStack.pointee.names }
    }
    /// The open-element stack lives behind a pointer this instance owns: the per-tag pushes and pops then need
    /// no dynamic exclusivity checks (a class's stored properties would).
    private struct TagStack {
        var openElements: [(start: Int, count: Int)] = []
        var names: [UInt8] = []
    }
    private let tagStack: UnsafeMutablePointer<TagStack>
    /// Inside a start tag until this index; a `<` there is escaped.
    private var tagEnd = 0
    private var closedAtEnd = false
    /// The first structural repair made (a dropped stray end tag, elements closed for the document), if any.
    private(set) var repair: String?

    /// The encoding name to hand to libxml2 (`nil`: let libxml2 decide).
    private(set) var encoding: String?
    /// Whether the document is in a single-byte encoding this rewriter turns into UTF-8 itself (``encoding`` is
    /// then `UTF-8`): windows-1252, whose five undefined bytes (0x81, 0x8D, 0x8F, 0x90, 0x9D) stopped libxml2's
    /// converter and lost the rest of the document (they become U+0081 … U+009D, as in browsers), and the Mac
    /// encodings iconv lacks or maps otherwise (see ``LegacyEncoding``).
    private(set) var transcodesSingleByte = false
    /// The scalars of bytes 0x80…0xFF when ``transcodesSingleByte``.
    private var highHalf: [UInt16] = LegacyEncoding.windows1252
    /// Whether the document was meant to be UTF-8 (declared so, or not declared) but holds byte sequences that are
    /// not: its valid UTF-8 sequences pass as they are and only the stray bytes are read as windows-1252, so one
    /// latin-1 `é` does not garble the rest of the feed. (A document declared windows-1252 is read as such.)
    private(set) var repairsUTF8 = false
    /// Set when streaming had to stop; the parser reports it instead of libxml2's I/O error.
    private(set) var failure: FeedError?
    /// See ``init(speculative:chunkSize:)``.
    private let speculative: Bool
    /// Speculative mode: the bytes before this window offset are known to be UTF-8.
    private var validated = 0
    /// Speculative mode: a tag has been passed, so a later DOCTYPE is not the prolog's.
    private var passedTag = false

    /// Prepares `bytes`, which must stay valid for the lifetime of the rewriter.
    /// - Throws: ``FeedError/empty`` for a document with no markup, ``FeedError/entityExpansion`` for entity bombs.
    /// - Parameter charset: The `charset` of the response's `Content-Type`, which wins over the XML declaration
    ///   (RFC 7303 §3); valid UTF-8 still wins over both.
    convenience init(_ bytes: UnsafeBufferPointer<UInt8>, charset: String? = nil) throws {
        try self.init(bytes: bytes, source: nil, charset: charset)
    }

    /// Prepares a document read chunk by chunk from `source`: memory stays bounded by the chunk size plus the
    /// longest single construct (tag, DOCTYPE) in the document.
    /// - Throws: As ``init(_:)``, and the source's read errors.
    convenience init(streaming source: RewriterSource, chunkSize: Int = 256 * 1024) throws {
        let window = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(chunkSize, 16))
        try self.init(bytes: UnsafeBufferPointer(start: window.baseAddress, count: 0), source: source, window: window)
    }

    /// Prepares a streamed document on the assumption that it is clean, for a caller that can throw away what
    /// it was given and read the document again with ``init(streaming:chunkSize:)``: the encoding is UTF-8, checked
    /// chunk by chunk as it is read instead of in a pass of its own, and tags are passed through untracked, so
    /// none of the structural repairs is made. Any ``FeedError`` from this rewriter, the reader or the walker (a
    /// byte sequence that is not UTF-8, or anything the repairs would have changed, which libxml2 then rejects)
    /// means: start again with ``init(streaming:chunkSize:)``. When no error occurs, the rewritten document is
    /// byte for byte the one ``init(streaming:chunkSize:)`` produces.
    convenience init(speculative source: RewriterSource, chunkSize: Int = 256 * 1024) throws {
        let window = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(chunkSize, 16))
        try self.init(
            bytes: UnsafeBufferPointer(start: window.baseAddress, count: 0), source: source, window: window,
            speculative: true)
    }

    private init(
        bytes initial: UnsafeBufferPointer<UInt8>, source: RewriterSource?,
        window: UnsafeMutableBufferPointer<UInt8>? = nil, speculative: Bool = false, charset: String? = nil
    ) throws {
        // From here on `bytes` is the property: refilling replaces it.
        self.speculative = speculative
        self.bytes = initial
        self.end = initial.count
        self.source = source
        self.window = window
        self.atEOF = source == nil
        special = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 256)
        tagStack = UnsafeMutablePointer<TagStack>.allocate(capacity: 1)
        tagStack.initialize(to: TagStack())
        _ = special.initialize(from: Self.specialTable)
        position = 0
        verbatimUntil = 0
        // While preparing, `position` stays 0, so refilling only appends and offsets stay valid.
        var index = skipWhitespaceLoading(from: 0)
        while loadAtLeast(index + 3), index + 3 <= end, bytes[index] == 0xEF, bytes[index + 1] == 0xBB,
            bytes[index + 2] == 0xBF
        {
            index = skipWhitespaceLoading(from: index + 3)
        }
        var declaredEncoding: String?
        if loadAtLeast(index + 5), Self.hasPrefix(bytes, at: index, "<?xml") {
            var found = Self.find(bytes, "?>", from: index + 5)
            while found == nil, try refillChecked() { found = Self.find(bytes, "?>", from: index + 5) }
            let close = found ?? end
            declaredEncoding = Self.declaredEncoding(bytes, from: index, to: close)
            index = min(close + 2, end)
        }
        position = index
        verbatimUntil = index
        if skipWhitespaceLoading(from: index) >= end { throw FeedError.empty }
        let valid: Bool
        if speculative {
            // Checked from here on as the window fills (see `checkUTF8()`); a failure ends the attempt.
            validated = index
            checkUTF8()
            valid = true
        } else if let source {
            valid = try source.isValidUTF8(from: index)
        } else {
            valid = Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[index...]))
        }
        if let failure { throw failure }
        let declared = (charset.flatMap(LegacyEncoding.resolve) ?? declaredEncoding.flatMap(LegacyEncoding.resolve))
        if valid {
            encoding = "UTF-8"
        } else if case .converter(let name)? = declared {
            encoding = name
        } else {
            encoding = "UTF-8"
            transcodesSingleByte = true
            if case .singleByte(let table)? = declared {
                highHalf = table.high
            } else {
                // Undeclared, declared UTF-8, or declared in an encoding nothing here reads: UTF-8 with its
                // stray bytes read as windows-1252.
                repairsUTF8 = true
            }
            // Every byte from 0x80 on is special in every mode (see `handleSpecial()`).
            for byte in 0x80...0xFF { special[byte] = 0b1111 }
        }
    }

    deinit {
        special.deallocate()
        tagStack.deinitialize(count: 1)
        tagStack.deallocate()
        window?.deallocate()
    }

    // MARK: Window

    /// Reads more input after `end`, first dropping the bytes before `position` and growing the window when it
    /// is full. Returns `false` at the end of the document (or after a read error, recorded in ``failure``).
    private func refill() -> Bool {
        guard !atEOF, let source, var storage = window, let base = storage.baseAddress else { return false }
        if position > 0 {
            // A speculative rewriter keeps the bytes it has not checked yet (at most an incomplete sequence), and
            // a few before `position` for ``followsTagName()``.
            let shift = speculative ? min(max(0, position - 32), end, validated) : min(position, end)
            (base).update(from: base + shift, count: end - shift)
            end -= shift
            position -= shift
            verbatimUntil -= shift
            tagEnd -= shift
            validated -= shift
        }
        if end == storage.count {
            let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: storage.count * 2)
            if let target = larger.baseAddress { target.initialize(from: base, count: end) }
            storage.deallocate()
            storage = larger
            window = larger
        }
        guard let start = storage.baseAddress else { return false }
        var added = false
        do {
            let count = try source.read(
                into: UnsafeMutableRawBufferPointer(start: start + end, count: storage.count - end))
            if count == 0 {
                atEOF = true
            } else {
                end += count
                added = true
            }
            if speculative {
                bytes = UnsafeBufferPointer(start: start, count: end)
                checkUTF8()
            }
        } catch let error as FeedError {
            failure = error
            atEOF = true
        } catch {
            failure = FeedError.unreadable("\(error)")
            atEOF = true
        }
        bytes = UnsafeBufferPointer(start: start, count: end)
        return added
    }

    /// Speculative mode: checks the bytes read since the last check; records a ``failure`` (which ends the
    /// attempt) at the first sequence that is not UTF-8, or at an incomplete one at the end of the document.
    private func checkUTF8() {
        guard failure == nil, validated < end || atEOF else { return }
        guard let complete = Self.validUTF8Prefix(UnsafeBufferPointer(rebasing: bytes[validated..<end])) else {
            failure = FeedError.malformed(line: 0, message: "not UTF-8")
            atEOF = true
            return
        }
        validated += complete
        if atEOF, validated != end {
            failure = FeedError.malformed(line: 0, message: "not UTF-8")
        }
    }

    /// ``refill()`` that turns a read error into a thrown one.
    private func refillChecked() throws -> Bool {
        let more = refill()
        if let failure { throw failure }
        return more
    }

    /// Refills until `count` bytes are available or the document ends; returns whether `count` bytes are there.
    private func loadAtLeast(_ count: Int) -> Bool {
        while end < count, refill() {}
        return end >= count
    }

    private func skipWhitespaceLoading(from start: Int) -> Int {
        var index = Self.skipWhitespace(bytes, from: start)
        while index >= end, refill() { index = Self.skipWhitespace(bytes, from: index) }
        return index
    }

    // MARK: Streaming

    /// Fills `buffer` with up to `capacity` bytes of the rewritten document.
    /// - Returns: The number of bytes written, 0 at the end, -1 after a failure (see ``failure``).
    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        var written = 0
        while written < capacity {
            let count = readChunk(maximum: capacity - written) { chunk in
                guard let base = chunk.baseAddress else { return }
                (buffer + written).update(from: base, count: chunk.count)
            }
            if count < 0 { return -1 }
            if count == 0 { break }
            written += count
        }
        return written
    }

    /// Hands the next piece of the rewritten document to `body`: input that passes unchanged straight from the
    /// window (no copy), replacements from their own buffer.
    /// - Parameters:
    ///   - maximum: The most bytes to hand over (at least 1).
    ///   - body: Called once with the piece (not empty); the bytes are valid only during the call.
    /// - Returns: The piece's length, 0 at the end of the document, -1 after a failure (see ``failure``).
    func readChunk(maximum: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Int {
        while true {
            if failure != nil { return -1 }
            if pendingIndex < pending.count {
                let count = min(pending.count - pendingIndex, maximum)
                pending.withUnsafeBufferPointer { source in
                    body(UnsafeBufferPointer(rebasing: source[pendingIndex..<(pendingIndex + count)]))
                }
                pendingIndex += count
                if pendingIndex == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingIndex = 0
                }
                return count
            }
            // Unchanged input from `chunkStart` on, up to where the input stops passing through as it is.
            let chunkStart = position
            let limit = position + maximum
            var chunkEnd = -1
            passing: while position < limit, position < end {
                if position < verbatimUntil {
                    position = min(verbatimUntil, limit)
                    continue
                }
                let mask = Self.modeMask(mode)
                var index = position
                if let table = special.baseAddress, let base = bytes.baseAddress {
                    // Text and CDATA are most of a feed: skip eight bytes at a time while none can be special.
                    let swar = (mode == .markup || mode == .cdata) && !transcodesSingleByte
                    let first: UInt64 = mode == .markup ? 0x3C3C_3C3C_3C3C_3C3C : 0x5D5D_5D5D_5D5D_5D5D
                    let second: UInt64 = mode == .markup ? 0x2626_2626_2626_2626 : 0x5D5D_5D5D_5D5D_5D5D
                    let raw = UnsafeRawPointer(base)
                    // Speculative mode passes tags through untracked: `<` before a name or `/` is no stop there.
                    let passTags = speculative && mode == .markup
                    var passed = false
                    defer { if passed { passedTag = true } }
                    let firstVector = SIMD16<UInt8>(repeating: UInt8(truncatingIfNeeded: first))
                    let secondVector = SIMD16<UInt8>(repeating: UInt8(truncatingIfNeeded: second))
                    let space = SIMD16<UInt8>(repeating: 0x20)
                    let tab = SIMD16<UInt8>(repeating: 0x09)
                    let lineFeed = SIMD16<UInt8>(repeating: 0x0A)
                    let carriageReturn = SIMD16<UInt8>(repeating: 0x0D)
                    scan: while index < end {
                        if swar {
                            // Sixteen bytes per step (SSE2): the first byte that may be special, then that byte.
                            if index + 16 <= end {
                                let vector = raw.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
                                let control =
                                    (vector .< space) .& (vector .!= tab) .& (vector .!= lineFeed)
                                    .& (vector .!= carriageReturn)
                                let hits = (vector .== firstVector) .| (vector .== secondVector) .| control
                                if !any(hits) {
                                    index += 16
                                    continue
                                }
                                index += Self.firstLane(hits)
                                // Speculative mode passes tags through untracked: `<` before a name or `/` goes on.
                                let byte = base[index]
                                guard passTags, byte == UInt8(ascii: "<"), index + 1 < end else { break scan }
                                let next = base[index + 1]
                                let named = index + 2 < end && Self.isNameStart(base[index + 2])
                                guard Self.isNameStart(next) || (next == UInt8(ascii: "/") && named) else { break scan }
                                passed = true
                                index += 1
                                continue
                            }
                            if index + 8 <= end {
                                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                                if !Self.hasByteBelow(word ^ first, 1) && !Self.hasByteBelow(word ^ second, 1)
                                    && !Self.hasByteBelow(word, 0x20)
                                {
                                    index += 8
                                    continue
                                }
                            }
                        }
                        let stop = min(index + 8, end)
                        while index < stop {
                            let byte = base[index]
                            if table[Int(byte)] & mask != 0 {
                                guard passTags, byte == UInt8(ascii: "<"), index + 1 < end else { break scan }
                                let next = base[index + 1]
                                let named = index + 2 < end && Self.isNameStart(base[index + 2])
                                guard Self.isNameStart(next) || (next == UInt8(ascii: "/") && named) else { break scan }
                                passed = true
                            }
                            index += 1
                        }
                    }
                }
                if index > position {
                    verbatimUntil = index
                    continue
                }
                // Every special construct but tags and the DOCTYPE needs at most 64 bytes of lookahead: pass
                // on what is ready first (refilling moves the window).
                if end - position < Self.lookahead, !atEOF { break passing }
                if failure != nil { return -1 }
                let before = position
                do {
                    // `false`: a tag or DOCTYPE runs past the window; pass on what is ready, then read more.
                    if try !handleSpecial() { break passing }
                } catch let error as FeedError {
                    failure = error
                    return -1
                } catch {
                    failure = FeedError.malformed(line: 0, message: "\(error)")
                    return -1
                }
                if position != before || pendingIndex < pending.count {
                    // The special took input without passing it on (a replacement or a dropped byte): what
                    // came before it goes first.
                    chunkEnd = before
                    break passing
                }
            }
            let ready = (chunkEnd >= 0 ? chunkEnd : position) - chunkStart
            if ready > 0, let base = bytes.baseAddress {
                body(UnsafeBufferPointer(start: base + chunkStart, count: ready))
                return ready
            }
            if pendingIndex < pending.count || chunkEnd >= 0 { continue }
            // Nothing ready: the window needs more input (or the document has ended).
            if refill() { continue }
            if failure != nil { return -1 }
            // At the end of the document the pass above handles whatever is left with what there is.
            if position < end { continue }
            if !closedAtEnd { closeOpenElementsAtEnd() }
            if pendingIndex < pending.count { continue }
            return 0
        }
    }

    private func emit(_ replacement: [UInt8]) {
        emit(replacement[...])
    }

    private func emit(_ replacement: ArraySlice<UInt8>) {
        guard transcodesSingleByte else {
            pending.append(contentsOf: replacement)
            return
        }
        replacement.withUnsafeBufferPointer { appendTranscoded($0) }
    }

    private func emit(_ replacement: UnsafeBufferPointer<UInt8>.SubSequence) {
        guard transcodesSingleByte else {
            pending.append(contentsOf: replacement)
            return
        }
        appendTranscoded(UnsafeBufferPointer(rebasing: replacement))
    }

    /// Appends bytes of the document to `pending` as UTF-8: byte by byte from windows-1252, or, when repairing
    /// UTF-8 (``repairsUTF8``), keeping each valid UTF-8 sequence.
    private func appendTranscoded(_ bytes: UnsafeBufferPointer<UInt8>) {
        var index = 0
        while index < bytes.count {
            if repairsUTF8, bytes[index] >= 0x80, let length = Self.utf8SequenceLength(bytes, at: index) {
                pending.append(contentsOf: bytes[index..<(index + length)])
                index += length
            } else {
                appendTranscoded(bytes[index])
                index += 1
            }
        }
    }

    /// The length of the complete, well-formed UTF-8 sequence of two or more bytes starting at `index`, if any.
    static func utf8SequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        guard let (length, lower, upper) = utf8Lead(bytes[index]) else { return nil }
        guard index + length <= bytes.count, bytes[index + 1] >= lower, bytes[index + 1] <= upper else { return nil }
        for offset in 2..<max(length, 2) where bytes[index + offset] & 0xC0 != 0x80 { return nil }
        return length
    }

    /// For a UTF-8 lead byte of a sequence of two or more bytes: the sequence's length and the range its second
    /// byte must fall in (Unicode's table of well-formed sequences); nil for any other byte.
    @inline(__always)
    static func utf8Lead(_ lead: UInt8) -> (length: Int, lower: UInt8, upper: UInt8)? {
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default: return nil
        }
        return (length, lower, upper)
    }

    /// Appends a byte of the single-byte encoding (``highHalf``) to `pending` as UTF-8.
    private func appendTranscoded(_ byte: UInt8) {
        guard byte >= 0x80 else {
            pending.append(byte)
            return
        }
        let scalar = UInt32(highHalf[Int(byte) - 0x80])
        if scalar < 0x800 {
            pending.append(UInt8(0xC0 | scalar >> 6))
        } else {
            pending.append(UInt8(0xE0 | scalar >> 12))
            pending.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
        }
        pending.append(UInt8(0x80 | scalar & 0x3F))
    }

    /// Largest lookahead needed for a special byte other than a tag or DOCTYPE.
    private static let lookahead = 64

    /// Handles the special byte at `position`. Returns `false`, having changed nothing, when the construct runs
    /// past the end of the window and more input may complete it.
    private func handleSpecial() throws -> Bool {
        let byte = bytes[position]
        if byte >= 0x80 {
            // Only when transcoding windows-1252 (otherwise no byte from 0x80 on is special).
            if repairsUTF8,
                let length = Self.utf8SequenceLength(UnsafeBufferPointer(rebasing: bytes[..<end]), at: position)
            {
                pending.append(contentsOf: bytes[position..<(position + length)])
                position += length
                return true
            }
            appendTranscoded(byte)
            position += 1
            return true
        }
        if byte < 0x20 {
            // `</t\u{5}itle>`: dropped, it joins the name, which the careful path tracks only up to it.
            if speculative, mode == .markup, followsTagName() {
                throw FeedError.malformed(line: 0, message: "a control character inside a tag name")
            }
            position += 1  // a control character XML 1.0 forbids
            return true
        }
        switch mode {
        case .cdata:
            verbatimUntil = position + (Self.hasPrefix(bytes, at: position, "]]>") ? 3 : 1)
            if verbatimUntil == position + 3 { mode = .markup }
        case .comment:
            verbatimUntil = position + (Self.hasPrefix(bytes, at: position, "-->") ? 3 : 1)
            if verbatimUntil == position + 3 { mode = .markup }
        case .instruction:
            verbatimUntil = position + (Self.hasPrefix(bytes, at: position, "?>") ? 2 : 1)
            if verbatimUntil == position + 2 { mode = .markup }
        case .markup:
            if byte == UInt8(ascii: "<") {
                let next = position + 1 < end ? bytes[position + 1] : 0
                if speculative,
                    Self.isNameStart(next)
                        || (next == UInt8(ascii: "/") && position + 2 < end && Self.isNameStart(bytes[position + 2]))
                {
                    verbatimUntil = position + 1  // tags pass untracked; the rest of the tag is plain markup
                    passedTag = true
                } else if speculative,
                    next == UInt8(ascii: "/")
                        || (passedTag
                            && (Self.hasPrefix(bytes, at: position, "<!DOCTYPE")
                                || Self.hasPrefix(bytes, at: position, "<!doctype")))
                {
                    // What the careful path repairs (an end tag without a name is dropped), or what may sit in an
                    // attribute value there (a DOCTYPE after the first tag is escaped): give up, read carefully.
                    throw FeedError.malformed(line: 0, message: "markup the careful path repairs")
                } else if position < tagEnd {
                    emit(Array("&lt;".utf8))  // `<` inside a tag, e.g. in an attribute value
                    position += 1
                } else if next == UInt8(ascii: "/") {
                    return endTag()
                } else if Self.isNameStart(next) {
                    return startTag()
                } else if Self.hasPrefix(bytes, at: position, "<![CDATA[") {
                    mode = .cdata
                    verbatimUntil = position + 9
                } else if Self.hasPrefix(bytes, at: position, "<!--") {
                    mode = .comment
                    verbatimUntil = position + 4
                } else if Self.hasPrefix(bytes, at: position, "<?") {
                    mode = .instruction
                    verbatimUntil = position + 2
                } else if Self.hasPrefix(bytes, at: position, "<!DOCTYPE")
                    || Self.hasPrefix(bytes, at: position, "<!doctype")
                {
                    let saved = entities
                    guard let after = try skipDoctype(at: position) else {
                        entities = saved
                        return false
                    }
                    position = after
                    verbatimUntil = position
                } else {
                    emit(Array("&lt;".utf8))  // a stray `<` in text ("1 < 2")
                    position += 1
                }
                return true
            }
            // byte == "&"
            switch try reference(in: bytes, at: position, depth: 0) {
            case .verbatim(let length):
                verbatimUntil = position + length
            case .replace(let length, let replacement):
                if speculative, followsTagName() {
                    // `<li&#xFFFF;nk>`: the careful path tracks the name up to the `&`; the rewritten name differs.
                    throw FeedError.malformed(line: 0, message: "a reference inside a tag name")
                }
                emit(replacement)
                position += length
            case .bareAmpersand:
                emit(Array("&amp;".utf8))
                position += 1
            }
        }
        return true
    }

    /// Speculative mode: whether `position` directly follows `<name` or `</name`, where dropping or rewriting
    /// what is there would change the name the careful path tracks (true, to be safe, when the window holds
    /// nothing but name bytes before `position`; it keeps 32 bytes before `position` when it moves on).
    private func followsTagName() -> Bool {
        guard position > 0 else { return false }  // nothing was dropped before (see `refill()`)
        var index = position - 1
        while index >= 0, Self.isNameByte(bytes[index]) { index -= 1 }
        if index == position - 1 { return false }
        if index >= 0, bytes[index] == UInt8(ascii: "/") { index -= 1 }
        return index < 0 || bytes[index] == UInt8(ascii: "<")
    }

    // MARK: Tags

    /// Records the element a start tag opens (unless it is `<x/>`), and where the tag ends.
    private func startTag() -> Bool {
        var index = position + 1
        while index < end, Self.isNameByte(bytes[index]) { index += 1 }
        let nameEnd = index
        var quote: UInt8 = 0
        while index < end {
            let byte = bytes[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "<") {
                break
            }
            index += 1
        }
        if index >= end, !atEOF { return false }
        let selfClosing = index < end && bytes[index] == UInt8(ascii: ">") && bytes[index - 1] == UInt8(ascii: "/")
        if !selfClosing {
            openElements.append((names.count, nameEnd - position - 1))
            names.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(position + 1)..<nameEnd]))
        }
        tagEnd = index
        passThrough(to: nameEnd)
        return true
    }

    /// Passes an end tag that closes an open element, first closing elements left open inside it; drops an end
    /// tag that matches no open element (libxml2 would otherwise stop, or misplace everything after it).
    private func endTag() -> Bool {
        let nameStart = position + 2
        var index = nameStart
        while index < end, Self.isNameByte(bytes[index]) { index += 1 }
        let nameCount = index - nameStart
        let found = Self.find(bytes, UInt8(ascii: ">"), from: index)
        if found == nil, !atEOF { return false }
        let close = (found ?? end - 1) + 1
        let bytes = self.bytes
        var matched: Int?
        if nameCount > 0 {
            let stack = tagStack
            stack.pointee.names.withUnsafeBufferPointer { names in
                stack.pointee.openElements.withUnsafeBufferPointer { elements in
                    var candidate = elements.count - 1
                    // Only the innermost elements: libxml2 stops at a depth of 256 anyway (no XML_PARSE_HUGE),
                    // and searching the whole stack for every stray end tag was quadratic (`<a</b>` repeated).
                    let deepest = max(0, elements.count - InputRewriter.maxEndTagSearch)
                    while candidate >= deepest {
                        let element = elements[candidate]
                        if element.count == nameCount {
                            var offset = 0
                            while offset < nameCount, names[element.start + offset] == bytes[nameStart + offset] {
                                offset += 1
                            }
                            if offset == nameCount {
                                matched = candidate
                                return
                            }
                        }
                        candidate -= 1
                    }
                }
            }
        }
        guard let match = matched else {
            noteRepair("dropped the stray end tag </\(String(decoding: bytes[nameStart..<index], as: UTF8.self))>")
            position = close
            return true
        }
        if match < openElements.count - 1 {
            let inner = openElements[(match + 1)...].reversed().map { name(of: $0) }
            noteRepair(
                "closed <\(inner.joined(separator: ">, <"))> left open inside <\(name(of: openElements[match]))>")
            for element in openElements[(match + 1)...].reversed() { emitEndTag(element) }
        }
        names.removeSubrange(openElements[match].start...)
        openElements.removeSubrange(match...)
        passThrough(to: close)
        return true
    }

    private func closeOpenElementsAtEnd() {
        closedAtEnd = true
        guard let outer = openElements.first else { return }
        noteRepair(
            "the document ends inside <\(name(of: outer))> (truncated?); closed \(openElements.count) open elements")
        for element in openElements.reversed() { emitEndTag(element) }
        openElements.removeAll()
        names.removeAll()
    }

    private func emitEndTag(_ element: (start: Int, count: Int)) {
        pending.append(contentsOf: "</".utf8)
        emit(names[element.start..<(element.start + element.count)])
        pending.append(UInt8(ascii: ">"))
    }

    /// Passes the input up to `end` on unchanged (transcoded when it holds bytes from 0x80 on).
    private func passThrough(to end: Int) {
        if transcodesSingleByte, bytes[position..<end].contains(where: { $0 >= 0x80 }) {
            emit(bytes[position..<end])
            position = end
        } else {
            verbatimUntil = end
        }
    }

    private func name(of element: (start: Int, count: Int)) -> String {
        String(decoding: names[element.start..<(element.start + element.count)], as: UTF8.self)
    }

    private func noteRepair(_ note: String) {
        if repair == nil { repair = note }
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: ":"):
            true
        default:
            byte >= 0x80
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }

    // MARK: References

    private func reference(in text: UnsafeBufferPointer<UInt8>, at start: Int, depth: Int) throws -> Reference {
        var index = start + 1
        let limit = min(text.count, start + 64)
        while index < limit, Self.isReferenceByte(text[index]) { index += 1 }
        guard index < limit, text[index] == UInt8(ascii: ";"), index > start + 1 else { return .bareAmpersand }
        let length = index - start + 1
        let name = UnsafeBufferPointer(rebasing: text[(start + 1)..<index])
        if name[0] == UInt8(ascii: "#") {
            guard let scalar = Self.characterReference(name) else { return .bareAmpersand }
            if let mapped = Self.windows1252[scalar] {
                return .replace(length: length, bytes: Array("&#\(mapped);".utf8))
            }
            if !Self.isXMLCharacter(scalar) { return .replace(length: length, bytes: []) }
            // `&#X41;`: HTML and browsers take an uppercase X, XML does not (libxml2 would stop there).
            if name.count > 1, name[1] == UInt8(ascii: "X") {
                return .replace(length: length, bytes: Array("&#\(scalar);".utf8))
            }
            return .verbatim(length: length)
        }
        if Self.isPredefined(name) { return .verbatim(length: length) }
        let key = Array(name)
        if let entity = entities[key] {
            switch entity {
            case .external:
                return .replace(length: length, bytes: [])
            case .inline:
                let expansion = try expand(key, depth: depth + 1)
                expansionBudget -= expansion.count
                if expansionBudget < 0 {
                    throw FeedError.entityExpansion(
                        "more than \(Self.maxTotalExpansion) bytes of entity text in total")
                }
                return .replace(length: length, bytes: expansion)
            }
        }
        let value = key.withUnsafeBufferPointer { pointer -> UInt32 in
            var terminated = Array(pointer)
            terminated.append(0)
            return cxml_html_entity_value(terminated)
        }
        if value > 0 { return .replace(length: length, bytes: Array("&#\(value);".utf8)) }
        return .bareAmpersand
    }

    private func expand(_ name: [UInt8], depth: Int) throws -> [UInt8] {
        guard depth <= Self.maxEntityDepth, case .inline(let value)? = entities[name] else { return [] }
        var output: [UInt8] = []
        try value.withUnsafeBufferPointer { text in
            var index = 0
            while index < text.count {
                let byte = text[index]
                if byte != UInt8(ascii: "&") {
                    output.append(byte)
                    index += 1
                    continue
                }
                switch try reference(in: text, at: index, depth: depth) {
                case .verbatim(let length):
                    output.append(contentsOf: text[index..<(index + length)])
                    index += length
                case .replace(let length, let replacement):
                    output.append(contentsOf: replacement)
                    index += length
                case .bareAmpersand:
                    output.append(contentsOf: "&amp;".utf8)
                    index += 1
                }
            }
        }
        return output
    }

    /// The size of an entity's full expansion, failing as soon as it passes the limits.
    private func expansionSize(_ name: [UInt8], visiting: [[UInt8]]) throws -> Int {
        if let known = expansionSizes[name] { return known }
        guard case .inline(let value)? = entities[name] else { return 0 }
        let printable = String(decoding: name, as: UTF8.self)
        if visiting.contains(name) {
            throw FeedError.entityExpansion("entity '\(printable)' refers to itself")
        }
        if visiting.count >= Self.maxEntityDepth {
            throw FeedError.entityExpansion("entities nest more than \(Self.maxEntityDepth) deep")
        }
        var size = 0
        var index = 0
        while index < value.count {
            if value[index] == UInt8(ascii: "&"), let semicolon = value[index...].firstIndex(of: UInt8(ascii: ";")),
                semicolon - index < 64
            {
                let reference = Array(value[(index + 1)..<semicolon])
                if case .inline? = entities[reference] {
                    size += try expansionSize(reference, visiting: visiting + [name])
                } else {
                    size += semicolon - index + 1
                }
                index = semicolon + 1
            } else {
                size += 1
                index += 1
            }
            if size > Self.maxEntityExpansion {
                throw FeedError.entityExpansion(
                    "entity '\(printable)' expands to more than \(Self.maxEntityExpansion) bytes")
            }
        }
        expansionSizes[name] = size
        return size
    }

    // MARK: DOCTYPE

    /// Skips a DOCTYPE starting at `start`, recording its internal general entities; returns the index after it,
    /// or `nil` when the DOCTYPE runs past the window and more input may complete it (the caller then restores
    /// `entities`).
    private func skipDoctype(at start: Int) throws -> Int? {
        var index = declarationStop(from: start + 9, atSubset: true)
        if index < end, bytes[index] == UInt8(ascii: ">") { return index + 1 }
        index += 1
        while index < end {
            index = Self.skipWhitespace(bytes, from: index)
            guard index < end else { break }
            if bytes[index] == UInt8(ascii: "]") {
                let found = Self.find(bytes, UInt8(ascii: ">"), from: index)
                if found == nil, !atEOF { return nil }
                let close = found ?? end - 1
                try checkEntities()
                return close + 1
            }
            if Self.hasPrefix(bytes, at: index, "<!ENTITY") {
                index = parseEntityDeclaration(at: index + 8)
            } else if Self.hasPrefix(bytes, at: index, "<!--") {
                index = (Self.find(bytes, "-->", from: index + 4) ?? end) + 3
            } else if bytes[index] == UInt8(ascii: "<") {
                index = skipDeclaration(at: index)
            } else {
                index += 1
            }
        }
        if !atEOF { return nil }
        try checkEntities()
        return end
    }

    private func checkEntities() throws {
        for name in entities.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            _ = try expansionSize(name, visiting: [])
        }
    }

    private func skipDeclaration(at start: Int) -> Int {
        let stop = declarationStop(from: start + 1, atSubset: false)
        return stop < end ? stop + 1 : end
    }

    /// The index of the first `>` from `start` on outside quoted literals (or of the first `[` that opens an
    /// internal subset, when `atSubset`), or `end` when the window has none.
    private func declarationStop(from start: Int, atSubset: Bool) -> Int {
        var index = start
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                index = (Self.find(bytes, byte, from: index + 1) ?? end - 1) + 1
                continue
            }
            if byte == UInt8(ascii: ">") || (atSubset && byte == UInt8(ascii: "[")) { return index }
            index += 1
        }
        return end
    }

    private func parseEntityDeclaration(at start: Int) -> Int {
        var index = Self.skipWhitespace(bytes, from: start)
        var isParameter = false
        if index < end, bytes[index] == UInt8(ascii: "%") {
            isParameter = true
            index = Self.skipWhitespace(bytes, from: index + 1)
        }
        let nameStart = index
        while index < end, !Self.isWhitespace(bytes[index]), bytes[index] != UInt8(ascii: ">") { index += 1 }
        let name = Array(bytes[nameStart..<index])
        index = Self.skipWhitespace(bytes, from: index)
        var entity = Entity.external
        if index < end, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
            let close = Self.find(bytes, bytes[index], from: index + 1) ?? end
            entity = .inline(Array(bytes[(index + 1)..<close]))
            index = close
        }
        if !isParameter, !name.isEmpty, entities[name] == nil { entities[name] = entity }
        return skipDeclaration(at: index)
    }

    // MARK: Byte helpers

    private static let specialTable: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for byte in 0..<0x20 where byte != 0x09 && byte != 0x0A && byte != 0x0D { table[byte] = 0b1111 }
        table[Int(UInt8(ascii: "<"))] |= 0b0001
        table[Int(UInt8(ascii: "&"))] |= 0b0001
        table[Int(UInt8(ascii: "]"))] |= 0b0010
        table[Int(UInt8(ascii: "-"))] |= 0b0100
        table[Int(UInt8(ascii: "?"))] |= 0b1000
        return table
    }()

    /// The index of the first set lane of a mask that has one (`pmovmskb` and a bit scan, without an intrinsic:
    /// the lanes are all-ones or all-zero bytes).
    @inline(__always)
    static func firstLane(_ mask: SIMDMask<SIMD16<Int8>>) -> Int {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return words[0] != 0 ? words[0].trailingZeroBitCount >> 3 : 8 + words[1].trailingZeroBitCount >> 3
    }

    /// Whether any byte of `word` is below `limit` (at most 128): the classic SWAR test.
    @inline(__always)
    private static func hasByteBelow(_ word: UInt64, _ limit: UInt64) -> Bool {
        (word &- 0x0101_0101_0101_0101 &* limit) & ~word & 0x8080_8080_8080_8080 != 0
    }

    private static func modeMask(_ mode: Mode) -> UInt8 {
        switch mode {
        case .markup: 0b0001
        case .cdata: 0b0010
        case .comment: 0b0100
        case .instruction: 0b1000
        }
    }

    /// C1 control characters that feeds use to mean their windows-1252 glyphs (`&#146;` for ’).
    private static let windows1252: [UInt32: UInt32] = [
        128: 0x20AC, 130: 0x201A, 131: 0x0192, 132: 0x201E, 133: 0x2026, 134: 0x2020, 135: 0x2021,
        136: 0x02C6, 137: 0x2030, 138: 0x0160, 139: 0x2039, 140: 0x0152, 142: 0x017D, 145: 0x2018,
        146: 0x2019, 147: 0x201C, 148: 0x201D, 149: 0x2022, 150: 0x2013, 151: 0x2014, 152: 0x02DC,
        153: 0x2122, 154: 0x0161, 155: 0x203A, 156: 0x0153, 158: 0x017E, 159: 0x0178,
    ]

    private static func isXMLCharacter(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x9, 0xA, 0xD: true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    private static func characterReference(_ name: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var index = 1
        var radix: UInt32 = 10
        if name.count > 1, name[1] == UInt8(ascii: "x") || name[1] == UInt8(ascii: "X") {
            radix = 16
            index = 2
        }
        guard index < name.count else { return nil }
        while index < name.count {
            let byte = name[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value * radix + digit
            if value > 0x10FFFF { return 0 }
            index += 1
        }
        return value
    }

    private static func isPredefined(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        for predefined in ["amp", "lt", "gt", "quot", "apos"] where name.elementsEqual(predefined.utf8) {
            return true
        }
        return false
    }

    private static func isReferenceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "#"), UInt8(ascii: "_"), UInt8(ascii: "-"),
            UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default:
            byte >= 0x80
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let start = prefix.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] { return false }
        return true
    }

    static func find(_ bytes: UnsafeBufferPointer<UInt8>, _ byte: UInt8, from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    static func find(_ bytes: UnsafeBufferPointer<UInt8>, _ pattern: StaticString, from start: Int) -> Int? {
        let first = pattern.utf8Start[0]
        var index = start
        while let candidate = find(bytes, first, from: index) {
            if hasPrefix(bytes, at: candidate, pattern) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    private static func declaredEncoding(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> String? {
        let declaration = String(decoding: bytes[start..<min(end, bytes.count)], as: UTF8.self)
        guard let range = declaration.range(of: "encoding") else { return nil }
        var rest = declaration[range.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\t" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        let value = rest.prefix(while: { $0 != quote })
        return value.isEmpty ? nil : String(value)
    }

    /// Whether `bytes` is well-formed UTF-8 (ASCII is checked eight bytes at a time).
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        validUTF8Prefix(bytes) == bytes.count
    }

    /// The length of the longest prefix of `bytes` made of complete, well-formed UTF-8 sequences when the rest
    /// is at most the start of one more sequence (a chunk boundary); `nil` when `bytes` holds an invalid sequence.
    static func validUTF8Prefix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var index = 0
        let raw = UnsafeRawPointer(base)
        while index < count {
            if index + 32 <= count,
                (raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                    | raw.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)) & 0x8080_8080_8080_8080 == 0
            {
                index += 32
                continue
            }
            if index + 8 <= count,
                raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
                continue
            }
            let lead = base[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            guard let (length, lower, upper) = InputRewriter.utf8Lead(lead) else { return nil }
            if index + length > count {
                // Possibly cut by the chunk boundary: valid so far if the bytes present fit the sequence.
                if index + 1 < count {
                    let second = base[index + 1]
                    guard second >= lower, second <= upper else { return nil }
                    for offset in 2..<max(count - index, 2) where base[index + offset] & 0xC0 != 0x80 { return nil }
                }
                return index
            }
            let second = base[index + 1]
            guard second >= lower, second <= upper else { return nil }
            for offset in 2..<max(length, 2) where base[index + offset] & 0xC0 != 0x80 { return nil }
            index += length
        }
        return count
    }
}
