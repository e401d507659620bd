/// One subscription read from or written to an OPML file.
public struct OPMLOutline: Codable, Equatable, Sendable {
    /// The outline's `title`, else its `text`.
    public var title: String?
    /// The feed URL (`xmlUrl`).
    public var xmlURL: String
    /// The show's web page (`htmlUrl`).
    public var htmlURL: String?

    /// Creates an outline value.
    public init(title: String?, xmlURL: String, htmlURL: String? = nil) {
        self.title = title
        self.xmlURL = xmlURL
        self.htmlURL = htmlURL
    }
}
