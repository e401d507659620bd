/// A `podcast:funding` link of a ``Feed``.
public struct Funding: Codable, Equatable, Sendable {
    /// The absolute URL of the funding page.
    public var url: String
    /// The element's text, e.g. "Support the show", whitespace squashed.
    public var title: String?

    /// Creates a funding value.
    public init(url: String, title: String? = nil) {
        self.url = url
        self.title = title
    }
}
