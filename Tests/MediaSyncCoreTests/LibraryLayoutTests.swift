import Foundation
import Testing

@testable import MediaSyncCore

@Suite struct LibraryLayoutTests {
    @Test func moviePaths() {
        #expect(
            LibraryLayout.movieMedia(movieId: "m1", versionId: "v2", fileExtension: "mkv") == "Downloads/m1/m1-v2.mkv")
        #expect(LibraryLayout.movieImage(movieId: "m1", type: .primary) == "Downloads/m1/Images/Primary.jpeg")
        #expect(LibraryLayout.movieImage(movieId: "m1", type: .backdrop) == "Downloads/m1/Images/Backdrop.jpeg")
        #expect(LibraryLayout.movieMetadata("m1") == "Downloads/m1/metadata.json")
    }

    @Test func seriesPaths() {
        #expect(LibraryLayout.seriesMetadata("s") == "Downloads/s/metadata.json")
        #expect(
            LibraryLayout.seriesImage(seriesId: "s", type: .backdrop) == "Downloads/s/Images/Series-s-Backdrop.jpeg")
        #expect(LibraryLayout.seasonMetadata(seriesId: "s", seasonNumber: 1) == "Downloads/s/Season-01/metadata.json")
        #expect(LibraryLayout.seasonFolderName(0) == "Season-00")
        #expect(LibraryLayout.seasonFolderName(12) == "Season-12")
        #expect(LibraryLayout.seasonFolderName(100) == "Season-100")
        #expect(
            LibraryLayout.seasonImage(seriesId: "s", seasonNumber: 2, seasonId: "se", type: .primary)
                == "Downloads/s/Season-02/Images/Season-se-Primary.jpeg")
        #expect(
            LibraryLayout.episodeImage(seriesId: "s", seasonNumber: 2, episodeId: "e", type: .primary)
                == "Downloads/s/Season-02/Images/Episode-e-Primary.jpeg")
        #expect(
            LibraryLayout.episodeMedia(
                seriesId: "s", seasonNumber: 0, episodeId: "e", versionId: "v", fileExtension: "mp4")
                == "Downloads/s/Season-00/e-v.mp4")
    }

    @Test func musicPaths() {
        #expect(
            LibraryLayout.trackMedia(albumId: "a", trackId: "t", versionId: "t", fileExtension: "flac")
                == "Downloads/a/t-t.flac")
        #expect(LibraryLayout.lyrics(albumId: "a", trackId: "t") == "Downloads/a/t.lrc")
        #expect(LibraryLayout.albumImage(albumId: "a", type: .primary) == "Downloads/a/Images/Primary.jpeg")
        #expect(LibraryLayout.albumMetadata("a") == "Downloads/a/metadata.json")
        #expect(LibraryLayout.listMetadata("p") == "Downloads/p/metadata.json")
        #expect(LibraryLayout.listImage(listId: "p", type: .primary) == "Downloads/p/Images/Primary.jpeg")
    }

    @Test func subtitlesSitBesideTheirMedia() {
        let media = "Downloads/s/Season-01/e-v.mkv"
        #expect(
            LibraryLayout.subtitle(mediaPath: media, streamIndex: 3, language: "eng", forced: false, format: "srt")
                == "Downloads/s/Season-01/e-v.3.eng.srt")
        #expect(
            LibraryLayout.subtitle(mediaPath: media, streamIndex: 4, language: nil, forced: true, format: "../x")
                == "Downloads/s/Season-01/e-v.4.und.forced.srt")
    }

    @Test func versionIdFallsBackToTheItem() {
        #expect(LibraryLayout.versionId(itemId: "i", mediaSourceId: nil) == "i")
        #expect(LibraryLayout.versionId(itemId: "i", mediaSourceId: "m") == "m")
    }

    @Test(
        arguments: [
            ("video/x-matroska", "mp4", "mkv"), ("video/mp4; charset=binary", nil, "mp4"),
            ("application/octet-stream", "mov,mp4,m4a,3gp,3g2,mj2", "mp4"), (nil, "matroska,webm", "mkv"),
            (nil, "avi", "avi"), (nil, nil, "bin"), (nil, "../../etc", "bin"), ("audio/mpeg", nil, "mp3"),
            // An audiobook's .m4b is served as audio/mp4 and keeps its name; a track's .m4a stays .m4a.
            ("audio/mp4", "m4b", "m4b"), ("audio/mp4", "m4a", "m4a"), ("audio/mp4", nil, "m4a"),
            // Books by their MIME types; a Kindle .azw keeps its name under the .azw3 type.
            ("application/epub+zip", "bin", "epub"), ("application/pdf", nil, "pdf"),
            ("application/vnd.comicbook+zip", "cbz", "cbz"), ("application/vnd.comicbook-rar", nil, "cbr"),
            ("application/x-mobipocket-ebook", nil, "mobi"), ("application/vnd.amazon.ebook", "azw", "azw"),
            ("application/vnd.amazon.ebook", "azw3", "azw3"), ("application/octet-stream", "cbt", "cbt"),
        ] as [(String?, String?, String)])
    func extensions(mime: String?, container: String?, expected: String) {
        #expect(MediaExtension.choose(mimeType: mime, container: container) == expected)
    }

    @Test(arguments: [
        ("05991932707d2c668148d8ed19cdb544", true), ("a-b_C9", true), ("", false), ("../x", false), ("a/b", false),
        ("a\0b", false), ("é", false), (String(repeating: "a", count: 129), false), ("..", false), (".", false),
        ("a b", false), ("a\nb", false), ("CON", false), ("nul", false), ("Com1", false), ("LPT9", false),
        ("aux", false), ("COM", true), ("COM10", true), ("CONSOLE", true), ("lpt0", false), ("COM0", false),
        ("AUX-Show", true), ("aux_", true),
    ])
    func ids(raw: String, accepted: Bool) {
        #expect((SafeName.id(raw) != nil) == accepted)
    }

    /// Names Windows reserves: the stem before the first dot, trailing spaces ignored, in any case, with or without
    /// an extension; non-ASCII letters never make one (the long s `ſ` upper-cases to `S`, the dotless `ı` to `I`,
    /// neither of which these names hold), the superscript digits ¹ ² ³ after COM and LPT do.
    @Test(arguments: [
        ("CON", true), ("con.txt", true), ("Aux.tar.gz", true), ("nUl.", true), ("PRN.mp3", true), ("com1", true),
        ("LPT9.x", true), ("COM0", true), ("lpt0.mp3", true), ("LPT", false), ("CONX", false), ("CO", false),
        (".CON", false), ("AUX.Show", true), ("nul.txt", true), ("com1.mp3", true), ("LPT9.m3u8", true),
        ("nul .txt", true), ("AUX  .Show", true), ("AUX. ", true), ("COM\u{B9}", true), ("com\u{B2}.mp3", true),
        ("LPT\u{B3}.x", true), ("LPT\u{B4}", false), ("COM\u{B9}x", false), ("conin$", true), ("CONOUT$.txt", true),
        ("CONIN", false), ("CONOUT$$", false), (" AUX", false), ("AUX_", false), ("AUX-Show.mp3", false),
        ("auxiliary.mp3", false),
        ("", false), ("ÇON", false), ("CO\u{0144}", false), ("ſCON", false), ("COM\u{0661}", false), ("COMı", false),
        ("CON\u{301}", false),
    ])
    func windowsReservedNames(name: String, reserved: Bool) {
        #expect(SafeName.isWindowsReserved(name) == reserved)
    }

    @Test func containment() {
        #expect(SafeName.isContained("Downloads/a/b.mkv"))
        #expect(!SafeName.isContained("/etc/passwd"))
        #expect(!SafeName.isContained("Downloads/../x"))
        #expect(!SafeName.isContained("Downloads//x"))
        #expect(!SafeName.isContained("Downloads/a\0"))
    }

    /// MIME types and containers are trimmed of tabs and Unicode space separators as Foundation's
    /// `CharacterSet.whitespaces` trims them.
    @Test func mediaExtensionsTrimLikeFoundation() {
        #expect(MediaExtension.choose(mimeType: " video/mp4 ; codecs=avc1", container: nil) == "mp4")
        #expect(MediaExtension.choose(mimeType: "\tVIDEO/X-MATROSKA\u{00A0}", container: nil) == "mkv")
        #expect(MediaExtension.choose(mimeType: "\u{2003}audio/mpeg\u{3000}", container: "mkv") == "mp3")
        #expect(MediaExtension.fromContainer("mov, mp4 ,m4a") == "mp4")
        #expect(MediaExtension.fromContainer(" matroska,webm") == "mkv")
        #expect(MediaExtension.fromContainer("\u{00A0}\t ") == "bin")
        for text in [
            "  a b  ", "\t\u{00A0}x\u{2009}", "", " ", "\n y \n", "\u{200B}z", "\u{180E}q\u{FEFF}",
            "\u{1680}\u{202F}\u{205F}r\u{2028}",
        ] {
            #expect(
                MediaExtension.trimmed(text[...]) == text.trimmingCharacters(in: .whitespaces),
                "\(text.debugDescription)")
        }
    }
}
