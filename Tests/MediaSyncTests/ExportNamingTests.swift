import Foundation
import MediaSyncCore
import Testing

@testable import MediaSyncMirror

@Suite struct ExportNamingTests {
    @Test(
        arguments: [
            // (raw, extension, expected)
            ("Heat", "mkv", "Heat.mkv"),
            ("Mission: Impossible", "mkv", "Mission_ Impossible.mkv"),
            ("AC/DC \\ Live", "mp3", "AC_DC _ Live.mp3"),
            ("What? <Really> \"yes\" | no *", "mkv", "What_ _Really_ _yes_ _ no _.mkv"),
            ("Tab\there\nnewline", "srt", "Tab_here_newline.srt"),
            ("Ends with dots...", "mkv", "Ends with dots.mkv"),
            ("Ends with spaces   ", "mkv", "Ends with spaces.mkv"),
            ("...And Justice for All", "mp3", "And Justice for All.mp3"),
            ("  many    spaces  ", "mkv", "many spaces.mkv"),
            ("CON", "mkv", "CON_.mkv"),
            ("com1", "mp3", "com1_.mp3"),
            ("Lpt9", "srt", "Lpt9_.srt"),
            ("COM0", "mkv", "COM0_.mkv"),
            ("CONIN$", "mkv", "CONIN$_.mkv"),
            // The stem before the first dot decides, so the `_` goes there.
            ("AUX.Show", "m3u8", "AUX_.Show.m3u8"),
            ("nul .txt", "srt", "nul _.txt.srt"),
            ("com1.mp3", "mp3", "com1_.mp3.mp3"),
            ("COM\u{B9}", "mp3", "COM\u{B9}_.mp3"),
            ("lpt\u{B3}.Show", "mkv", "lpt\u{B3}_.Show.mkv"),
            ("LPT9", "m3u8", "LPT9_.m3u8"),
            ("Auxiliary.Show", "mkv", "Auxiliary.Show.mkv"),
            ("Console", "mkv", "Console.mkv"),
            ("", "mkv", "Untitled.mkv"),
            ("...", "mkv", "Untitled.mkv"),
            ("Amélie – 東京 ✨", "mp4", "Amélie – 東京 ✨.mp4"),
            // NFD input becomes NFC.
            ("Ame\u{301}lie", "mkv", "Amélie.mkv"),
        ] as [(String, String, String)])
    func componentsAreSafeOnFATexFATAndNTFS(raw: String, fileExtension: String, expected: String) {
        #expect(ExportNaming.component(raw, fileExtension: fileExtension) == expected)
    }

    @Test func longNamesAreCutTo255BytesOnACharacterBoundaryKeepingTheExtension() {
        let ascii = String(repeating: "a", count: 300)
        let name = ExportNaming.component(ascii, fileExtension: "mkv")
        #expect(name.utf8.count == 255)
        #expect(name.hasSuffix("a.mkv"))
        // Three-byte characters: 250 bytes of room for the stem hold 83 of them (249 bytes), never half of one.
        let japanese = String(repeating: "東", count: 200)
        let cut = ExportNaming.component(japanese, fileExtension: "srt")
        #expect(cut.utf8.count <= 255)
        #expect(cut == String(repeating: "東", count: 83) + ".srt")
        // A family emoji (one character of 25 bytes) is never split.
        let emoji = String(repeating: "👨‍👩‍👧‍👦", count: 20)
        let emojiName = ExportNaming.component(emoji, fileExtension: "mp3")
        #expect(emojiName.utf8.count <= 255)
        #expect(emojiName.dropLast(4).allSatisfy { $0 == "👨‍👩‍👧‍👦" })
        // A suffix (a disambiguator) survives the cut, and a cut that ends in a space is trimmed.
        let spaced = String(repeating: "ab ", count: 100)
        let suffixed = ExportNaming.component(spaced, suffix: " [abcdef]", fileExtension: "mkv")
        #expect(suffixed.utf8.count <= 255)
        #expect(suffixed.hasSuffix("b [abcdef].mkv"))
        #expect(ExportNaming.truncate("ééé", maxBytes: 5) == "éé")
    }

    @Test(
        arguments: [
            (1, "Season 01"), (9, "Season 09"), (10, "Season 10"), (100, "Season 100"), (0, "Specials"),
        ] as [(Int, String)])
    func seasonFolders(number: Int, expected: String) {
        #expect(ExportNaming.seasonFolder(number) == expected)
    }

