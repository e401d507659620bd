/// Equal strings kept as one copy, for readers of many repeated ids and names (a listing's pages, the index's
/// records): each copy read again is dropped for the one read first.
///
/// Only ASCII text is shared. Swift's `==` matches canonically equivalent text (`café` in NFC and in NFD), which two
/// ids must never be taken for; ASCII text has one form only. Text of 15 bytes or fewer lives inside the value, so
/// there is nothing to share.
public struct SharedText: Sendable {
    private var known = Set<String>()

    public init() {}

    /// The copy of `text` read first; short or non-ASCII text as it is.
    public mutating func one(_ text: String) -> String {
        guard text.utf8.count > 15, text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        return known.insert(text).memberAfterInsert
    }

    /// ``one(_:)`` for text the caller has already seen to be ASCII and longer than 15 bytes.
    mutating func one(ascii text: String) -> String {
        known.insert(text).memberAfterInsert
    }
}
