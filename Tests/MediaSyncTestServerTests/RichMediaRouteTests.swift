import Foundation
import MediaSyncJSON
import Testing

@testable import MediaSyncTestServer

/// Chapters, trickplay and media segments as each modelled Jellyfin version answers them.
@Suite struct RichMediaRouteTests {
    static func makeServer(_ profile: JellyfinProfile) throws -> (TestServer, TestLibrary) {
        var library = TestLibrary(movies: 1, series: 0)
        // 250 thumbnails at 160 and 320: three tiles each; the movie's second version has its own.
        library.addRichMedia(chapters: 2, trickplayWidths: [320, 160], thumbnailCount: 250)
        let server = try TestSupport.makeServer(library)
        server.profile = profile
        return (server, library)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func eachVersionAnswersWhatItHas(profile: JellyfinProfile) throws {
        let (server, library) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        let movie = library.movies[0]
        let primary = movie.mediaSources[0]
        let alternate = movie.mediaSources[1]
        let listing = try TestSupport.request(
            server, "/Items?userId=\(library.userId)&ids=\(movie.id)&fields=MediaSources,Chapters,Trickplay",
            headers: [auth])
        guard case .array(let items)? = listing.json?["Items"], let item = items.first else {
            Issue.record("no item: \(listing.text)")
            return
        }
        // Chapters in every version, with an image tag.
        guard case .array(let chapters)? = item["Chapters"] else {
            Issue.record("no chapters")
            return
        }
        #expect(chapters.count == 2)
        #expect(chapters.allSatisfy { $0["ImageTag"]?.stringValue != nil && $0["ImagePath"] != nil })
        let tag = chapters[1]["ImageTag"]?.stringValue ?? ""
        let image = try TestSupport.request(server, "/Items/\(movie.id)/Images/Chapter/1")
        #expect(image.status == 200 && image.body == TestServer.chapterImageBytes(tag: tag))
        let none = try TestSupport.request(server, "/Items/\(movie.id)/Images/Chapter/5")
        #expect(none.status == 404 && none.json?.stringValue == "\(movie.name) does not have an image of type Chapter")

        // Trickplay from 10.9: the field, by media source and width; the playlist and tiles.
        let trickplay = item["Trickplay"]
        let playlist = try TestSupport.request(
            server, "/Videos/\(movie.id)/Trickplay/160/tiles.m3u8?mediaSourceId=\(primary.id)", headers: [auth])
        if profile == .v10_8 {
            #expect(trickplay == nil)
            #expect(playlist.status == 404)
        } else {
            #expect(trickplay?[primary.id]?["160"]?["ThumbnailCount"]?.intValue == 250)
            #expect(trickplay?[alternate.id]?["320"]?["Width"]?.intValue == 320)
            #expect(playlist.status == 200)
            #expect(playlist.headers["content-type"] == "application/x-mpegURL")
            let key = profile == .v10_11 ? "ApiKey" : "api_key"
            #expect(playlist.text.contains("2.jpg?MediaSourceId=\(primary.id)&\(key)=\(library.accessToken)\n"))
            #expect(playlist.text.contains("#EXTINF:500,\n"))
            #expect(try TestSupport.request(server, "/Videos/\(movie.id)/Trickplay/160/tiles.m3u8").status == 401)
            // A tile of the alternate version asked under the movie's id: 10.11 reads mediaSourceId, 10.9 and
            // 10.10 the path's id (the movie's own tiles).
            let tile = try TestSupport.request(
                server, "/Videos/\(movie.id)/Trickplay/160/0.jpg?mediaSourceId=\(alternate.id)", headers: [auth])
            #expect(tile.status == 200 && tile.headers["content-type"] == "image/jpeg")
            let info = try #require(
                (profile == .v10_11 ? alternate : primary).trickplay.first { $0.width == 160 })
            let owner = profile == .v10_11 ? alternate.id : primary.id
            #expect(tile.body == TestServer.trickplayTileBytes(sourceId: owner, info: info, index: 0))
            #expect(
                try TestSupport.request(server, "/Videos/\(movie.id)/Trickplay/160/3.jpg", headers: [auth]).status
                    == 404)
        }

        // Segments and HasSegments from 10.10.
        let segments = try TestSupport.request(server, "/MediaSegments/\(movie.id)", headers: [auth])
        guard case .array(let sources)? = item["MediaSources"] else {
            Issue.record("no sources")
            return
        }
        if profile == .v10_8 || profile == .v10_9 {
            #expect(segments.status == 404)
            #expect(sources.allSatisfy { $0["HasSegments"] == nil })
        } else {
            #expect(segments.status == 200)
            guard case .array(let found)? = segments.json?["Items"] else {
                Issue.record("no segments: \(segments.text)")
                return
            }
            #expect(found.map { $0["Type"]?.stringValue } == ["Intro", "Outro"])
            #expect(segments.json?["StartIndex"]?.intValue == 0)
            let outro = try TestSupport.request(
                server, "/MediaSegments/\(movie.id)?includeSegmentTypes=Outro", headers: [auth])
            #expect(outro.json?["TotalRecordCount"]?.intValue == 1)
            #expect(sources.allSatisfy { $0["HasSegments"]?.boolValue == true })
            #expect(
                try TestSupport.request(server, "/MediaSegments/\(String(repeating: "0", count: 32))", headers: [auth])
                    .status == 404)
        }
    }
}
