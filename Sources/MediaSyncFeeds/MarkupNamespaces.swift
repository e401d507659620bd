/// Cleans markup that libxml2 serialised from inside a text field (`<summary mode="xml"><div xmlns=…>…`).
///
/// libxml2 writes each serialised element with the default namespace it is in, so inline XHTML reads
/// `<div xmlns="http://www.w3.org/1999/xhtml">` and markup written bare inside an Atom 0.3 summary reads
/// `<b xmlns="http://purl.org/atom/ns#">`. Those declarations are the feed's plumbing, not the content's: they
/// are removed (as feedparser removes them). Declarations of other vocabularies (SVG, MathML) are kept, since
/// their markup means nothing without them.
enum MarkupNamespaces {
    /// Removes, from `bytes[start...]`, the default namespace declarations (`xmlns="…"`) of XHTML and of the
    /// feed vocabularies (Atom, RSS) in start tags. Comments, CDATA sections and processing instructions pass as
    /// they are; anything that is not well-formed is copied unchanged from where it stops being so.
    static func removeFeedDeclarations(from bytes: inout [UInt8], start: Int) {
        guard start < bytes.count, bytes[start...].contains(UInt8(ascii: "x")) else { return }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count - start)
        var index = start
        let count = bytes.count
        func copy(through terminator: StaticString) {
            let pattern = terminator.withUTF8Buffer { Array($0) }
            var cursor = index
            while cursor < count {
                if cursor + pattern.count <= count, bytes[cursor..<(cursor + pattern.count)].elementsEqual(pattern) {
                    cursor += pattern.count
                    output.append(contentsOf: bytes[index..<cursor])
                    index = cursor
                    return
                }
                cursor += 1
            }
            output.append(contentsOf: bytes[index..<count])
            index = count
        }
        func hasPrefix(_ prefix: StaticString) -> Bool {
            let length = prefix.utf8CodeUnitCount
            guard index + length <= count else { return false }
            return prefix.withUTF8Buffer { bytes[index..<(index + length)].elementsEqual($0) }
        }
        while index < count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                output.append(byte)
                index += 1
                continue
            }
            if hasPrefix("<!--") {
                copy(through: "-->")
            } else if hasPrefix("<![CDATA[") {
                copy(through: "]]>")
            } else if hasPrefix("<?") {
                copy(through: "?>")
            } else if index + 1 < count, bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "!")
            {
                copy(through: ">")
            } else {
                copyStartTag(bytes, &index, into: &output)
            }
        }
        bytes.replaceSubrange(start..., with: output)
    }

    /// Copies the start tag at `index` to `output` without the declarations ``removeFeedDeclarations(from:start:)``
    /// removes, and moves `index` past it.
    private static func copyStartTag(_ bytes: [UInt8], _ index: inout Int, into output: inout [UInt8]) {
        let count = bytes.count
        var cursor = index + 1
        while cursor < count, !isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: ">"),
            bytes[cursor] != UInt8(ascii: "/")
        {
            cursor += 1
        }
        output.append(contentsOf: bytes[index..<cursor])
        while cursor < count {
            var nameStart = cursor
            while nameStart < count, isSpace(bytes[nameStart]) { nameStart += 1 }
            guard nameStart < count, bytes[nameStart] != UInt8(ascii: ">"), bytes[nameStart] != UInt8(ascii: "/")
            else {
                output.append(contentsOf: bytes[cursor..<nameStart])
                cursor = nameStart
                break
            }
            var nameEnd = nameStart
            while nameEnd < count, bytes[nameEnd] != UInt8(ascii: "="), !isSpace(bytes[nameEnd]),
                bytes[nameEnd] != UInt8(ascii: ">")
            {
                nameEnd += 1
            }
            var quoteAt = nameEnd
            while quoteAt < count, isSpace(bytes[quoteAt]) || bytes[quoteAt] == UInt8(ascii: "=") { quoteAt += 1 }
            guard quoteAt < count, bytes[quoteAt] == UInt8(ascii: "\"") || bytes[quoteAt] == UInt8(ascii: "'"),
                let close = bytes[(quoteAt + 1)...].firstIndex(of: bytes[quoteAt])
            else {
                // Not an attribute as libxml2 writes one: the rest of the tag as it is.
                break
            }
            let isDefaultDeclaration = bytes[nameStart..<nameEnd].elementsEqual("xmlns".utf8)
            if !(isDefaultDeclaration && isFeedNamespace(bytes[(quoteAt + 1)..<close])) {
                output.append(contentsOf: bytes[cursor...close])
            }
            cursor = close + 1
        }
        // The tag's end (`>` or `/>`), and whatever could not be read as attributes, up to and with the `>`.
        var end = cursor
        while end < count, bytes[end] != UInt8(ascii: ">") { end += 1 }
        end = min(end + 1, count)
        output.append(contentsOf: bytes[cursor..<end])
        index = end
    }

    /// XHTML, or a namespace the parser reads as Atom or RSS.
    private static func isFeedNamespace(_ uri: ArraySlice<UInt8>) -> Bool {
        guard uri.count <= 256 else { return false }
        let text = String(decoding: uri, as: UTF8.self)
        if ElementNames.normalized(text) == "http://www.w3.org/1999/xhtml" { return true }
        guard let key = ElementNames.key(namespaceURI: text, localName: "x") else { return false }
        return key == "x" || key == "atom:x"
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
