import Foundation

/// The `mediasync podcast parse --json` output.
///
/// Written by hand rather than with `JSONEncoder`, byte for byte as `JSONEncoder` with `.prettyPrinted`,
/// `.sortedKeys` and `.withoutEscapingSlashes` writes it: two-space indentation, `"key" : value`, keys in byte
/// order, empty containers as `[\n\n  ]`.
public enum FeedJSON {
    /// Encodes a feed as pretty-printed JSON with sorted keys, absent values omitted, and dates in ISO 8601 UTC
    /// (`"2024-01-02T03:04:05Z"`). Empty `transcripts`, `funding` and `duplicateGUIDs` arrays are omitted;
    /// `episodes` is always present.
    /// - Throws: Nothing in practice (the signature is kept from the `JSONEncoder` version).
    public static func encode(_ feed: Feed) throws -> String {
        var output: [UInt8] = []
        let buffer = JSONBuffer(capacity: 64 * 1024) { output.append(contentsOf: $0) }
        try writeHead(feed, to: buffer)
        for (index, episode) in feed.episodes.enumerated() {
            try buffer.write(index == 0 ? "\n    " : ",\n    ")
            try writeEpisode(episode, to: buffer)
        }
        try writeTail(feed, hasEpisodes: !feed.episodes.isEmpty, to: buffer)
        try buffer.flush()
        return String(decoding: output, as: UTF8.self)
    }

    /// Streams a feed file to a file descriptor as JSON: ``encode(_:)``'s output followed by a newline, without
    /// holding the feed, its episodes or the output in memory. Episodes are parsed and written one at a time
    /// (through an unlinked temporary file, because `duplicateGUIDs` sorts before `episodes` but is only known
    /// at the end).
    /// - Parameters:
    ///   - path: The feed file.
    ///   - baseURL: The URL relative references resolve against.
    ///   - descriptor: Where to write, e.g. `STDOUT_FILENO`.
    /// - Throws: ``FeedError`` as ``FeedParser/parse(contentsOfFile:baseURL:maximumSize:onEpisode:)`` does, or a
    ///   `POSIXError` when writing fails. Nothing is written to `descriptor` when parsing fails.
    public static func write(feedAtPath path: String, baseURL: String?, to descriptor: Int32) throws {
        try stream(to: descriptor) { replay, onItem, onEpisode in
            try withoutActuallyEscaping(onItem) { onItem in
                try FeedParser.parse(
                    contentsOfFile: path, baseURL: baseURL, maximumSize: FeedParser.defaultMaximumSize,
                    chunkSize: 256 * 1024, replayAfterRecovery: replay, onItem: onItem, onEpisode: onEpisode)
            }
        }
    }

    /// As ``write(feedAtPath:baseURL:to:)``, for a document already in memory (a fetched feed).
    /// - Parameters:
    ///   - bytes: The document as fetched.
    ///   - baseURL: The URL the feed was fetched from.
    ///   - descriptor: Where to write.
    /// - Throws: ``FeedError`` as ``FeedParser/parse(_:baseURL:)`` does, or a `POSIXError` when writing fails.
    public static func write(feedBytes bytes: [UInt8], baseURL: String?, to descriptor: Int32) throws {
        try write(feedBytes: bytes, baseURL: baseURL, contentType: nil, to: descriptor)
    }

    /// As ``write(feedBytes:baseURL:to:)``, with the response's `Content-Type`, whose `charset` wins over the XML
    /// declaration (see ``FeedParser/parse(_:baseURL:contentType:maximumSize:)``).
    /// - Parameters:
    ///   - bytes: The document as fetched.
    ///   - baseURL: The URL the feed was fetched from.
    ///   - contentType: The `Content-Type` header, if any.
    ///   - descriptor: Where to write.
    /// - Throws: As ``write(feedBytes:baseURL:to:)``.
    public static func write(feedBytes bytes: [UInt8], baseURL: String?, contentType: String?, to descriptor: Int32)
        throws
    {
        let charset = contentType.flatMap(LegacyEncoding.charset(ofContentType:))
        try stream(to: descriptor) { replay, _, onEpisode in
            try FeedParser.parse(
                bytes, baseURL: baseURL, maximumSize: FeedParser.defaultMaximumSize, replayAfterRecovery: replay,
                charset: charset, onEpisode: onEpisode)
        }
    }

