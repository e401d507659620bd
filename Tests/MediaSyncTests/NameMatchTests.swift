import Testing

@testable import MediaSyncMirror

/// Which of the items a search found a name given to `select` stands for, as a table.
@Suite struct NameMatchTests {
    static func items(_ names: [String]) -> [ServerItem] {
        names.enumerated().map { ServerItem(id: "id\($0.offset)", type: "Movie", name: $0.element) }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var found: [String]
        /// The positions of the items meant: one selects, several list, none says so.
        var meant: [Int]
        var one: Bool
        var testDescription: String { "\(name.debugDescription) among \(found)" }
    }

    @Test(arguments: [
        Case(name: "Alien", found: [], meant: [], one: false),
        Case(name: "Alien", found: ["Aliens"], meant: [0], one: true),
        Case(name: "Alien", found: ["Alien", "Aliens", "Alien³"], meant: [0], one: true),
        Case(name: "alien ", found: ["Aliens", "ALIEN"], meant: [1], one: true),
        Case(name: "amelie", found: ["Amélie", "Amélie Poulain"], meant: [0], one: true),
        Case(name: "Ｆｉｌｍ", found: ["Film", "Film 2"], meant: [0], one: true),
        Case(name: "Test Movie", found: ["Test Movie 1", "Test Movie 2"], meant: [0, 1], one: false),
        Case(name: "Dune", found: ["Dune", "Dune", "Dune: Part Two"], meant: [0, 1], one: false),
    ])
    func match(_ example: Case) {
        let found = Self.items(example.found)
        let meant = example.meant.map { found[$0] }
        switch ServerBrowser.match(example.name, in: found) {
        case .none: #expect(meant.isEmpty)
        case .one(let item): #expect(example.one && meant == [item])
        case .several(let items): #expect(!example.one && items == meant)
        }
    }

    @Test(arguments: [
        ("f6890000cdb1434c4ab3208fdf02da30", true), ("F6890000CDB1434C4AB3208FDF02DA30", true),
        ("f6890000-cdb1-434c-4ab3-208fdf02da30", true), ("Amélie", false), ("f6890000cdb1434c4ab3208fdf02da3", false),
        ("g6890000cdb1434c4ab3208fdf02da30", false), ("", false), ("1917", false),
    ])
    func anIdOrAName(_ text: String, _ isId: Bool) {
        #expect(ServerBrowser.isItemId(text) == isId)
    }
}
