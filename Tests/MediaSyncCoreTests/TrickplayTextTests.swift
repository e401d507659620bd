import Testing

@testable import MediaSyncCore

/// The trickplay playlist as Jellyfin writes it, its numbers, and which width a selection keeps.
struct TrickplayTextTests {
    @Test(arguments: [
        (10.0, "10"), (2.5, "2.5"), (0.3333, "0.333"), (0.0005, "0.001"), (1000.0, "1000"), (0.1, "0.1"),
        (12.34, "12.34"), (0.0, "0"),
    ])
    func numbersAreWrittenAsDotNetsZeroPointHashHashHash(_ value: Double, _ text: String) {
        #expect(TrickplayText.decimal(value) == text)
    }

    /// `TrickplayManager.GetHlsPlaylist` (v10.10.7 L538–608): 25 thumbnails in 3 × 3 tiles at 2.5 s: three full tiles
    /// of 22.5 s, the last holding 7 thumbnails.
    @Test func thePlaylistIsJellyfinsLineForLine() {
        let info = TrickplayWidth(
            width: 320, height: 180, tileWidth: 3, tileHeight: 3, thumbnailCount: 25, interval: 2_500, bandwidth: 1)
        #expect(info.tileCount == 3)
        let text = TrickplayText.playlist(info, mediaSourceId: "abc", tokenKey: "api_key", token: "t0k")
        let expected = [
            "#EXTM3U", "#EXT-X-TARGETDURATION:3", "#EXT-X-VERSION:7", "#EXT-X-MEDIA-SEQUENCE:1",
            "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-IMAGES-ONLY",
            "#EXTINF:22.5,", "#EXT-X-TILES:RESOLUTION=320x180,LAYOUT=3x3,DURATION=2.5",
            "0.jpg?MediaSourceId=abc&api_key=t0k",
            "#EXTINF:22.5,", "#EXT-X-TILES:RESOLUTION=320x180,LAYOUT=3x3,DURATION=2.5",
            "1.jpg?MediaSourceId=abc&api_key=t0k",
            "#EXTINF:17.5,", "#EXT-X-TILES:RESOLUTION=320x180,LAYOUT=3x3,DURATION=2.5",
            "2.jpg?MediaSourceId=abc&api_key=t0k",
            "#EXT-X-ENDLIST", "",
        ].joined(separator: "\n")
        #expect(text == expected)
        var empty = info
        empty.thumbnailCount = 0
        #expect(TrickplayText.playlist(empty, mediaSourceId: "abc", tokenKey: "api_key", token: "t") == nil)
    }

    @Test(arguments: [
        (TrickplayChoice.smallest, [320, 160, 640], 160 as Int?), (.none, [320], nil), (.width(320), [160, 320], 320),
        (.width(300), [160, 320, 640], 320), (.width(240), [160, 320], 160), (.width(900), [160, 320, 640], 640),
        (.smallest, [], nil),
    ])
    func aSelectionKeepsTheSmallestTheNearestOrNone(_ choice: TrickplayChoice, _ widths: [Int], _ kept: Int?) {
        #expect(choice.pick(from: widths) == kept)
    }

    @Test(arguments: [TrickplayChoice.smallest, .none, .width(320)])
    func theIndexStoresTheChoiceAndReadsItBack(_ choice: TrickplayChoice) {
        #expect(TrickplayChoice(stored: choice.stored) == choice)
    }

    @Test func layoutPathsSitBesideTheMedia() {
        let media = "Downloads/s1/Season-01/e1-v1.mkv"
        #expect(
            LibraryLayout.trickplayTile(mediaPath: media, width: 320, index: 4)
                == "Downloads/s1/Season-01/e1-v1.trickplay/320/4.jpg")
        #expect(LibraryLayout.segments(mediaPath: media) == "Downloads/s1/Season-01/e1-v1.segments.json")
        #expect(LibraryLayout.movieChapterImage(movieId: "m1", index: 2) == "Downloads/m1/Images/Chapter-2.jpeg")
        #expect(LibraryLayout.chapterIndex(imageType: "Chapter-2") == 2)
        #expect(LibraryLayout.chapterIndex(imageType: "Chapter-02") == nil)
        #expect(LibraryLayout.chapterIndex(imageType: "Primary") == nil)
    }
}
