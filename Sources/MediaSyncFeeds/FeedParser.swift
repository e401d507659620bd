import Foundation

/// Reads podcast feeds (RSS 2.0, RSS 0.9x/1.0, Atom 1.0, with the iTunes, Podcasting 2.0, `content`, Dublin Core
/// and Media RSS extensions) from bytes, streaming them through libxml2's `xmlTextReader`: no DOM of the whole feed.
///
/// Parsing is separate from fetching; this type never touches the network, and reads the file system only in
/// ``parse(contentsOfFile:baseURL:maximumSize:onEpisode:)``, which streams a feed file in chunks. Documents are read
/// in libxml2's recover mode with `XML_PARSE_NONET`, and never with `XML_PARSE_NOENT`, `XML_PARSE_DTDLOAD` or
/// `XML_PARSE_HUGE`. The DOCTYPE is removed before libxml2 sees the document (see ``InputRewriter``), so no external
/// entity or DTD is ever read and entity bombs fail fast with ``FeedError/entityExpansion``.
///
/// libxml2's streaming reader gives up at the first well-formedness error even in recover mode. Such a feed
/// (mismatched tags, a truncated download) is read a second time with libxml2's recovering DOM parser, walked
/// with the same table, and marked with ``Feed/recoveredError``; only broken feeds pay for a DOM.
///
/// A consumer that can take back what it was given (``FeedJSON``'s streaming writer) first gets a faster pass:
/// libxml2's SAX2 push parser over the rewriter's speculative mode (``FeedSAXParser``), writing item values
/// from bytes. It gives up, and the document is read the careful way, wherever its result could differ.
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
        try parse(bytes, baseURL: baseURL, contentType: nil, maximumSize: maximumSize)
    }

    /// Parses a fetched feed document with the response's `Content-Type`: its `charset` names the document's
    /// encoding and wins over the XML declaration (RFC 7303 §3); valid UTF-8 still wins over both.
    /// - Parameters:
    ///   - bytes: The document as fetched.
    ///   - baseURL: The URL the feed was fetched from.
    ///   - contentType: The `Content-Type` header (`application/rss+xml; charset=gbk`), if any.
    ///   - maximumSize: The largest accepted input, in bytes.
    /// - Throws: ``FeedError`` as ``parse(_:baseURL:)`` does.
    public static func parse(
        _ bytes: [UInt8], baseURL: String?, contentType: String?, maximumSize: Int = defaultMaximumSize
    ) throws -> Feed {
        var episodes: [Episode] = []
        var feed = try parse(
            bytes, baseURL: baseURL, maximumSize: maximumSize, replayAfterRecovery: { episodes.removeAll() },
            charset: contentType.flatMap(LegacyEncoding.charset(ofContentType:)), onEpisode: { episodes.append($0) })
        feed.episodes = episodes
        return feed
    }

    /// Parses a feed document held in memory, handing each episode to `onEpisode` as soon as its item ends
    /// instead of collecting them.
    /// - Parameters:
    ///   - bytes: The document as fetched.
    ///   - baseURL: The URL the feed was fetched from.
    ///   - maximumSize: The largest accepted input, in bytes.
    ///   - onEpisode: Called once per episode, in document order. When the document has to be re-read in
    ///     libxml2's recovery mode, the episodes already delivered are not delivered again.
    /// - Returns: The feed-level values, known once the whole document is read (a channel value that follows
    ///   the items still counts); ``Feed/episodes`` is empty, ``Feed/duplicateGUIDs`` covers every episode.
    /// - Throws: ``FeedError`` as ``parse(_:baseURL:)`` does, and whatever `onEpisode` throws.
    public static func parse(
        _ bytes: [UInt8], baseURL: String?, maximumSize: Int = defaultMaximumSize,
        onEpisode: (Episode) throws -> Void
    ) throws -> Feed {
        try parse(bytes, baseURL: baseURL, maximumSize: maximumSize, replayAfterRecovery: nil, onEpisode: onEpisode)
    }

    /// Streams a feed file: it is read in 256 KiB chunks (plus one chunked pass that checks whether it is UTF-8),
    /// and each episode is handed to `onEpisode` as soon as its item ends, so memory stays bounded by one episode
    /// and the buffers, whatever the file's size. Only a document libxml2's streaming reader gives up on (see
    /// ``Feed/recoveredError``) and UTF-16 documents are read into memory as a whole.
    /// - Parameters:
    ///   - path: The feed file (a regular file; anything else, such as a pipe, is read into memory first).
    ///   - baseURL: The URL relative references resolve against (after `xml:base`).
    ///   - maximumSize: The largest accepted file, in bytes.
    ///   - onEpisode: Called once per episode, in document order. When the document has to be re-read in
    ///     libxml2's recovery mode, the episodes already delivered are not delivered again.
    /// - Returns: The feed-level values, as ``parse(_:baseURL:maximumSize:onEpisode:)`` returns them.
    /// - Throws: ``FeedError`` as ``parse(_:baseURL:)`` does, ``FeedError/unreadable`` when the file cannot be
    ///   opened or read, and whatever `onEpisode` throws.
    public static func parse(
        contentsOfFile path: String, baseURL: String?, maximumSize: Int = defaultMaximumSize,
        onEpisode: (Episode) throws -> Void
    ) throws -> Feed {
        try parse(
            contentsOfFile: path, baseURL: baseURL, maximumSize: maximumSize, chunkSize: 256 * 1024,
            replayAfterRecovery: nil, onEpisode: onEpisode)
    }

    /// ``parse(contentsOfFile:baseURL:maximumSize:onEpisode:)`` with the read size as a parameter (tests use
    /// tiny chunks to put every construct across a chunk boundary) and, for consumers that can take back what
    /// they were given (``FeedJSON``'s spill file), a `replayAfterRecovery` hook: called before a recovery
    /// re-read, after which every episode is delivered again, exactly as ``parse(_:baseURL:)`` reads the feed.
    /// Such a consumer may also take the fast path's items as they are (`onItem`, given the builder holding the
    /// item: see ``FeedBuilder/selectItem()``); items read any other way still go to `onEpisode`.
    static func parse(
        contentsOfFile path: String, baseURL: String?, maximumSize: Int, chunkSize: Int,
        replayAfterRecovery: (() throws -> Void)?, onItem: ((inout FeedBuilder) throws -> Void)? = nil,
        onEpisode: (Episode) throws -> Void
    ) throws -> Feed {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FeedError.unreadable("\(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FeedError.unreadable("\(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            let data = try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd() ?? Data()
            return try parse(
                [UInt8](data), baseURL: baseURL, maximumSize: maximumSize, replayAfterRecovery: replayAfterRecovery,
                onEpisode: onEpisode)
        }
        let size = Int(info.st_size)
        guard size <= maximumSize else { throw FeedError.tooLarge(size: size, limit: maximumSize) }
        let input = FileInput(descriptor: descriptor)
        var head: [UInt8] = [0, 0]
        let headCount = try head.withUnsafeMutableBytes { try input.read(into: $0) }
        if headCount == 2, UTF16Input.isUTF16(head[0], head[1]) {
            return try parse(
                try input.readAll(), baseURL: baseURL, maximumSize: maximumSize,
                replayAfterRecovery: replayAfterRecovery, onEpisode: onEpisode)
        }
        if let replayAfterRecovery {
            // A consumer that can take back what it was given gets the fast path first: one pass over the file,
            // UTF-8 checked as it streams, no tag tracking, libxml2's SAX2 parser instead of its reader. It
            // succeeds only when the document needs none of the rewriter's structural repairs, is UTF-8 and has
            // nothing ``FeedSAXParser`` leaves to the reader, and then yields what the careful path below yields;
            // on any ``FeedError`` everything delivered is taken back and the document is read the careful way.
            do {
                let input = try InputRewriter(speculative: FileInput(descriptor: descriptor), chunkSize: chunkSize)
                if let onItem {
                    return try FeedSAXParser.parse(input: input, baseURL: baseURL, chunkSize: chunkSize, onItem: onItem)
                }
                return try FeedSAXParser.parse(
                    input: input, baseURL: baseURL, chunkSize: chunkSize, onEpisode: onEpisode)
            } catch is FeedError {
                try replayAfterRecovery()
            }
        }
        let source = FileInput(descriptor: descriptor)
        return try walk(
            baseURL: baseURL, replayAfterRecovery: replayAfterRecovery, onEpisode: onEpisode,
            streaming: { try InputRewriter(streaming: source, chunkSize: chunkSize) },
            recoveryDocument: { try source.readAll() })
    }

    static func parse(
        _ bytes: [UInt8], baseURL: String?, maximumSize: Int, replayAfterRecovery: (() throws -> Void)?,
        charset: String? = nil, onEpisode: (Episode) throws -> Void
    ) throws -> Feed {
        guard bytes.count <= maximumSize else { throw FeedError.tooLarge(size: bytes.count, limit: maximumSize) }
        let document = UTF16Input.utf8(from: bytes) ?? bytes
        return try document.withUnsafeBufferPointer { buffer in
            try walk(
                baseURL: baseURL, replayAfterRecovery: replayAfterRecovery, onEpisode: onEpisode, charset: charset,
                streaming: { try InputRewriter(buffer, charset: charset) }, recoveryDocument: { document })
        }
    }

    /// Streams the document; if libxml2's streaming reader gives up (a mismatched tag the repairs missed, an
    /// unquoted attribute), reads it again in libxml2's recovery mode and says so in ``Feed/recoveredError``.
    /// After recovery the episodes already delivered are skipped, unless `replayAfterRecovery` is given: it is
    /// called first and every episode is delivered again.
    private static func walk(
        baseURL: String?, replayAfterRecovery: (() throws -> Void)?, onEpisode: (Episode) throws -> Void,
        charset: String? = nil, streaming: () throws -> InputRewriter,
        recoveryDocument: () throws -> [UInt8]
    ) throws -> Feed {
        var delivered = 0
        do {
            let input = try streaming()
            let reader = try XMLStreamReader(input: input, baseURL: baseURL)
            var walker = FeedWalker(reader: reader)
            var feed = try walker.run { episode in
                delivered += 1
                try onEpisode(episode)
            }
            feed.recoveredError = input.repair
            return feed
        } catch let error as FeedError where error.isMalformed {
            // The streaming reader stops at the first well-formedness error (a mismatched tag, a stray `<`,
            // a truncated download). Read the document again in libxml2's recovery mode and say so.
            var skip = delivered
            if let replayAfterRecovery {
                try replayAfterRecovery()
                skip = 0
            }
            let document = try recoveryDocument()
            return try document.withUnsafeBufferPointer { buffer in
                let reader = try XMLStreamReader(
                    recovering: try InputRewriter(buffer, charset: charset), baseURL: baseURL)
                var walker = FeedWalker(reader: reader)
                var feed = try walker.run { episode in
                    if skip > 0 {
                        skip -= 1
                    } else {
                        try onEpisode(episode)
                    }
                }
                feed.recoveredError = error.recoveryNote
                return feed
            }
        }
    }
}
