import Foundation

/// Text subtitles changed from one format to another where a client asks for a format the mirror does not hold, as
/// Jellyfin's `SubtitleEncoder` does for text subtitles (`MediaBrowser.MediaEncoding/Subtitles`, v10.10.7):
/// web clients ask for WebVTT, and most subtitles on disk are SubRip.
enum SubtitleText {
    /// The formats a held format can be answered in.
    static func canConvert(from held: String, to wanted: String) -> Bool {
        let held = held.lowercased()
        let wanted = wanted.lowercased()
        return held == wanted || (held == "srt" && wanted == "vtt")
    }

    /// SubRip as WebVTT (W3C WebVTT §4): the `WEBVTT` header, a `.` before the milliseconds of each timing line,
    /// cues apart by one blank line. Cue numbers stay as cue identifiers; text lines are kept as they are, with
    /// a line of `-->` dropped from the text (WebVTT forbids it in a cue's payload).
    static func webVTT(fromSubRip text: String) -> String {
        var body = Substring(text)
        if body.hasPrefix("\u{FEFF}") { body = body.dropFirst() }
        let lines = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false)
        var output = "WEBVTT\n"
        var cue: [Substring] = []
        var timed = false
        func flush() {
            if timed && !cue.isEmpty { output += "\n" + cue.joined(separator: "\n") + "\n" }
            cue = []
            timed = false
        }
        for line in lines {
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                flush()
                continue
            }
            if !timed, let timing = timingLine(line) {
                cue.append(Substring(timing))
                timed = true
            } else if timed {
                if !line.contains("-->") { cue.append(line) }
            } else {
                // A cue number (or any line before the timing line): the cue's identifier.
                cue.append(line)
            }
        }
        flush()
        return output
    }

    /// `00:00:01,500 --> 00:00:04,000` as `00:00:01.500 --> 00:00:04.000` (SubRip's cue settings after the times
    /// are dropped); nil when the line is not a timing line.
    static func timingLine(_ line: Substring) -> String? {
        let parts = line.components(separatedBy: "-->")
        guard parts.count == 2, let start = timestamp(parts[0]),
            let end = timestamp(parts[1].split(separator: " ", omittingEmptySubsequences: true).first ?? "")
        else { return nil }
        return "\(start) --> \(end)"
    }

    /// `H:MM:SS,mmm` (also with `.`, or fewer millisecond digits) as `HH:MM:SS.mmm`.
    static func timestamp<S: StringProtocol>(_ text: S) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let pieces = trimmed.split(whereSeparator: { $0 == "," || $0 == "." })
        guard pieces.count == 2, pieces[1].count >= 1, pieces[1].count <= 3, pieces[1].allSatisfy(\.isASCIIDigit)
        else { return nil }
        let clock = pieces[0].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isASCIIDigit) })
        else { return nil }
        func two(_ part: Substring) -> String { part.count == 1 ? "0" + part : String(part) }
        let millis = String(pieces[1]) + String(repeating: "0", count: 3 - pieces[1].count)
        return "\(two(clock[0])):\(two(clock[1])):\(two(clock[2])).\(millis)"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
