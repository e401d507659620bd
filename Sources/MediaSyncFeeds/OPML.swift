/// Reads and writes OPML 1.0/2.0 subscription lists (the format podcast apps import and export).
public enum OPML {
    /// Reads the feed subscriptions of an OPML document.
    ///
    /// Nested outlines (folders) are flattened in document order; every `outline` with an `xmlUrl` is a
    /// subscription, whatever its `type`. The title is `title`, else `text`. URLs are trimmed and `itpc:`/`feed:`
    /// schemes rewritten to HTTP(S). The document is read with the same safety as feeds (see ``FeedParser``).
    /// - Parameter bytes: The OPML document.
    /// - Returns: The subscriptions in document order.
    /// - Throws: ``FeedError/notOPML`` when the root element is not `opml`, ``FeedError/empty``,
    ///   ``FeedError/entityExpansion``, ``FeedError/tooLarge`` or ``FeedError/malformed(line:message:)``.
    public static func parse(_ bytes: [UInt8]) throws -> [OPMLOutline] {
        guard bytes.count <= FeedParser.defaultMaximumSize else {
            throw FeedError.tooLarge(size: bytes.count, limit: FeedParser.defaultMaximumSize)
        }
        let source = UTF16Input.utf8(from: bytes) ?? bytes
        return try source.withUnsafeBufferPointer { buffer in
            let input = try InputRewriter(buffer)
            let reader = try XMLStreamReader(input: input, baseURL: nil)
            var outlines: [OPMLOutline] = []
            var sawRoot = false
            while try reader.advance() {
                guard reader.nodeType == .element else { continue }
                if !sawRoot {
                    sawRoot = true
                    guard reader.localNameIs("opml") else { throw FeedError.notOPML(rootElement: reader.qualifiedName) }
                    continue
                }
                guard reader.localNameIs("outline") else { continue }
                let xmlURL = reader.attribute("xmlUrl") ?? reader.attribute("xmlURL") ?? reader.attribute("xmlurl")
                guard let feedURL = xmlURL.flatMap({ URLResolver.resolve($0, base: nil) }) else { continue }
                let title = (reader.attribute("title") ?? reader.attribute("text")).flatMap(TextCleaner.trimmed)
                let htmlURL = (reader.attribute("htmlUrl") ?? reader.attribute("htmlURL"))
                    .flatMap { URLResolver.resolve($0, base: nil) }
                outlines.append(OPMLOutline(title: title, xmlURL: feedURL, htmlURL: htmlURL))
            }
            guard sawRoot else { throw FeedError.empty }
            return outlines
        }
    }

    /// Writes an OPML 2.0 document with one flat `outline type="rss"` per subscription.
    ///
    /// The output is deterministic (no creation date), UTF-8, with attribute values escaped.
    /// - Parameters:
    ///   - outlines: The subscriptions, in the order to write them.
    ///   - title: The document's `head/title`.
    /// - Returns: The OPML document, ending in a newline.
    public static func export(_ outlines: [OPMLOutline], title: String) -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<opml version="2.0">"#,
            "  <head>",
            "    <title>\(escape(title))</title>",
            "  </head>",
            "  <body>",
        ]
        for outline in outlines {
            var attributes = [#"type="rss""#]
            if let name = outline.title {
                attributes.append(#"text="\#(escape(name))""#)
                attributes.append(#"title="\#(escape(name))""#)
            } else {
                attributes.append(#"text="\#(escape(outline.xmlURL))""#)
            }
            attributes.append(#"xmlUrl="\#(escape(outline.xmlURL))""#)
            if let htmlURL = outline.htmlURL { attributes.append(#"htmlUrl="\#(escape(htmlURL))""#) }
            lines.append("    <outline \(attributes.joined(separator: " "))/>")
        }
        lines.append("  </body>")
        lines.append("</opml>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "\n": output += "&#10;"
            case "\r": output += "&#13;"
            case "\t": output += "&#9;"
            default:
                if scalar.value < 0x20 { continue }
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
