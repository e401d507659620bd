/// How long one page of a listing may take before it is asked again smaller.
///
/// A server builds a whole page before its first byte (Jellyfin serialises the `QueryResult` once its query and
/// DTOs are done), and a big 10.11 library can take tens of seconds for 500 items with media sources (Jellyfin
/// issues #14336, #15063). So a listing page gets a generous stall limit of its own, and a page that still does not
/// come is asked again at a quarter of its size, from the same `startIndex`, down to ``smallestPage``; the rest of
/// the listing keeps the smaller size.
public struct ListingPatience: Sendable, Equatable {
    /// Seconds without a byte before a page counts as stalled (default 120; file transfers keep the client's 30).
    public var stallSeconds: Int
    /// Seconds one page may take in all (default 600).
    public var pageTimeout: Double
    /// The smallest page asked for after stalls (default 20); a page that stalls at that size fails the listing.
    public var smallestPage: Int

    public init(stallSeconds: Int = 120, pageTimeout: Double = 600, smallestPage: Int = 20) {
        self.stallSeconds = max(1, stallSeconds)
        self.pageTimeout = max(1, pageTimeout)
        self.smallestPage = max(1, smallestPage)
    }

    /// The page size to ask for after a page of `size` items stalled, or nil when it is already the smallest.
    public func smaller(than size: Int) -> Int? {
        guard size > smallestPage else { return nil }
        return max(smallestPage, size / 4)
    }
}
