import MediaSyncJSON
import Testing

@testable import MediaSyncCore

/// The server's `LyricDto` as LRC, as each version answers it (10.9 with metadata from the file's tags, 10.10 with
/// an empty `Metadata`, 10.11 with `Cues` on each line).
@Suite struct LyricsTextTests {
    static let cases: [(name: String, dto: String, lrc: String?)] = [
        (
            "timed lines, 10.10's empty metadata",
            #"{"Metadata":{},"Lyrics":[{"Text":"First","Start":12340000},{"Text":"Second","Start":754500000}]}"#,
            "[00:01.23]First\n[01:15.45]Second\n"
        ),
        (
            "plain lines (no Start): the text as it is",
            #"{"Metadata":{},"Lyrics":[{"Text":"One"},{"Text":"Two"}]}"#,
            "One\nTwo\n"
        ),
        (
            "10.9's metadata becomes ID tags; an hour and more stays in minutes",
            #"{"Metadata":{"Artist":"A","Album":"B","Title":"C","Length":2450000000},"#
                + #""Lyrics":[{"Text":"Late","Start":37230000000}]}"#,
            "[ar:A]\n[al:B]\n[ti:C]\n[length:04:05]\n[62:03.00]Late\n"
        ),
        (
            "10.11's cues are left out; a line break inside a line becomes a space",
            #"{"Metadata":{},"Lyrics":[{"Text":"a\nb","Start":0,"Cues":[{"Position":0,"EndPosition":1,"Start":0}]}]}"#,
            "[00:00.00]a b\n"
        ),
        (
            "mixed: timed where timed",
            #"{"Metadata":{},"Lyrics":[{"Text":"Intro"},{"Text":"Verse","Start":50000000}]}"#,
            "Intro\n[00:05.00]Verse\n"
        ),
        ("no line at all", #"{"Metadata":{},"Lyrics":[]}"#, nil),
        ("not a LyricDto", #"{"type":"about:blank","status":404}"#, nil),
        ("not JSON", "<html>", nil),
    ]

    @Test(arguments: 0..<cases.count)
    func lrcFromTheServersLyrics(_ index: Int) {
        let (name, dto, lrc) = Self.cases[index]
        #expect(LyricsText.lrc(fromLyricDto: Array(dto.utf8)) == lrc, "\(name)")
    }
}
