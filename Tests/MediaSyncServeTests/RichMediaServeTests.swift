import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import Testing

/// Chapters, trickplay and media segments answered by `serve` from the mirror alone, the home server stopped.
@Suite struct RichMediaServeTests {
    static func library() -> TestLibrary {
        var library = TestLibrary(movies: 1, series: 1, seasonsPerSeries: 1, episodesPerSeason: 1, mediaSize: 4_000)
        // 250 thumbnails: three 10 × 10 tiles, the last with 50.
        library.addRichMedia(chapters: 3, trickplayWidths: [320, 160], thumbnailCount: 250)
        return library
    }

    static func signedIn(_ http: ServeHTTP) async throws -> String {
        let auth = try await http.signIn()
        return auth.object["AccessToken"] as? String ?? ""
    }

    @Test func aHomeVideoIsAnsweredWithItsChaptersTrickplayAndSegments() async throws {
        var library = TestLibrary(movies: 0, series: 0, mediaSize: 4_000)
        library.addHomeVideos(1)
        library.addRichMedia(chapters: 3, trickplayWidths: [160], thumbnailCount: 12)
        try await ServeFixture.with(library) { fixture in
            try fixture.index.select(
                Selection(id: fixture.library.homeVideosViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let video = try #require(fixture.library.homeVideos.first)
            let source = video.mediaSources[0]
            fixture.upstream.shutdown()
            try await fixture.serving { http in
                let token = try await Self.signedIn(http)
                let views = try await http.send("GET", "/Users/\(fixture.library.userId)/Views", token: token)
                let view = try #require(views.items.first { $0["CollectionType"] as? String == "homevideos" })
                let listed = try await http.send(
                    "GET", "/Items?ParentId=\(view["Id"] as? String ?? "")&Fields=Chapters,Trickplay,MediaSources",
                    token: token)
                let item = try #require(listed.items.first)
                #expect(item["Id"] as? String == video.id && item["Type"] as? String == "Video")
                #expect((item["Chapters"] as? [[String: Any]])?.count == 3)
                let trickplay = try #require(item["Trickplay"] as? [String: [String: [String: Any]]])
                #expect(trickplay[source.id]?["160"]?["ThumbnailCount"] as? Int == 12)
                let sources = try #require(item["MediaSources"] as? [[String: Any]])
                #expect(sources.first?["HasSegments"] as? Bool == true)
                let tag = try #require(fixture.library.chapterImageTag(video, video.chapters[0]))
                let image = try await http.send("GET", "/Items/\(video.id)/Images/Chapter/0?tag=\(tag)")
                #expect(image.status == 200 && image.body == TestServer.chapterImageBytes(tag: tag))
                let info = try #require(source.trickplay.first)
                let tile = try await http.send(
                    "GET", "/Videos/\(video.id)/Trickplay/160/0.jpg?mediaSourceId=\(source.id)", token: token)
                #expect(tile.status == 200)
                #expect(tile.body == TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: 0))
                let segments = try await http.send("GET", "/MediaSegments/\(source.id)", token: token)
                #expect(segments.items.compactMap { $0["Type"] as? String } == ["Intro", "Outro"])
            }
        }
    }

    @Test func theFieldsChapterImagesTilesAndSegmentsComeFromTheMirror() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let library = fixture.library
            let movie = library.movies[0]
            let source = movie.mediaSources[0]
            let info = try #require(source.trickplay.first { $0.width == 160 })
            fixture.upstream.shutdown()
            try await fixture.serving { http in
                let token = try await Self.signedIn(http)
                // A listing answers the fields only when asked.
                let plain = try await http.send("GET", "/Items?ids=\(movie.id)&Fields=MediaSources", token: token)
                #expect(plain.items.first?["Chapters"] == nil)
                #expect(plain.items.first?["Trickplay"] == nil)
                let asked = try await http.send(
                    "GET", "/Items?ids=\(movie.id)&Fields=Chapters,Trickplay,MediaSources", token: token)
                let listed = try #require(asked.items.first)
                let chapters = try #require(listed["Chapters"] as? [[String: Any]])
                #expect(chapters.map { $0["Name"] as? String } == ["Chapter 1", "Chapter 2", "Chapter 3"])
                #expect(chapters.allSatisfy { $0["ImagePath"] == nil && $0["ImageTag"] is String })
                // Only the width held (160, the server's smallest), of each version held.
                let trickplay = try #require(listed["Trickplay"] as? [String: [String: [String: Any]]])
                #expect(Array(trickplay.keys) == [source.id])
                #expect(Array(trickplay[source.id]?.keys ?? [:].keys) == ["160"])
                #expect(trickplay[source.id]?["160"]?["ThumbnailCount"] as? Int == 250)
                // A single item has every field.
                let single = try await http.send("GET", "/Users/\(library.userId)/Items/\(movie.id)", token: token)
                #expect((single.object["Chapters"] as? [Any])?.count == 3)
                #expect(single.object["Trickplay"] is [String: Any])
                let sources = try #require(single.object["MediaSources"] as? [[String: Any]])
                #expect(sources.first?["HasSegments"] as? Bool == true)

                // The chapter image, anonymous, byte for byte; a chapter past the last is Jellyfin's 404.
                let tag = try #require(library.chapterImageTag(movie, movie.chapters[1]))
                let image = try await http.send("GET", "/Items/\(movie.id)/Images/Chapter/1?tag=\(tag)")
                #expect(image.status == 200)
                #expect(image.body == TestServer.chapterImageBytes(tag: tag))
                let none = try await http.send("GET", "/Items/\(movie.id)/Images/Chapter/9")
                #expect(none.status == 404)
                #expect(none.json as? String == "\(movie.name) does not have an image of type Chapter")

                // tiles.m3u8 as Jellyfin writes it, the caller's token in each tile URL.
                let playlist = try await http.send(
                    "GET", "/Videos/\(movie.id)/Trickplay/160/tiles.m3u8?mediaSourceId=\(source.id)", token: token)
                #expect(playlist.status == 200)
                #expect(playlist.headers["content-type"] == "application/x-mpegURL")
                let expected = [
                    "#EXTM3U", "#EXT-X-TARGETDURATION:3", "#EXT-X-VERSION:7", "#EXT-X-MEDIA-SEQUENCE:1",
                    "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-IMAGES-ONLY",
                    "#EXTINF:1000,", "#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=10x10,DURATION=10",
                    "0.jpg?MediaSourceId=\(source.id)&api_key=\(token)",
                    "#EXTINF:1000,", "#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=10x10,DURATION=10",
                    "1.jpg?MediaSourceId=\(source.id)&api_key=\(token)",
                    "#EXTINF:500,", "#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=10x10,DURATION=10",
                    "2.jpg?MediaSourceId=\(source.id)&api_key=\(token)", "#EXT-X-ENDLIST", "",
                ].joined(separator: "\n")
                #expect(playlist.text == expected)
                #expect(
                    try await http.send("GET", "/Videos/\(movie.id)/Trickplay/320/tiles.m3u8", token: token).status
                        == 404)
                #expect(try await http.send("GET", "/Videos/\(movie.id)/Trickplay/160/tiles.m3u8").status == 401)
                // Each tile, by the URL the playlist gives (its token in the query), byte for byte; none past the last.
                for index in 0..<3 {
                    let tile = try await http.send(
                        "GET",
                        "/Videos/\(movie.id)/Trickplay/160/\(index).jpg?MediaSourceId=\(source.id)&api_key=\(token)")
                    #expect(tile.status == 200)
                    #expect(tile.headers["content-type"] == "image/jpeg")
                    #expect(tile.body == TestServer.trickplayTileBytes(sourceId: source.id, info: info, index: index))
                }
                #expect(
                    try await http.send("GET", "/Videos/\(movie.id)/Trickplay/160/3.jpg", token: token).status == 404)

                // Segments, ordered, filtered by type (repeated key or a list), 404 for an unknown id.
                let all = try await http.send("GET", "/MediaSegments/\(source.id)", token: token)
                #expect(all.status == 200)
                #expect(all.items.map { $0["Type"] as? String } == ["Intro", "Outro"])
                #expect(all.object["TotalRecordCount"] as? Int == 2)
                let intro = try await http.send(
                    "GET", "/MediaSegments/\(source.id)?includeSegmentTypes=Intro", token: token)
                #expect(intro.items.map { $0["Type"] as? String } == ["Intro"])
                let both = try await http.send(
                    "GET", "/MediaSegments/\(source.id)?includeSegmentTypes=Outro&includeSegmentTypes=Intro",
                    token: token)
                #expect(both.items.count == 2)
                #expect(try await http.send("GET", "/MediaSegments/\(source.id)").status == 401)
                let unknown = try await http.send(
                    "GET", "/MediaSegments/\(String(repeating: "a", count: 32))", token: token)
                #expect(unknown.status == 404)
            }
        }
    }

    @Test(arguments: [JellyfinProfile.v10_8, .v10_9])
    func aMirrorOfAnOlderServerAnswersAsThatServerWould(profile: JellyfinProfile) async throws {
        try await ServeFixture.with(Self.library(), profile: profile) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let movie = fixture.library.movies[0]
            let source = movie.mediaSources[0]
            fixture.upstream.shutdown()
            try await fixture.serving { http in
                let token = try await Self.signedIn(http)
                let item = try await http.send("GET", "/Items/\(movie.id)", token: token)
                let sources = try #require(item.object["MediaSources"] as? [[String: Any]])
                #expect(sources.first?["HasSegments"] as? Bool == false)
                let trickplay = item.object["Trickplay"] as? [String: Any]
                if profile == .v10_8 {
                    // 10.8 has no trickplay: no field, as it would answer.
                    #expect(item.object["Trickplay"] == nil)
                } else {
                    #expect(trickplay?[source.id] != nil)
                }
                let segments = try await http.send("GET", "/MediaSegments/\(source.id)", token: token)
                #expect(segments.status == 200)
                #expect(segments.items.isEmpty)
                let playlist = try await http.send("GET", "/Videos/\(movie.id)/Trickplay/160/tiles.m3u8", token: token)
                #expect(playlist.status == (profile == .v10_8 ? 404 : 200))
            }
        }
    }
}