    /// Parses through `parse` into the spill file, then writes the head, the spilled episodes and the tail.
    /// When the parser has to re-read a broken document in recovery mode, the spill is emptied and every
    /// episode written again, so the output is exactly ``encode(_:)``'s for ``FeedParser/parse(_:baseURL:)``.
    private static func stream(
        to descriptor: Int32,
        parse: (
            _ replay: @escaping () throws -> Void, _ onItem: (inout FeedBuilder) throws -> Void,
            _ onEpisode: (Episode) throws -> Void
        ) throws -> Feed
    ) throws {
        let spill = try SpillFile()
        let episodes = JSONBuffer(capacity: 1 << 20) { try spill.append($0) }
        var count = 0
        let replay = {
            episodes.discard()
            try spill.reset()
            count = 0
        }
        let feed = try parse(
            replay,
            { builder in
                try episodes.write(count == 0 ? "\n    " : ",\n    ")
                try writeItem(&builder, to: episodes)
                count += 1
            },
            { episode in
                try episodes.write(count == 0 ? "\n    " : ",\n    ")
                try writeEpisode(episode, to: episodes)
                count += 1
            })
        try episodes.flush()
        let output = JSONBuffer(capacity: 64 * 1024) { try Output.write($0, to: descriptor) }
        try writeHead(feed, to: output)
        try output.flush()
        try spill.copy(to: descriptor)
        try writeTail(feed, hasEpisodes: count > 0, to: output)
        try output.write("\n")
        try output.flush()
    }

    // MARK: Layout

    /// Everything up to and including `"episodes" : [`.
    private static func writeHead(_ feed: Feed, to out: JSONBuffer) throws {
        var object = ObjectState(indent: "\n  ")
        try out.write("{")
        try object.member("author", feed.author, out) { try out.writeString($0) }
        try object.member("block", feed.block, out) { try out.writeBool($0) }
        try object.member("description", feed.description, out) { try out.writeString($0) }
        if !feed.duplicateGUIDs.isEmpty {
            try object.key("duplicateGUIDs", out)
            try out.write("[")
            for (index, guid) in feed.duplicateGUIDs.enumerated() {
                try out.write(index == 0 ? "\n    " : ",\n    ")
                try out.writeString(guid)
            }
            try out.write("\n  ]")
        }
        try object.key("episodes", out)
        try out.write("[")
    }

    /// The end of the `episodes` array and everything after it.
    private static func writeTail(_ feed: Feed, hasEpisodes: Bool, to out: JSONBuffer) throws {
        try out.write(hasEpisodes ? "\n  ]" : "\n\n  ]")
        var object = ObjectState(indent: "\n  ", first: false)
        if !feed.funding.isEmpty {
            try object.key("funding", out)
            try writeURLObjects(
                feed.funding.map { ($0.title, $0.url) }, label: "title", layout: .feedMember, to: out,
                string: { try out.writeString($0) })
        }
        try object.member("imageURL", feed.imageURL, out) { try out.writeString($0) }
        try object.member("language", feed.language, out) { try out.writeString($0) }
        try object.member("link", feed.link, out) { try out.writeString($0) }
        try object.member("locked", feed.locked, out) { try out.writeBool($0) }
        try object.member("newFeedURL", feed.newFeedURL, out) { try out.writeString($0) }
        try object.member("podcastGUID", feed.podcastGUID, out) { try out.writeString($0) }
        try object.member("recoveredError", feed.recoveredError, out) { try out.writeString($0) }
        try object.member("title", feed.title, out) { try out.writeString($0) }
        try out.write("\n}")
    }

    /// One episode's members as the writer needs them, its text held as `Text`: a `String` of an ``Episode``, or a
    /// span of the bytes a ``FeedBuilder`` holds (a streamed item, written without making an `Episode` or a
    /// `String`).
    private struct EpisodeMembers<Text> {
        var block: Bool?
        var chaptersURL: Text?
        var description: Text?
        var durationSeconds: Int?
        var enclosure: (length: Int64?, type: Text?, url: Text)?
        var episode: Int?
        var episodeType: Text?
        var explicit: Bool?
        var guid: Text?
        var guidIsFallback: Bool
        var imageURL: Text?
        var link: Text?
        var published: Date?
        var season: Int?
        var title: Text?
        /// Each transcript's type (its `label`, as ``writeURLObjects(_:label:layout:to:string:)`` names it) and URL.
        var transcripts: [(label: Text?, url: Text)]
    }

