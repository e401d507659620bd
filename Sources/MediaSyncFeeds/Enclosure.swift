/// The media file of an ``Episode`` (RSS `enclosure`, Atom `link rel="enclosure"`).
public struct Enclosure: Codable, Equatable, Sendable {
    /// The absolute media URL; spaces are percent-encoded and `itpc:`/`feed:`/`pcast:` schemes rewritten to HTTP(S).
    public var url: String
    /// The declared size in bytes; `nil` when missing, not a number, or not positive (`0` means "unknown" in practice).
    public var length: Int64?
    /// The declared MIME type, e.g. `audio/mpeg`.
    public var type: String?

    /// Creates an enclosure value.
    public init(url: String, length: Int64? = nil, type: String? = nil) {
        self.url = url
        self.length = length
        self.type = type
    }
}