    @Test func episodeAndPodcastStems() {
        #expect(
            ExportNaming.episodeStem(series: "Show", season: 1, episode: 2, title: "Pilot") == "Show - S01E02 - Pilot")
        #expect(
            ExportNaming.episodeStem(series: "Show", season: 0, episode: 1, title: "Making of")
                == "Show - S00E01 - Making of")
        #expect(
            ExportNaming.episodeStem(series: "Show", season: 1, episode: 2, episodeEnd: 3, title: "Double")
                == "Show - S01E02-E03 - Double")
        #expect(ExportNaming.episodeStem(series: "Show", season: 12, episode: 105, title: nil) == "Show - S12E105")
        #expect(
            ExportNaming.episodeStem(series: "Show", season: 1, episode: nil, title: "Unnumbered")
                == "Show - S01 - Unnumbered")
        #expect(
            ExportNaming.podcastEpisodeStem(published: "2025-01-05T10:00:00Z", title: "News") == "2025-01-05 - News")
        #expect(ExportNaming.podcastEpisodeStem(published: nil, title: "News") == "News")
        #expect(ExportNaming.podcastEpisodeStem(published: "yesterday!", title: "News") == "News")
        #expect(ExportNaming.titled("Heat", year: 1995) == "Heat (1995)")
        #expect(ExportNaming.titled("Heat", year: nil) == "Heat")
    }

    @Test(
        arguments: [
            ("Heat (1995) - 720p", "Heat (1995)", "720p"),
            ("Heat (1995)", "Heat (1995)", ""),
            ("heat (1995) - Director's Cut", "Heat (1995)", "Director's Cut"),
            ("4K HDR", "Heat (1995)", "4K HDR"),
            ("Some: thing", "Heat (1995)", "Some_ thing"),
        ] as [(String, String, String)])
    func versionLabels(name: String, item: String, expected: String) {
        #expect(ExportNaming.versionLabel(name, itemName: item) == expected)
    }

    @Test func subtitlePartsComeFromTheMirrorsNames() throws {
        let media = "Downloads/m/m-v.mkv"
        let plain = try #require(ExportNaming.subtitleParts(mirrorPath: "Downloads/m/m-v.2.eng.srt", mediaPath: media))
        #expect(plain.index == 2 && plain.language == "eng" && !plain.forced && plain.format == "srt")
        let forced = try #require(
            ExportNaming.subtitleParts(mirrorPath: "Downloads/m/m-v.3.fre.forced.ass", mediaPath: media))
        #expect(forced.index == 3 && forced.language == "fre" && forced.forced && forced.format == "ass")
        #expect(ExportNaming.subtitleParts(mirrorPath: "Downloads/m/other.2.eng.srt", mediaPath: media) == nil)
    }

    @Test func caseInsensitiveCollisionsAreResolvedTheSameWayInAnyOrder() {
        let members = [
            (id: "b2", stem: "Heat (1995)"), (id: "a1", stem: "HEAT (1995)"), (id: "c3", stem: "Ronin (1998)"),
            (id: "d4", stem: "heat (1995)"),
        ]
        let first = ExportNaming.resolve(members)
        let second = ExportNaming.resolve(members.reversed())
        #expect(first == second)
        // The smallest id keeps the plain name; the others get six hex digits of their id's SHA-1.
        #expect(first["a1"] == "")
        #expect(first["c3"] == "")
        #expect(first["b2"] == ExportNaming.disambiguator("b2"))
        #expect(first["d4"] == ExportNaming.disambiguator("d4"))
        #expect(ExportNaming.disambiguator("b2").range(of: #"^ \[[0-9a-f]{6}\]$"#, options: .regularExpression) != nil)
        // NFC and NFD spellings of one name collide too.
        let accents = ExportNaming.resolve([(id: "x", stem: "Am\u{E9}lie"), (id: "y", stem: "Ame\u{301}lie")])
        #expect(accents["x"] == "" && accents["y"] != "")
        // A name taken by something else (a user's file) leaves nobody the plain name.
        let taken = ExportNaming.resolve([(id: "x", stem: "Poster")], fileExtension: "jpg", taken: ["poster.jpg"])
        #expect(taken["x"] == ExportNaming.disambiguator("x"))
    }

    @Test func theFileSystemTypeComesFromTheMountTable() {
        let table = """
            22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
            40 22 0:35 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw
            41 22 7:0 / /media/usb\\040stick rw,relatime shared:3 - vfat /dev/loop0 rw,fmask=0022
            42 22 7:1 / /media/usb2 rw shared:4 - exfat /dev/loop1 rw
            """
        #expect(ExportFileSystem.mountType(of: "/home/me", mountinfo: table) == "ext4")
        #expect(ExportFileSystem.mountType(of: "/tmp/x", mountinfo: table) == "tmpfs")
        #expect(ExportFileSystem.mountType(of: "/media/usb stick/Movies", mountinfo: table) == "vfat")
        #expect(ExportFileSystem.mountType(of: "/media/usb22", mountinfo: table) == "ext4")
        #expect(ExportFileSystem.mountType(of: "/media/usb2", mountinfo: table) == "exfat")
        #expect(ExportFileSystem.maximumFileSize(type: "vfat") == 4 * 1024 * 1024 * 1024 - 1)
        #expect(ExportFileSystem.maximumFileSize(type: "exfat") == nil)
        #expect(ExportFileSystem.maximumFileSize(type: "ntfs3") == nil)
    }

    @Test func theASCIIPathCleansAsTheCharacterWalkDoes() {
        // Random ASCII names, weighted towards what the rules care about: spaces, dots, CR LF, controls, refused.
        var random = SplitMix64(seed: 15)
        let alphabet = Array(" .\r\n\t\u{7F}\u{01}<>:\"/\\|?*aZ9-_".utf8)
        for _ in 0..<5_000 {
            let length = Int(random.next() % 24)
            let bytes = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            let raw = String(decoding: bytes, as: UTF8.self)
            #expect(ExportNaming.cleanASCII(raw) == ExportNaming.cleanCharacters(raw), "\(Array(raw.utf8))")
        }
    }

    @Test func playlistsAreExtendedM3UWithRelativeNames() {
        let text = String(
            decoding: ExportLayout.playlist([
                ("Pilot", 1800, "Show - S01E01 - Pilot.mkv"), ("Two\nlines", nil, "b.mkv"),
            ]), as: UTF8.self)
        #expect(text == "#EXTM3U\n#EXTINF:1800,Pilot\nShow - S01E01 - Pilot.mkv\n#EXTINF:-1,Two lines\nb.mkv\n")
    }
}