    /// One episode object at depth 2 (the caller wrote the line break and indentation before it).
    private static func writeEpisode(_ episode: Episode, to out: JSONBuffer) throws {
        let members = EpisodeMembers(
            block: episode.block, chaptersURL: episode.chaptersURL, description: episode.description,
            durationSeconds: episode.durationSeconds,
            enclosure: episode.enclosure.map { ($0.length, $0.type, $0.url) }, episode: episode.episode,
            episodeType: episode.episodeType, explicit: episode.explicit, guid: episode.guid,
            guidIsFallback: episode.guidIsFallback, imageURL: episode.imageURL, link: episode.link,
            published: episode.published, season: episode.season, title: episode.title,
            transcripts: episode.transcripts.map { ($0.type, $0.url) })
        try write(members, to: out) { try out.writeString($0) }
    }

    /// ``writeEpisode(_:to:)`` for the item a builder holds, written from its bytes (no `Episode`, no `String`).
    private static func writeItem(_ builder: inout FeedBuilder, to out: JSONBuffer) throws {
        let item = builder.selectItem()
        let members = EpisodeMembers(
            block: item.block, chaptersURL: item.chaptersURL, description: item.description,
            durationSeconds: item.durationSeconds, enclosure: item.enclosure.map { ($0.length, $0.type, $0.url) },
            episode: item.episode, episodeType: item.episodeType, explicit: item.explicit, guid: item.guid,
            guidIsFallback: item.guidIsFallback, imageURL: item.imageURL, link: item.link, published: item.published,
            season: item.season, title: item.title, transcripts: builder.transcripts.map { ($0.type, $0.url) })
        try builder.arena.withUnsafeBufferPointer { arena in
            try write(members, to: out) { span in
                try out.writeString(utf8: UnsafeBufferPointer(rebasing: arena[span.start..<(span.start + span.count)]))
            }
        }
    }

    /// The members in key order; `string` writes one text value.
    private static func write<Text>(
        _ episode: EpisodeMembers<Text>, to out: JSONBuffer, string: (Text) throws -> Void
    ) throws {
        var object = ObjectState(indent: "\n      ")
        try out.write("{")
        try object.member("block", episode.block, out) { try out.writeBool($0) }
        try object.member("chaptersURL", episode.chaptersURL, out, string)
        try object.member("description", episode.description, out, string)
        try object.member("durationSeconds", episode.durationSeconds, out) { try out.writeInt(Int64($0)) }
        if let enclosure = episode.enclosure {
            try object.key("enclosure", out)
            var inner = ObjectState(indent: "\n        ")
            try out.write("{")
            try inner.member("length", enclosure.length, out) { try out.writeInt($0) }
            try inner.member("type", enclosure.type, out, string)
            try inner.key("url", out)
            try string(enclosure.url)
            try out.write("\n      }")
        }
        try object.member("episode", episode.episode, out) { try out.writeInt(Int64($0)) }
        try object.member("episodeType", episode.episodeType, out, string)
        try object.member("explicit", episode.explicit, out) { try out.writeBool($0) }
        try object.member("guid", episode.guid, out, string)
        if episode.guidIsFallback {
            try object.key("guidIsFallback", out)
            try out.writeBool(true)
        }
        try object.member("imageURL", episode.imageURL, out, string)
        try object.member("link", episode.link, out, string)
        try object.member("published", episode.published, out) { try out.writeDate($0) }
        try object.member("season", episode.season, out) { try out.writeInt(Int64($0)) }
        try object.member("title", episode.title, out, string)
        if !episode.transcripts.isEmpty {
            try object.key("transcripts", out)
            try writeURLObjects(episode.transcripts, label: "type", layout: .episodeMember, to: out, string: string)
        }
        try out.write(object.first ? "\n\n    }" : "\n    }")
    }

