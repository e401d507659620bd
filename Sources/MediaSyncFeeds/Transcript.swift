/// A `podcast:transcript` link of an ``Episode``.
public struct Transcript: Codable, Equatable, Sendable {
    /// The absolute transcript URL.
    public var url: String
    /// The declared MIME type, e.g. `text/vtt` or `application/srt`.
    public var type: String?

    /// Creates a transcript value.
    public init(url: String, type: String? = nil) {
        self.url = url
        self.type = type
    }
}
