import Foundation
import MediaSyncCore

/// A deterministic pseudo-random generator: the same seed gives the same documents on every machine.
typealias SeededGenerator = SplitMix64

/// Builds hostile variants of well-formed documents: byte flips, truncations, splices of two documents,
/// duplicated and deleted tag spans, inserted entities, invalid UTF-8, huge attribute values, deep nesting,
/// DOCTYPEs, encoding declarations and BOMs, UTF-16. Each document gets one to four of these, chosen by the seed.
struct FeedMutator {
    enum Operation: String, CaseIterable {
        case flipBits, setBytes, truncate, splice, duplicateSpan, deleteSpan, insertEntity, invalidUTF8
        case hugeAttribute, deepNesting, insertDoctype, insertMarkup, changeEncoding, toUTF16, repeatSpan
    }

    var generator: SeededGenerator
    let seeds: [[UInt8]]
    /// The largest huge attribute value or repeated span made (a few of them reach it).
    var hugeLimit = 1_200_000

    init(seed: UInt64, seeds: [[UInt8]]) {
        generator = SeededGenerator(seed: seed)
        self.seeds = seeds.filter { !$0.isEmpty }
    }

    /// The next document and the operations applied to it.
    mutating func next() -> (bytes: [UInt8], operations: [Operation]) {
        var document = pick(seeds)
        var applied: [Operation] = []
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let operation = pick(Operation.allCases)
            document = apply(operation, to: document)
            applied.append(operation)
        }
        return (document, applied)
    }

    mutating func apply(_ operation: Operation, to input: [UInt8]) -> [UInt8] {
        var bytes = input
        switch operation {
        case .flipBits:
            guard !bytes.isEmpty else { return bytes }
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
            }
        case .setBytes:
            guard !bytes.isEmpty else { return bytes }
            let interesting: [UInt8] = [
                0, 0x01, 0x0B, 0x1F, 0x7F, 0x80, 0x9F, 0xC0, 0xEF, 0xFE, 0xFF, 0x3C, 0x3E, 0x26, 0x22, 0x27, 0x2F,
                0x5D, 0x3B, 0x3D, 0x20, 0x0A,
            ]
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = pick(interesting)
            }
        case .truncate:
            guard !bytes.isEmpty else { return bytes }
            bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &generator)...)
        case .splice:
            let other = pick(seeds)
            let cut = bytes.isEmpty ? 0 : Int.random(in: 0...bytes.count, using: &generator)
            let from = other.isEmpty ? 0 : Int.random(in: 0...other.count, using: &generator)
            bytes = Array(bytes[..<cut]) + Array(other[from...])
        case .duplicateSpan:
            guard let span = tagSpan(in: bytes) else { return bytes }
            let copy = Array(bytes[span])
            let times = Int.random(in: 1...40, using: &generator)
            let at = Bool.random(using: &generator) ? span.upperBound : boundary(in: bytes)
            bytes.insert(contentsOf: (0..<times).flatMap { _ in copy }, at: at)
        case .deleteSpan:
            guard let span = tagSpan(in: bytes) else { return bytes }
            bytes.removeSubrange(span)
        case .insertEntity:
            let entities = [
                "&amp;", "&nbsp;", "&eacute;", "&rsquo;", "&#0;", "&#x0;", "&amp;#0;", "&amp;#1;", "&amp;#x1F;",
                "&amp;#xFFFE;", "&amp;#xD800;", "&amp;amp;#0;", "&#x110000;", "&#xD800;", "&#128;", "&#x9F;",
                "&#65533;", "&#xFFFF;", "&#11;", "&bogus;", "&", "&#;", "&#x;", "&lt", "&#99999999999;", "&%pe;",
                "&xxe;", "&lol9;", "&a;", "&#38;#38;", "&amp;nbsp;", "&#x26;#0;", "&;", "&#-1;",
                String(repeating: "&amp;", count: 500),
            ]
            let entity = pick(entities)
            bytes.insert(contentsOf: Array(entity.utf8), at: textPosition(in: bytes))
        case .invalidUTF8:
            let sequences: [[UInt8]] = [
                [0xFF], [0xFE, 0xFF], [0xC0, 0x80], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80, 0x80, 0x80], [0xEF, 0xBF, 0xBE], [0xEF, 0xBB, 0xBF],
                [0xE9], [0xC2, 0x85], [0xC2, 0xA0],
            ]
            let at = textPosition(in: bytes)
            let sequence = pick(sequences)
            if Bool.random(using: &generator), at + sequence.count <= bytes.count {
                bytes.replaceSubrange(at..<(at + sequence.count), with: sequence)
            } else {
                bytes.insert(contentsOf: sequence, at: at)
            }
        case .hugeAttribute:
            let names = ["url", "href", "xmlUrl", "type", "length", "xml:base", "text", "version", "xmlns:itunes", "a"]
            let size = pick([1024, 16 * 1024, 70 * 1024, hugeLimit])
            let filler = pick(["A", "x y ", "&amp;", "<", "%20", "\u{E9}", "/../"])
            var value = String(repeating: filler, count: max(1, size / filler.utf8.count))
            if Bool.random(using: &generator) { value = "https://h.example.org/" + value }
            let attribute = Array(" \(pick(names))=\"\(value)\"".utf8)
            bytes.insert(contentsOf: attribute, at: startTagNameEnd(in: bytes))
        case .deepNesting:
            let depth = pick([100, 257, 1000, 5000, 30000])
            let name = pick(["a", "item", "channel", "outline", "rss", "entry", "title", "b"])
            var nested = Array(String(repeating: "<\(name)>", count: depth).utf8)
            if Bool.random(using: &generator) {
                nested += Array(("t" + String(repeating: "</\(name)>", count: depth)).utf8)
            }
            bytes.insert(contentsOf: nested, at: boundary(in: bytes))
        case .insertDoctype:
            bytes = insertDoctype(into: bytes)
        case .insertMarkup:
            let tokens = [
                "<![CDATA[", "]]>", "<!--", "-->", "<?", "?>", "<", "</", ">", "/>", "\"", "'", "=", "<item>",
                "</item>", "<channel>", "</channel>", "</rss>", "<rss version=\"2.0\">", "<entry>", "</feed>",
                " xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"",
                " xmlns=\"http://www.w3.org/2005/Atom\"",
                " xml:base=\"../x/\"", " xml:base=\"file:///etc/\"", "<enclosure url=\"a b\" length=\"-5\"/>",
                "<guid>", "</guid>", "<itunes:duration>99999999999999999999</itunes:duration>",
                "<itunes:duration>-1:-1</itunes:duration>", "<pubDate>Mon, 31 Feb 99999 25:61:61 +9999</pubDate>",
                "<xi:include href=\"/etc/passwd\" parse=\"text\" xmlns:xi=\"http://www.w3.org/2001/XInclude\"/>",
                "<!DOCTYPE x>", "<!ENTITY", "<!ATTLIST item guid CDATA \"/etc/passwd\">", "\0",
                "<itunes:season>9223372036854775808</itunes:season>", "<podcast:transcript url=\"\"/>",
                "<p:x xmlns:p=\"\">", "xmlns:=\"\"", "<:>", "<a:b:c>",
            ]
            bytes.insert(contentsOf: Array(pick(tokens).utf8), at: Int.random(in: 0...bytes.count, using: &generator))
        case .changeEncoding:
            let encodings = [
                "UTF-8", "UTF-16", "UTF-16LE", "ISO-8859-1", "windows-1252", "x-bogus", "UTF-32", "EBCDIC-US",
                "Shift_JIS", "ISO-2022-JP", "UCS-4", "", "\0",
            ]
            let declaration = Array("<?xml version=\"1.0\" encoding=\"\(pick(encodings))\"?>".utf8)
            if let end = find(Array("?>".utf8), in: bytes), bytes.starts(with: Array("<?xml".utf8)) {
                bytes.replaceSubrange(0..<(end + 2), with: declaration)
            } else {
                bytes.insert(contentsOf: declaration, at: 0)
            }
            if Bool.random(using: &generator) {
                bytes.insert(
                    contentsOf: pick([[0xEF, 0xBB, 0xBF], [0xFF, 0xFE], [0xFE, 0xFF], [0, 0, 0xFE, 0xFF], [0x20]]),
                    at: 0)
            }
        case .toUTF16:
            let text = String(decoding: bytes, as: UTF8.self)
            let bigEndian = Bool.random(using: &generator)
            var output: [UInt8] = []
            if Bool.random(using: &generator) { output = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE] }
            for unit in text.utf16 {
                output += bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            }
            if Bool.random(using: &generator), !output.isEmpty { output.removeLast() }  // an odd length
            bytes = output
        case .repeatSpan:
            guard bytes.count > 2 else { return bytes }
            let start = Int.random(in: 0..<(bytes.count - 1), using: &generator)
            let length = Int.random(in: 1...min(64, bytes.count - start), using: &generator)
            let span = Array(bytes[start..<(start + length)])
            let times = min(hugeLimit / length, pick([10, 1000, 20000]))
            bytes.insert(contentsOf: (0..<times).flatMap { _ in span }, at: start)
        }
        return bytes
    }

    // MARK: Helpers

    private mutating func pick<T>(_ values: [T]) -> T {
        values[Int.random(in: 0..<values.count, using: &generator)]
    }

    /// A span from a `<` to a later `>` (often a whole element, sometimes half of one).
    private mutating func tagSpan(in bytes: [UInt8]) -> ClosedRange<Int>? {
        let opens = bytes.indices.filter { bytes[$0] == UInt8(ascii: "<") }
        guard let start = opens.isEmpty ? nil : pick(opens) else { return nil }
        let closes = bytes.indices[start...].filter { bytes[$0] == UInt8(ascii: ">") }.prefix(24)
        guard !closes.isEmpty else { return nil }
        return start...pick(Array(closes))
    }

    /// A position just after a `>`, else anywhere.
    private mutating func boundary(in bytes: [UInt8]) -> Int {
        let closes = bytes.indices.filter { bytes[$0] == UInt8(ascii: ">") }
        if closes.isEmpty { return Int.random(in: 0...bytes.count, using: &generator) }
        return pick(closes) + 1
    }

    /// Mostly inside text (after a `>`), sometimes anywhere (inside tags and attribute values).
    private mutating func textPosition(in bytes: [UInt8]) -> Int {
        Int.random(in: 0...3, using: &generator) == 0
            ? Int.random(in: 0...bytes.count, using: &generator) : boundary(in: bytes)
    }

    /// Just after an element's name in a start tag (where an attribute can go), else anywhere.
    private mutating func startTagNameEnd(in bytes: [UInt8]) -> Int {
        var candidates: [Int] = []
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "<"), Self.isNameByte(bytes[index + 1]) {
                var end = index + 1
                while end < bytes.count, Self.isNameByte(bytes[end]) || bytes[end] == UInt8(ascii: ":") { end += 1 }
                candidates.append(end)
                index = end
            } else {
                index += 1
            }
        }
        return candidates.isEmpty ? Int.random(in: 0...bytes.count, using: &generator) : pick(candidates)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle)
        {
            return start
        }
        return nil
    }

    /// A DOCTYPE of internal entities (some nested, some recursive, some external, parameter entities) before the
    /// root element, and references to them in the text.
    private mutating func insertDoctype(into input: [UInt8]) -> [UInt8] {
        var bytes = input
        let declarations = [
            "<!ENTITY a \"A&b;\">", "<!ENTITY b \"B\">", "<!ENTITY c \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">",
            "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">", "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">",
            "<!ENTITY r \"&r;\">", "<!ENTITY s \"&t;\"><!ENTITY t \"&s;\">",
            "<!ENTITY xxe SYSTEM \"file:///etc/passwd\">",
            "<!ENTITY net SYSTEM \"http://127.0.0.1:9/x\">", "<!ENTITY % pe \"<!ENTITY p 'P'>\"> %pe;",
            "<!ENTITY % ext SYSTEM \"file:///etc/hostname\"> %ext;", "<!ENTITY tag \"<b>bold</b>\">",
            "<!ENTITY half \"<i>\">", "<!ENTITY big \"\(String(repeating: "z", count: 5000))\">",
            "<!ENTITY amp \"&#38;#38;\">", "<!ELEMENT rss ANY>", "<!ATTLIST item x CDATA #IMPLIED>", "<!-- ]> -->",
            "<!ENTITY q '\"'>", "<!ENTITY lt \"<\">", "<!ENTITY unparsed SYSTEM \"x.gif\" NDATA gif>",
        ]
        var doctype = "<!DOCTYPE rss ["
        for _ in 0..<Int.random(in: 1...6, using: &generator) { doctype += pick(declarations) }
        if Int.random(in: 0...9, using: &generator) != 0 { doctype += "]" }
        doctype += ">"
        // After the XML declaration when there is one, else first.
        var at = 0
        if bytes.starts(with: Array("<?xml".utf8)), let close = find(Array("?>".utf8), in: bytes) { at = close + 2 }
        if Int.random(in: 0...4, using: &generator) == 0 { at = boundary(in: bytes) }
        bytes.insert(contentsOf: Array(doctype.utf8), at: at)
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let reference =
                "&\(pick(["a", "b", "c", "d", "e", "r", "s", "xxe", "net", "p", "tag", "half", "big", "q", "lt", "unparsed", "amp"]));"
            let position = textPosition(in: bytes)
            bytes.insert(
                contentsOf: Array(reference.utf8), at: max(position, min(bytes.count, at + doctype.utf8.count)))
        }
        return bytes
    }
}