    /// An array of objects with an optional `label` member and a `url` (a feed's funding, an episode's
    /// transcripts), its lines broken and indented as `layout` says.
    @inline(__always)
    private static func writeURLObjects<Text>(
        _ objects: [(label: Text?, url: Text)], label: StaticString, layout: ArrayLayout, to out: JSONBuffer,
        string: (Text) throws -> Void
    ) throws {
        try out.write("[")
        for (index, object) in objects.enumerated() {
            try out.write(index == 0 ? layout.firstObject : layout.nextObject)
            var inner = ObjectState(indent: layout.member)
            try inner.member(label, object.label, out, string)
            try inner.key("url", out)
            try string(object.url)
            try out.write(layout.objectEnd)
        }
        try out.write(layout.arrayEnd)
    }

    /// The line breaks and indentation of an array of objects (one write each).
    private struct ArrayLayout {
        /// Before the first object, and before each further one (with its comma).
        let firstObject: StaticString
        let nextObject: StaticString
        /// Before each member of an object.
        let member: StaticString
        /// After each object, and after the array.
        let objectEnd: StaticString
        let arrayEnd: StaticString

        /// An array that is a member of the feed (depth 1).
        static var feedMember: ArrayLayout {
            ArrayLayout(
                firstObject: "\n    {", nextObject: ",\n    {", member: "\n      ", objectEnd: "\n    }",
                arrayEnd: "\n  ]")
        }

        /// An array that is a member of an episode (depth 3).
        static var episodeMember: ArrayLayout {
            ArrayLayout(
                firstObject: "\n        {", nextObject: ",\n        {", member: "\n          ",
                objectEnd: "\n        }",
                arrayEnd: "\n      ]")
        }
    }

    /// Separators of one object: the first key follows `{` directly on a new line, the others a comma.
    private struct ObjectState {
        let indent: StaticString
        var first = true

        init(indent: StaticString, first: Bool = true) {
            self.indent = indent
            self.first = first
        }

        mutating func key(_ name: StaticString, _ out: JSONBuffer) throws {
            try out.writeKey(name, indent: indent, comma: !first)
            first = false
        }

        /// `"name" : ` and the value as `write` writes it, when there is one.
        @inline(__always)
        mutating func member<Value>(
            _ name: StaticString, _ value: Value?, _ out: JSONBuffer, _ write: (Value) throws -> Void
        ) throws {
            guard let value else { return }
            try key(name, out)
            try write(value)
        }
    }
}

/// An output buffer that hands full chunks to a sink, with the JSON value writers.
final class JSONBuffer {
    private let storage: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var count = 0
    private let sink: (UnsafeRawBufferPointer) throws -> Void

    init(capacity: Int, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.capacity = max(capacity, 64)
        self.storage = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
        self.sink = sink
    }

    deinit {
        storage.deallocate()
    }

    /// Drops what is buffered and not yet flushed.
    func discard() {
        count = 0
    }

    func flush() throws {
        guard count > 0 else { return }
        let filled = count
        count = 0
        try sink(UnsafeRawBufferPointer(start: storage, count: filled))
    }

    @inline(__always)
    private func reserve(_ needed: Int) throws {
        if count + needed > capacity { try flush() }
    }

    func write(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if bytes.count > capacity {
            try flush()
            try sink(UnsafeRawBufferPointer(bytes))
            return
        }
        try reserve(bytes.count)
        (storage + count).initialize(from: base, count: bytes.count)
        count += bytes.count
    }

