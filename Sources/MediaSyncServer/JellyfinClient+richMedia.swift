extension JellyfinClient {
    /// The URL of one trickplay tile: `<server>/Videos/{id}/Trickplay/{width}/{index}.jpg?mediaSourceId={id}`
    /// (`TrickplayController` L79–104, v10.10.7; token required). A version is its own item on the server, so its id
    /// names it in the path (10.9 and 10.10 read only the path's id) and in `mediaSourceId` (which 10.11 reads).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id, width or index.
    public func trickplayTileURL(mediaSourceId: String, width: Int, index: Int) throws -> String {
        let source = try JellyfinID.pathSegment(mediaSourceId, role: "media source id")
        guard width > 0, index >= 0 else {
            throw JellyfinError(.invalidID, "a trickplay width must be positive and a tile index not negative")
        }
        return url("/Videos/\(source)/Trickplay/\(width)/\(index).jpg", query: [("mediaSourceId", mediaSourceId)])
    }

    /// The URL of an item's media segments (`GET /MediaSegments/{id}`, 10.10 and later, token required): every
    /// type, ordered by start.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidID`` for an unusable id.
    public func mediaSegmentsURL(itemId: String) throws -> String {
        url("/MediaSegments/\(try JellyfinID.pathSegment(itemId, role: "item id"))")
    }
}
