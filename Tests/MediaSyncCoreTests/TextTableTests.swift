import MediaSyncCore
import Testing

/// Columns lined up by the width characters take on a terminal.
@Suite struct TextTableTests {
    @Test(arguments: [
        ("Amelie", 6), ("Amélie", 6), ("Ame\u{301}lie", 6), ("千と千尋の神隠し", 16), ("기생충", 6), ("ＡＢＣ", 6),
        ("東京 Story", 10), ("", 0), ("Tab\u{200B}", 3), ("🎬 Film", 7), ("👩‍👩‍👧", 2), ("Ω", 1),
    ])
    func displayWidth(_ text: String, _ width: Int) {
        #expect(TextTable.displayWidth(text) == width, "\(text.debugDescription)")
    }

    @Test func aWideTitleShiftsNoColumnAfterIt() {
        let lines = TextTable.lines(
            header: ["ID", "TYPE", "NAME", "DETAIL"],
            rows: [
                ["a1", "Movie", "千と千尋の神隠し", "2001"], ["b2", "Movie", "Amélie", "2001"], ["c3", "Series", "x", ""],
            ])
        #expect(
            lines == [
                "ID  TYPE    NAME              DETAIL",
                "a1  Movie   千と千尋の神隠し  2001",
                "b2  Movie   Amélie            2001",
                "c3  Series  x                 ",
            ])
        // The detail column starts at the same terminal column on every line.
        let starts = lines.map { line -> Int in
            let upTo = line.range(of: "2001").map { String(line[..<$0.lowerBound]) } ?? line
            return TextTable.displayWidth(upTo)
        }
        #expect(starts[1] == starts[2])
    }
}