    func write(_ text: StaticString) throws {
        try write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `,` (when `comma`), `indent`, then `"name" : `, with one capacity check.
    func writeKey(_ name: StaticString, indent: StaticString, comma: Bool) throws {
        let indentCount = indent.utf8CodeUnitCount
        let nameCount = name.utf8CodeUnitCount
        let total = (comma ? 1 : 0) + indentCount + nameCount + 5
        guard total <= capacity else {
            if comma { try write(",") }
            try write(indent)
            try write("\"")
            try write(name)
            try write("\" : ")
            return
        }
        try reserve(total)
        var target = storage + count
        if comma {
            target.initialize(to: UInt8(ascii: ","))
            target += 1
        }
        target.initialize(from: indent.utf8Start, count: indentCount)
        target += indentCount
        target.initialize(to: UInt8(ascii: "\""))
        target += 1
        target.initialize(from: name.utf8Start, count: nameCount)
        target += nameCount
        target.initialize(to: UInt8(ascii: "\""))
        target[1] = UInt8(ascii: " ")
        target[2] = UInt8(ascii: ":")
        target[3] = UInt8(ascii: " ")
        count += total
    }

    func writeBool(_ value: Bool) throws {
        try write(value ? "true" : "false")
    }

    func writeInt(_ value: Int64) throws {
        try reserve(20)
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let written = withUnsafeMutableBytes(of: &digits) { raw -> Int in
            var index = raw.count
            repeat {
                index -= 1
                raw[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                raw[index] = UInt8(ascii: "-")
            }
            let length = raw.count - index
            if let source = raw.baseAddress {
                (storage + count).initialize(
                    from: source.advanced(by: index).assumingMemoryBound(to: UInt8.self), count: length)
            }
            return length
        }
        count += written
    }

    /// `"yyyy-MM-ddTHH:mm:ssZ"` in UTC, as `JSONEncoder`'s `.iso8601` strategy writes it.
    func writeDate(_ date: Date) throws {
        let interval = date.timeIntervalSince1970
        let seconds = Int64(interval.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Civil from days (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        let year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
        guard Double(seconds) == interval, (1583...9999).contains(year) else {
            // Foundation writes dates before the Gregorian reform (1582-10-15) in the Julian calendar; those,
            // fractions and years past 9999 are rare enough to leave to it.
            try writeString(date.formatted(.iso8601))
            return
        }
        try reserve(22)
        var index = count
        func put(_ value: Int, _ width: Int) {
            var remaining = value
            for offset in stride(from: width - 1, through: 0, by: -1) {
                storage[index + offset] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            index += width
        }
        func put(_ byte: UInt8) {
            storage[index] = byte
            index += 1
        }
        put(UInt8(ascii: "\""))
        put(year, 4)
        put(UInt8(ascii: "-"))
        put(month, 2)
        put(UInt8(ascii: "-"))
        put(day, 2)
        put(UInt8(ascii: "T"))
        put(secondOfDay / 3600, 2)
        put(UInt8(ascii: ":"))
        put(secondOfDay / 60 % 60, 2)
        put(UInt8(ascii: ":"))
        put(secondOfDay % 60, 2)
        put(UInt8(ascii: "Z"))
        put(UInt8(ascii: "\""))
        count = index
    }

    /// A quoted string: `"` and `\` escaped, `\b \f \n \r \t` short, other control characters as `\u00XX`,
    /// everything else (`/` and non-ASCII included) as is.
    func writeString(_ value: String) throws {
        var text = value
        try text.withUTF8 { try writeString(utf8: $0) }
    }

    /// ``writeString(_:)`` for bytes that are already valid UTF-8.
    func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>) throws {
        // Room for the worst case (every byte `\u00XX`, and the quotes) is made once, so the copy below needs
        // no capacity checks; a string too long for that goes the slower way.
        let worst = bytes.count * 6 + 2
        if count + worst > capacity {
            guard worst <= capacity else {
                try writeStringInPieces(bytes)
                return
            }
            try flush()
        }
        var out = storage + count
        out.initialize(to: UInt8(ascii: "\""))
        out += 1
        if let base = bytes.baseAddress {
            let total = bytes.count
            let raw = UnsafeRawPointer(base)
            let quote = SIMD16<UInt8>(repeating: UInt8(ascii: "\""))
            let backslash = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
            let space = SIMD16<UInt8>(repeating: 0x20)
            var runStart = 0
            var index = 0
            while index < total {
                // Sixteen bytes per step (SSE2) while none is a control character, `"` or `\`.
                if index + 16 <= total {
                    let vector = raw.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
                    let special = (vector .== quote) .| (vector .== backslash) .| (vector .< space)
                    if !any(special) {
                        index += 16
                        continue
                    }
                    index += InputRewriter.firstLane(special)
                }
                let byte = base[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                out.initialize(from: base + runStart, count: index - runStart)
                out += index - runStart
                out += Self.writeEscape(byte, to: out)
                index += 1
                runStart = index
            }
            out.initialize(from: base + runStart, count: total - runStart)
            out += total - runStart
        }
        out.initialize(to: UInt8(ascii: "\""))
        count = out + 1 - storage
    }

    /// Writes the escape sequence of `byte` at `out`; returns its length.
    @inline(__always)
    private static func writeEscape(_ byte: UInt8, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            out[1] = byte
        case 0x08: out[1] = UInt8(ascii: "b")
        case 0x0C: out[1] = UInt8(ascii: "f")
        case 0x0A: out[1] = UInt8(ascii: "n")
        case 0x0D: out[1] = UInt8(ascii: "r")
        case 0x09: out[1] = UInt8(ascii: "t")
        default:
            let hex: StaticString = "0123456789abcdef"
            out[1] = UInt8(ascii: "u")
            out[2] = UInt8(ascii: "0")
            out[3] = UInt8(ascii: "0")
            out[4] = hex.utf8Start[Int(byte >> 4)]
            out[5] = hex.utf8Start[Int(byte & 0xF)]
            return 6
        }
        return 2
    }

    /// ``writeString(utf8:)`` for a string longer than a sixth of the buffer: escaped a byte at a time.
    private func writeStringInPieces(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        try write("\"")
        var runStart = 0
        for (index, byte) in bytes.enumerated()
        where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            try write(UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            try writeEscape(byte)
            runStart = index + 1
        }
        try write(UnsafeBufferPointer(rebasing: bytes[runStart...]))
        try write("\"")
    }

    private func writeEscape(_ byte: UInt8) throws {
        switch byte {
        case UInt8(ascii: "\""): try write("\\\"")
        case UInt8(ascii: "\\"): try write("\\\\")
        case 0x08: try write("\\b")
        case 0x0C: try write("\\f")
        case 0x0A: try write("\\n")
        case 0x0D: try write("\\r")
        case 0x09: try write("\\t")
        default:
            let hex: StaticString = "0123456789abcdef"
            try reserve(6)
            try write("\\u00")
            storage[count] = hex.utf8Start[Int(byte >> 4)]
            storage[count + 1] = hex.utf8Start[Int(byte & 0xF)]
            count += 2
        }
    }
}

/// `write(2)` until everything is written.
enum Output {
    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            #if canImport(Glibc)
                let written = Glibc.write(descriptor, base, remaining)
            #else
                let written = Darwin.write(descriptor, base, remaining)
            #endif
            if written < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            base += written
            remaining -= written
        }
    }
}

/// An unlinked temporary file that holds the episodes' JSON until the feed-level values are known; falls back to
/// memory when no temporary file can be created.
final class SpillFile {
    private var descriptor: Int32 = -1
    private var size = 0
    private var memory: [UInt8] = []

    init() throws {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/mediasync-feed-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        if created >= 0 {
            template.withUnsafeBufferPointer { buffer in
                if let base = buffer.baseAddress { _ = unlink(base) }
            }
            descriptor = created
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        if descriptor >= 0 {
            try Output.write(bytes, to: descriptor)
        } else {
            memory.append(contentsOf: bytes)
        }
        size += bytes.count
    }

    /// Forgets everything appended so far.
    func reset() throws {
        memory.removeAll()
        size = 0
        if descriptor >= 0, ftruncate(descriptor, 0) != 0 || lseek(descriptor, 0, SEEK_SET) != 0 {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Writes everything appended so far to `target`.
    func copy(to target: Int32) throws {
        guard descriptor >= 0 else {
            try memory.withUnsafeBytes { try Output.write($0, to: target) }
            return
        }
        var offset = 0
        #if canImport(Glibc)
            var position = off_t(0)
            while offset < size {
                let sent = sendfile(target, descriptor, &position, size - offset)
                if sent < 0, errno == EINTR { continue }
                if sent <= 0 { break }
                offset += sent
            }
        #endif
        guard offset < size else { return }
        // sendfile refused (for example an O_APPEND target): copy through a buffer.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
        defer { chunk.deallocate() }
        while offset < size {
            guard let base = chunk.baseAddress else { return }
            let count = pread(descriptor, base, min(chunk.count, size - offset), off_t(offset))
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            try Output.write(UnsafeRawBufferPointer(rebasing: chunk[0..<count]), to: target)
            offset += count
        }
    }
}
