/// Maps a namespace URI and local name to the canonical `prefix:local` key used by ``FeedSchema``.
///
/// Namespaces are matched on the URI first, so `<it:duration xmlns:it="http://www.itunes.com/DTDs/Podcast-1.0.dtd">`
/// is `itunes:duration` and an `itunes:` prefix bound to some other URI is not. An element whose prefix is not
/// declared at all (libxml2 then reports the qualified name as the local name, with no namespace) is matched on
/// the prefix as a fallback.
enum ElementNames {
    private static let prefixesByURI: [String: String] = Dictionary(
        urisAndPrefixes.map { (normalized($0.0), $0.1) }, uniquingKeysWith: { first, _ in first })

    private static let urisAndPrefixes: [(String, String)] = [
        ("", ""),
        ("http://purl.org/rss/1.0/", ""),
        ("http://my.netscape.com/rdf/simple/0.9/", ""),
        ("http://backend.userland.com/rss2", ""),
        ("http://blogs.law.harvard.edu/tech/rss", ""),
        ("http://www.itunes.com/dtds/podcast-1.0.dtd", "itunes"),
        ("https://www.itunes.com/dtds/podcast-1.0.dtd", "itunes"),
        ("http://example.com/dtds/podcast-1.0.dtd", "itunes"),
        ("https://podcastindex.org/namespace/1.0", "podcast"),
        ("http://podcastindex.org/namespace/1.0", "podcast"),
        ("https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md", "podcast"),
        ("http://www.w3.org/2005/atom", "atom"),
        ("http://purl.org/atom/ns#", "atom"),
        // Drafts of Atom 1.0, and the names Atom had before it was Atom (Echo, Pie, Necho), as feedparser reads
        // them.
        ("http://purl.org/atom/ns#draft-ietf-atompub-format-08", "atom"),
        ("http://purl.org/atom/ns#draft-ietf-atompub-format-09", "atom"),
        ("http://purl.org/atom/ns#draft-ietf-atompub-format-10", "atom"),
        ("http://purl.org/atom/ns#draft-ietf-atompub-format-11", "atom"),
        ("http://example.com/newformat#", "atom"),
        ("http://example.com/necho", "atom"),
        ("http://purl.org/echo/", "atom"),
        ("uri/of/echo/namespace#", "atom"),
        ("http://purl.org/pie/", "atom"),
        ("http://purl.org/rss/1.0/modules/rss091#", ""),
        ("http://backend.userland.com/rss", ""),
        ("http://purl.org/rss/1.0/modules/content/", "content"),
        ("http://purl.org/dc/elements/1.1/", "dc"),
        ("http://purl.org/dc/terms/", "dc"),
        ("http://search.yahoo.com/mrss/", "media"),
        ("http://search.yahoo.com/mrss", "media"),
        ("http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdf"),
    ]

    private static let fallbackPrefixes: Set<String> = ["itunes", "podcast", "atom", "content", "dc", "media", "rdf"]

    /// The schema key for an element, or `nil` for a namespace the parser does not read.
    /// - Parameter unqualifiedIsAtom: Whether the document is an Atom feed written without a namespace (its root
    ///   is a `feed` in no namespace, as feedparser reads it): its elements in no namespace are Atom's.
    static func key(namespaceURI: String?, localName: String, unqualifiedIsAtom: Bool = false) -> String? {
        guard let uri = namespaceURI, !uri.isEmpty else {
            if let colon = localName.firstIndex(of: ":") {
                let prefix = String(localName[..<colon])
                return fallbackPrefixes.contains(prefix) ? localName : nil
            }
            return unqualifiedIsAtom ? "atom:" + localName : localName
        }
        var normalizedURI = normalized(uri)
        if normalizedURI.contains("backend.userland.com/rss") { normalizedURI = "http://backend.userland.com/rss" }
        guard let prefix = prefixesByURI[normalizedURI] else { return nil }
        return prefix.isEmpty ? localName : prefix + ":" + localName
    }

    /// A namespace URI as it is compared: ASCII whitespace trimmed, lowercased (the iTunes DTD URI is published in
    /// two capitalisations, feeds write `HTTP://`), `https` as `http`, without a trailing `/` or `#` (Atom is
    /// written `http://www.w3.org/2005/Atom/`, Atom 0.3 `http://purl.org/atom/ns`).
    static func normalized(_ uri: String) -> String {
        var text = Substring(uri.trimmingCharacters().lowercased())
        if text.hasPrefix("https://") { text = "http://" + text.dropFirst(8) }
        while let last = text.last, last == "/" || last == "#" { text = text.dropLast() }
        return String(text)
    }
}
