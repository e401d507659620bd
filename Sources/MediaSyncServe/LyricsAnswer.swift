import Foundation
import MediaSyncJSON

/// A held LRC file answered as Jellyfin answers a track's lyrics: a `LyricDto` (`MediaBrowser.Model/Lyrics`,
/// v10.10.7) of `Metadata` and `Lyrics` lines, each with `Text` and, when timed, `Start` in ticks of 100 ns.
///
/// As Jellyfin reads an `.lrc` file (`LrcLyricParser`, then `TxtLyricParser`, v10.10.7): when it has timed lines,
/// those, sorted by time, each line's text trimmed; else every line as plain text. The mirror wrote the file from the
/// home server's own `LyricDto` (`LyricsText`), so its ID tags (`[ar:…]`, `[al:…]`, `[ti:…]`, `[au:…]`, `[by:…]`,
/// `[length:…]`) are that answer's `Metadata` and are answered as such, not as lines.
enum LyricsAnswer {
    /// One line read from the file.
    enum Line: Equatable {
        case timed([Int64], String)
        case tag(String, String)
        case plain(String)
    }

    static func lyricDto(fromLRC text: String) -> JSONValue {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            parse(String($0))
        }
        // The newline that ends the last line makes no line of its own.
        while lines.last == .plain("") { lines.removeLast() }
        var tags: [String: String] = [:]
        var timed: [(start: Int64, text: String)] = []
        var plain: [String] = []
        for line in lines {
            switch line {
            case .timed(let starts, let text): timed += starts.map { ($0, text) }
            case .tag(let key, let value): tags[key] = value
            case .plain(let text): plain.append(text)
            }
        }
        var metadata: [(String, JSONValue)] = []
        for (tag, field) in [("ar", "Artist"), ("al", "Album"), ("ti", "Title"), ("au", "Author")] {
            if let value = tags[tag] { metadata.append((field, .string(value))) }
        }
        if let length = tags["length"].flatMap(ticks) { metadata.append(("Length", JellyfinDTO.number(length))) }
        if let by = tags["by"] { metadata.append(("By", .string(by))) }
        if let creator = tags["re"] { metadata.append(("Creator", .string(creator))) }
        if let version = tags["ve"] { metadata.append(("Version", .string(version))) }
        let answered: [JSONValue]
        if timed.isEmpty {
            answered = plain.map { JellyfinDTO.object([("Text", .string($0))]) }
        } else {
            // A stable sort: lines at the same time keep the file's order.
            answered = timed.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map {
                JellyfinDTO.object([
                    ("Text", .string($0.element.text)), ("Start", JellyfinDTO.number($0.element.start)),
                ])
            }
        }
        return JellyfinDTO.object([("Metadata", JellyfinDTO.object(metadata)), ("Lyrics", .array(answered))])
    }

    /// A line: leading time tags (`[mm:ss.xx]`, several for a repeated line) and its text, an ID tag (`[ar:…]`), or
    /// plain text. Trimmed, as Jellyfin trims each line's text.
    static func parse(_ raw: String) -> Line {
        let line = raw.trimmingCharacters(in: .whitespaces)
        var rest = Substring(line)
        var starts: [Int64] = []
        while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            let inside = String(rest[rest.index(after: rest.startIndex)..<close])
            if let start = ticks(inside) {
                starts.append(start)
                rest = rest[rest.index(after: close)...]
                continue
            }
            if starts.isEmpty, let colon = inside.firstIndex(of: ":"),
                inside[..<colon].allSatisfy(\.isLetter), !inside[..<colon].isEmpty,
                rest[rest.index(after: close)...].trimmingCharacters(in: .whitespaces).isEmpty
            {
                let key = inside[..<colon].lowercased()
                let value = inside[inside.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                return .tag(key, value)
            }
            break
        }
        if !starts.isEmpty { return .timed(starts, rest.trimmingCharacters(in: .whitespaces)) }
        return .plain(line)
    }

    /// `mm:ss`, `mm:ss.x`, `mm:ss.xx`, `mm:ss.xxx` (or `:` before the fraction) in ticks; nil for anything else.
    static func ticks(_ text: String) -> Int64? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        var secondsPart = Substring(parts[1])
        var fraction: Substring = ""
        if parts.count == 3 {
            fraction = parts[2]
        } else if let dot = secondsPart.firstIndex(of: ".") {
            fraction = secondsPart[secondsPart.index(after: dot)...]
            secondsPart = secondsPart[..<dot]
        }
        let digits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        guard digits(parts[0]), digits(secondsPart), fraction.isEmpty || (digits(fraction) && fraction.count <= 3),
            let minutes = Int64(parts[0]), let seconds = Int64(secondsPart), seconds < 60
        else { return nil }
        var scaled: Int64 = 0
        if let value = Int64(fraction) {
            // Tenths, hundredths or thousandths of a second, in ticks.
            let unit: Int64 = fraction.count == 1 ? 1_000_000 : fraction.count == 2 ? 100_000 : 10_000
            scaled = value * unit
        }
        return (minutes * 60 + seconds) * 10_000_000 + scaled
    }
}
