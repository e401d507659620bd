/// Columns of text lined up for a terminal, by the width each character takes there: a CJK ideograph or a fullwidth
/// form takes two columns, a combining accent none, so a title in Japanese or Chinese shifts no column after it.
public enum TextTable {
    /// The rows under `header`, each cell padded to its column's widest cell (the last column is not padded), cells
    /// two spaces apart.
    public static func lines(header: [String], rows: [[String]]) -> [String] {
        let all = [header] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (column, text) in row.enumerated() { widths[column] = max(widths[column], displayWidth(text)) }
        }
        return all.map { row in
            row.enumerated().map { column, text in
                column == row.count - 1
                    ? text : text + String(repeating: " ", count: max(0, widths[column] - displayWidth(text)))
            }.joined(separator: "  ")
        }
    }

    /// The columns `text` takes on a terminal: two for each wide character (East Asian wide and fullwidth forms, and
    /// emoji shown as pictures), none for one made only of combining marks, format characters or controls, one for
    /// any other (a base letter with its accents is one character).
    public static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        var zero = true
        for scalar in character.unicodeScalars {
            if isWide(scalar) { return 2 }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format, .control: continue
            default: zero = false
            }
        }
        return zero ? 0 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) characters (Unicode's EastAsianWidth.txt, in the ranges terminals take
    /// as two columns, as wcwidth does), and emoji presented as pictures by default.
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        guard value >= 0x1100 else { return false }
        if scalar.properties.isEmojiPresentation { return true }
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
