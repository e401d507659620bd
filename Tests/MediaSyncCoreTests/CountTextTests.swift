import MediaSyncCore
import Testing

/// Counts read as English: one thing in the singular, none and many in the plural.
@Suite struct CountTextTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var count: Int
        var singular: String
        var plural: String?
        var expected: String
        var testDescription: String { expected }
    }

    @Test(arguments: [
        Case(count: 0, singular: "movie", plural: nil, expected: "0 movies"),
        Case(count: 1, singular: "movie", plural: nil, expected: "1 movie"),
        Case(count: 2, singular: "movie", plural: nil, expected: "2 movies"),
        Case(count: 1, singular: "series", plural: "series", expected: "1 series"),
        Case(count: 3, singular: "series", plural: "series", expected: "3 series"),
        Case(count: 1, singular: "podcast episode", plural: nil, expected: "1 podcast episode"),
        Case(count: 1, singular: "entry", plural: "entries", expected: "1 entry"),
        Case(count: 12, singular: "entry", plural: "entries", expected: "12 entries"),
        Case(count: -1, singular: "file", plural: nil, expected: "-1 files"),
    ])
    func phrase(_ example: Case) {
        #expect(CountText.of(example.count, example.singular, plural: example.plural) == example.expected)
    }
}
