import MediaSyncJSON

/// A track's lyrics as the server answers them (`LyricDto`: `Metadata` and `Lyrics` lines, each with `Text` and, when
/// timed, `Start` in ticks of 100 ns) written as an LRC file, which music players read beside the track.
///
/// Timed lines get their time (`[mm:ss.xx]`), lines without `Start` are written as plain text; the metadata the
/// server knows becomes LRC's ID tags (`[ar:…]`, `[al:…]`, `[ti:…]`, `[au:…]`, `[by:…]`, `[length:…]`). The
/// server's `Offset` is not written: the times it sends are the ones to show.
public enum LyricsText {
    /// Ticks (100 ns) per centisecond.
    static let ticksPerCentisecond: Int64 = 100_000

    /// The LRC text of a `LyricDto`, or nil when it holds no line (or is not one).
    public static func lrc(fromLyricDto bytes: [UInt8]) -> String? {
        guard let dto = try? JSONValue(parsing: bytes) else { return nil }
        return lrc(from: dto)
    }

    /// The LRC text of a parsed `LyricDto`, or nil when it holds no line.
    public static func lrc(from dto: JSONValue) -> String? {
        guard let lines = dto["Lyrics"]?.arrayValue else { return nil }
        var output: [String] = []
        if let metadata = dto["Metadata"] {
            for (tag, field) in [("ar", "Artist"), ("al", "Album"), ("ti", "Title"), ("au", "Author"), ("by", "By")] {
                if let value = metadata[field]?.stringValue.map(oneLine), !value.isEmpty {
                    output.append("[\(tag):\(value)]")
                }
            }
            if let length = metadata["Length"]?.intValue, length > 0 {
                let seconds = length / 10_000_000
                output.append("[length:\(twoDigits(seconds / 60)):\(twoDigits(seconds % 60))]")
            }
        }
        var lineCount = 0
        for line in lines {
            guard let text = line["Text"]?.stringValue.map(oneLine) else { continue }
            lineCount += 1
            if let start = line["Start"]?.intValue, start >= 0 {
                output.append(timeTag(ticks: start) + text)
            } else {
                output.append(text)
            }
        }
        guard lineCount > 0 else { return nil }
        return output.joined(separator: "\n") + "\n"
    }

    /// `[mm:ss.xx]`: minutes (two digits or more), seconds and hundredths.
    static func timeTag(ticks: Int64) -> String {
        let centiseconds = ticks / ticksPerCentisecond
        let minutes = centiseconds / 6_000
        let seconds = (centiseconds / 100) % 60
        return "[\(twoDigits(minutes)):\(twoDigits(seconds)).\(twoDigits(centiseconds % 100))]"
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : String(value)
    }

    /// A line break inside a line would start a line of its own in LRC: it becomes a space.
    private static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
