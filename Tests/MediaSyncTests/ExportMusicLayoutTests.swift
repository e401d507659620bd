import Foundation
import Testing

@testable import MediaSyncMirror

/// Where an exported mirror's music goes: `Music/Album Artist/Album (Year)/[Disc-]Track - Title.ext`, lyrics beside,
/// playlists and collections as `Playlists/Name.m3u8` in their order.
@Suite struct ExportMusicLayoutTests {
    static func file(_ key: String, _ ext: String = "flac") -> ExportSource.File {
        ExportSource.File(key: key, path: "Downloads/x/\(key).\(ext)", size: 1, identity: "i")
    }

    static func track(_ id: String, disc: Int?, number: Int?, title: String, lyrics: Bool = false)
        -> ExportSource.Track
    {
        ExportSource.Track(
            id: id, title: title, disc: disc, number: number, runTimeSeconds: 60, media: file("media:\(id):\(id)"),
            lyrics: lyrics ? file("lyrics:\(id)", "lrc") : nil)
    }

    static var source: ExportSource {
        var source = ExportSource()
        source.albums = [
            // Two discs with the same track numbers, lyrics on one track.
            ExportSource.Album(
                id: "a1", title: "Kind of Blue", artist: "Miles Davis", year: 1959,
                cover: file("image:a1:Primary", "jpeg"),
                tracks: [
                    track("t1", disc: 1, number: 1, title: "So What", lyrics: true),
                    track("t2", disc: 1, number: 2, title: "Freddie Freeloader"),
                    track("t3", disc: 2, number: 1, title: "So What / Take 2"),
                ]),
            // One disc, no year, a track without a number; a name no file system takes as it is.
            ExportSource.Album(
                id: "a2", title: "Live: At the Club?", artist: nil, year: nil, cover: nil,
                tracks: [
                    track("t4", disc: nil, number: 7, title: "Intro"),
                    track("t5", disc: nil, number: nil, title: "Outro"),
                ]),
        ]
        source.lists = [
            ExportSource.List(id: "p1", title: "Mix", isPlaylist: true, entries: ["t3", "t1", "t4", "t3", "missing"])
        ]
        return source
    }

    @Test func albumsGoUnderTheirArtistWithDiscAndTrackNumbers() {
        let paths = ExportLayout.targets(Self.source, scope: .music, playlists: false).map(\.path).sorted()
        #expect(
            paths == [
                "Music/Miles Davis/Kind of Blue (1959)/1-01 - So What.flac",
                "Music/Miles Davis/Kind of Blue (1959)/1-01 - So What.lrc",
                "Music/Miles Davis/Kind of Blue (1959)/1-02 - Freddie Freeloader.flac",
                "Music/Miles Davis/Kind of Blue (1959)/2-01 - So What _ Take 2.flac",
                "Music/Miles Davis/Kind of Blue (1959)/cover.jpg",
                "Music/Unknown Artist/Live_ At the Club_/07 - Intro.flac",
                "Music/Unknown Artist/Live_ At the Club_/Outro.flac",
            ])
    }

    @Test func aPlaylistListsItsEntriesInOrderATrackTwiceIncluded() {
        let targets = ExportLayout.targets(Self.source, scope: nil, playlists: true)
        guard let playlist = targets.first(where: \.isPlaylist), case .playlist(let list) = playlist.content else {
            Issue.record("no playlist")
            return
        }
        #expect(playlist.path == "Playlists/Mix.m3u8")
        #expect(playlist.scope == "music")
        #expect(
            list.entries.map(\.path) == [
                "../Music/Miles Davis/Kind of Blue (1959)/2-01 - So What _ Take 2.flac",
                "../Music/Miles Davis/Kind of Blue (1959)/1-01 - So What.flac",
                "../Music/Unknown Artist/Live_ At the Club_/07 - Intro.flac",
                "../Music/Miles Davis/Kind of Blue (1959)/2-01 - So What _ Take 2.flac",
            ])
        // Only the movies and shows: no music, and the playlist (it holds tracks) goes with the music.
        #expect(ExportLayout.targets(Self.source, scope: .media, playlists: true).isEmpty)
    }
}
