/// Reads podcast feeds (RSS 2.0, RSS 0.9x/1.0, Atom 1.0, with the iTunes, Podcasting 2.0, `content`, Dublin Core
/// and Media RSS extensions) from bytes, streaming them through libxml2's `xmlTextReader`: no DOM of the whole feed.
///
/// Parsing is separate from fetching; this type never touches the network or the file system. Documents are read
/// in libxml2's recover mode with `XML_PARSE_NONET`, and never with `XML_PARSE_NOENT`, `XML_PARSE_DTDLOAD` or
/// `XML_PARSE_HUGE`. The DOCTYPE is removed before libxml2 sees the document (see ``InputRewriter``), so no external
/// entity or DTD is ever read and entity bombs fail fast with ``FeedError/entityExpansion``.
///
/// libxml2's streaming reader gives up at the first well-formedness error even in recover mode. Such a feed
/// (mismatched tags, a truncated download) is read a second time with libxml2's recovering DOM parser, walked
/// with the same table, and marked with ``Feed/recoveredError``; only broken feeds pay for a DOM.
public enum FeedParser {
    /// The default input size limit: 256 MiB (large enough for a 50,000-episode back catalogue).
    public static let defaultMaximumSize = 256 * 1024 * 1024

    /// Parses a feed document.
    /// - Parameters:
    ///   - bytes: The document as fetched, in any encoding libxml2 knows; a BOM and leading whitespace are fine.
    ///   - baseURL: The URL the feed was fetched from; relative URLs resolve against it (after `xml:base`).
    /// - Returns: The feed with its episodes in document order.
    /// - Throws: ``FeedError``: `.notAFeed` (for example an HTML page), `.empty`, `.entityExpansion`, `.tooLarge`
    ///   (over ``defaultMaximumSize``) or `.malformed(line:message:)` when libxml2 gives up even in recover mode.
    public static func parse(_ bytes: [UInt8], baseURL: String?) throws -> Feed {
        try parse(bytes, baseURL: baseURL, maximumSize: defaultMaximumSize)
    }

    /// Parses a feed document with an explicit size limit.
    /// - Parameters:
    ///   - bytes: The document as fetched.
    ///   - baseURL: The URL the feed was fetched from.
    ///   - maximumSize: The largest accepted input, in bytes.
    /// - Throws: ``FeedError`` as ``parse(_:baseURL:)`` does.
    public static func parse(_ bytes: [UInt8], baseURL: String?, maximumSize: Int) throws -> Feed {
        guard bytes.count <= maximumSize else { throw FeedError.tooLarge(size: bytes.count, limit: maximumSize) }
        if let converted = UTF16Input.utf8(from: bytes) {
            return try parseUTF8Compatible(converted, baseURL: baseURL)
        }
        return try parseUTF8Compatible(bytes, baseURL: baseURL)
    }

    private static func parseUTF8Compatible(_ bytes: [UInt8], baseURL: String?) throws -> Feed {
        try bytes.withUnsafeBufferPointer { buffer in
            do {
                let input = try InputRewriter(buffer)
                let reader = try XMLStreamReader(input: input, baseURL: baseURL)
                var walker = FeedWalker(reader: reader)
                var feed = try walker.run()
                feed.recoveredError = input.repair
                return feed
            } catch let error as FeedError where error.isMalformed {
                // The streaming reader stops at the first well-formedness error (a mismatched tag, a stray `<`,
                // a truncated download). Read the document again in libxml2's recovery mode and say so.
                let reader = try XMLStreamReader(recovering: try InputRewriter(buffer), baseURL: baseURL)
                var walker = FeedWalker(reader: reader)
                var feed = try walker.run()
                feed.recoveredError = error.recoveryNote
                return feed
            }
        }
    }
}
