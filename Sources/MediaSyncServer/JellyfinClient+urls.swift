extension JellyfinClient {
    /// The `maxWidth` of primary images in the mirror's layout.
    public static let primaryImageMaxWidth = 300
    /// The `maxWidth` of backdrop images in the mirror's layout.
    public static let backdropImageMaxWidth = 600

    /// The layout's `maxWidth` for an image type: 300 for `Primary`, 600 for `Backdrop`, else nil.
    public static func defaultImageMaxWidth(for type: String) -> Int? {
        switch type.lowercased() {
        case "primary": return primaryImageMaxWidth
        case "backdrop": return backdropImageMaxWidth
        default: return nil
        }
    }

    /// The URL of a version's file: `<server>/Items/{mediaSourceId}/Download`.
    ///
    /// Each version is its own item on the server, so the media source id is used. There is no query: the
    /// endpoint ignores it, and the token goes in ``authorizationHeader``, never in a URL.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id.
    public func downloadURL(mediaSourceId: String) throws -> String {
        url("/Items/\(try JellyfinID.pathSegment(mediaSourceId, role: "media source id"))/Download")
    }

    /// The URL of an image: `<server>/Items/{id}/Images/{type}[/{index}]?tag=…&maxWidth=…`.
    ///
    /// With a tag the URL names one immutable image.
    /// - Parameters:
    ///   - itemId: the item the image belongs to.
    ///   - type: `Primary`, `Backdrop`, `Logo`, `Thumb`… (letters only).
    ///   - index: the image's index, for types with several (backdrops).
    ///   - tag: the image tag from `ImageTags` or `BackdropImageTags`.
    ///   - maxWidth: the largest width wanted, in pixels (see ``defaultImageMaxWidth(for:)``).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id, type, index or tag.
    public func imageURL(itemId: String, type: String, index: Int? = nil, tag: String? = nil, maxWidth: Int? = nil)
        throws -> String
    {
        let item = try JellyfinID.pathSegment(itemId, role: "item id")
        guard !type.isEmpty, type.count <= 32,
            type.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else {
            throw JellyfinError(.invalidID, "\"\(type)\" is not an image type (such as Primary or Backdrop)")
        }
        if let index, index < 0 {
            throw JellyfinError(.invalidID, "an image index cannot be negative (\(index))")
        }
        let checkedTag = try tag.map { PercentEncoding.encode(try JellyfinID.validate($0, role: "image tag")) }
        // Put together in one string (a URL for every image of every sync: the pieces, a query list and its joins
        // were a dozen strings each).
        var url = serverURL
        url.reserveCapacity(serverURL.utf8.count + item.utf8.count + (checkedTag?.utf8.count ?? 0) + 64)
        url += "/Items/"
        url += item
        url += "/Images/"
        url += type
        if let index {
            url += "/"
            url += String(index)
        }
        var separator = "?"
        if let checkedTag {
            url += "?tag="
            url += checkedTag
            separator = "&"
        }
        if let maxWidth, maxWidth > 0 {
            url += separator
            url += "maxWidth="
            url += String(maxWidth)
        }
        return url
    }

    /// The URL of an external subtitle stream:
    /// `<server>/Videos/{id}/{mediaSourceId}/Subtitles/{index}/Stream.{format}`.
    /// - Parameters:
    ///   - itemId: the item.
    ///   - mediaSourceId: the version the stream belongs to.
    ///   - streamIndex: the stream's `Index`.
    ///   - format: the subtitle format to get, such as `srt` or `vtt` (letters and digits only).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id, index or format.
    public func subtitleURL(itemId: String, mediaSourceId: String, streamIndex: Int, format: String) throws -> String {
        let item = try JellyfinID.pathSegment(itemId, role: "item id")
        let source = try JellyfinID.pathSegment(mediaSourceId, role: "media source id")
        guard streamIndex >= 0 else {
            throw JellyfinError(.invalidID, "a subtitle stream index cannot be negative (\(streamIndex))")
        }
        guard !format.isEmpty, format.count <= 10,
            format.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        else {
            throw JellyfinError(.invalidID, "\"\(format)\" is not a subtitle format (such as srt or vtt)")
        }
        return url("/Videos/\(item)/\(source)/Subtitles/\(streamIndex)/Stream.\(format)")
    }
}
