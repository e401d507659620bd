/// The one error type of `MediaSyncFeeds`.
///
/// Compare with the static members (`#expect(throws: FeedError.notAFeed)`); the human-readable detail in
/// ``description`` (such as the root element's name) does not take part in `==`, except for
/// ``malformed(line:message:)`` whose line and message do.
public struct FeedError: Error, Equatable, CustomStringConvertible, Sendable {
    private enum Code: Equatable, Sendable {
        case notAFeed
        case malformed(line: Int, message: String)
        case entityExpansion
        case tooLarge
        case empty
        case notOPML
        case unreadable
    }

    private let code: Code
    private let detail: String?

    private init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The document parsed, but its root element is not `rss`, `rdf:RDF` or Atom `feed` (for example an HTML page).
    public static let notAFeed = FeedError(.notAFeed)
    /// The document declares entities that would expand beyond the parser's limits (a "billion laughs" document).
    public static let entityExpansion = FeedError(.entityExpansion)
    /// The input is larger than the parser's size limit.
    public static let tooLarge = FeedError(.tooLarge)
    /// The input holds no XML element at all.
    public static let empty = FeedError(.empty)
    /// The document is not an OPML file (its root element is not `opml`).
    public static let notOPML = FeedError(.notOPML)

    /// libxml2 gave up on the document even in recover mode.
    /// - Parameters:
    ///   - line: The 1-based line libxml2 reported, 0 when unknown.
    ///   - message: libxml2's message, trimmed.
    public static func malformed(line: Int, message: String) -> FeedError {
        FeedError(.malformed(line: line, message: message))
    }

    /// The feed file could not be read (the detail names the system error).
    public static let unreadable = FeedError(.unreadable)

    static func unreadable(_ why: String) -> FeedError {
        FeedError(.unreadable, detail: why)
    }

    static func notAFeed(rootElement: String) -> FeedError {
        FeedError(.notAFeed, detail: rootElement)
    }

    static func notOPML(rootElement: String) -> FeedError {
        FeedError(.notOPML, detail: rootElement)
    }

    static func tooLarge(size: Int, limit: Int) -> FeedError {
        FeedError(.tooLarge, detail: "\(size) bytes; the limit is \(limit) bytes")
    }

    static func entityExpansion(_ why: String) -> FeedError {
        FeedError(.entityExpansion, detail: why)
    }

    var isMalformed: Bool {
        if case .malformed = code { return true }
        return false
    }

    /// "line 5: Opening and ending tag mismatch: …" for ``Feed/recoveredError``.
    var recoveryNote: String {
        if case .malformed(let line, let message) = code { return line > 0 ? "line \(line): \(message)" : message }
        return description
    }

    /// Equal when the kinds match (and, for ``malformed(line:message:)``, line and message).
    public static func == (lhs: FeedError, rhs: FeedError) -> Bool {
        lhs.code == rhs.code
    }

    /// One line saying what went wrong.
    public var description: String {
        switch code {
        case .notAFeed:
            if let detail {
                return "not a podcast feed: the root element is <\(detail)>, expected <rss>, <rdf:RDF> or Atom <feed>"
            }
            return "not a podcast feed: the root element is not <rss>, <rdf:RDF> or Atom <feed>"
        case .malformed(let line, let message):
            return line > 0 ? "malformed feed at line \(line): \(message)" : "malformed feed: \(message)"
        case .entityExpansion:
            return "refused to parse: the document's entity declarations expand too far (\(detail ?? "billion laughs"))"
        case .tooLarge:
            return "feed too large" + (detail.map { " (\($0))" } ?? "")
        case .empty:
            return "not a podcast feed: the document holds no XML element"
        case .unreadable:
            return "cannot read the feed" + (detail.map { ": \($0)" } ?? "")
        case .notOPML:
            if let detail {
                return "not an OPML file: the root element is <\(detail)>, expected <opml>"
            }
            return "not an OPML file: the root element is not <opml>"
        }
    }
}
