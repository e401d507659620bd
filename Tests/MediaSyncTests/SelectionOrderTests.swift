import MediaSync
import MediaSyncCore
import MediaSyncTestSupport
import Testing

/// Selections and subscriptions come back in the order they were made, even when a script makes them within one
/// second (`addedAt` has whole seconds): a budget fills in that order.
@Suite struct SelectionOrderTests {
    @Test func selectionsMadeInTheSameSecondKeepTheirOrder() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        do {
            let index = try MirrorIndex(path: folder.file("index.sqlite"))
            let second = "2026-11-27T03:00:00Z"
            // Ids chosen so that no order by id or by name gives the order of selection.
            for id in ["cc", "aa", "dd", "bb"] {
                try index.select(Selection(id: id, kind: .movie, name: "name-\(id)", addedAt: second))
            }
            #expect(try index.selections().map(\.id) == ["cc", "aa", "dd", "bb"])

            // Changing a selection keeps its place; a priority still comes first.
            try index.select(Selection(id: "aa", kind: .movie, allVersions: true, addedAt: "2026-11-27T04:00:00Z"))
            #expect(try index.selections().map(\.id) == ["cc", "aa", "dd", "bb"])
            #expect(try index.selections()[1].allVersions)
            try index.select(Selection(id: "bb", kind: .movie, addedAt: second, priority: 1))
            #expect(try index.selections().map(\.id) == ["bb", "cc", "aa", "dd"])

            // Removed and selected again: now the last choice.
            try index.unselect(id: "cc")
            try index.select(Selection(id: "cc", kind: .movie, addedAt: second))
            #expect(try index.selections().map(\.id) == ["bb", "aa", "dd", "cc"])

            // Reopened: the order is stored, not held in memory.
            let reopened = try MirrorIndex(path: folder.file("index.sqlite"))
            #expect(try reopened.selections().map(\.id) == ["bb", "aa", "dd", "cc"])
        }
    }

    @Test func subscriptionsMadeInTheSameSecondKeepTheirOrder() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        do {
            let index = try MirrorIndex(path: folder.file("index.sqlite"))
            let second = "2026-11-27T03:00:00Z"
            for id in ["zeta", "alpha", "mu"] {
                try index.save(
                    Subscription(
                        id: id, feedURL: "http://127.0.0.1:1/\(id).xml", title: id, retention: .newest(3),
                        addedAt: second))
            }
            #expect(try index.subscriptions().map(\.id) == ["zeta", "alpha", "mu"])
            // An update (a fetch's validators) keeps the place.
            var alpha = try #require(try index.subscriptions().first { $0.id == "alpha" })
            alpha.etag = "\"v2\""
            try index.save(alpha)
            #expect(try index.subscriptions().map(\.id) == ["zeta", "alpha", "mu"])
        }
    }
}
