import Foundation
import MediaSyncJSON
import Testing

@testable import MediaSyncTestServer

@Suite struct JellyfinRouteTests {
    @Test func publicInfoAndAuthentication() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let library = server.library
        let info = try TestSupport.request(server, "/System/Info/Public")
        #expect(info.status == 200)
        #expect(info.headers["content-type"] == "application/json; charset=utf-8")
        #expect(info.json?["Id"]?.stringValue == library.serverId)
        #expect(info.json?["Version"]?.stringValue == JellyfinProfile.newest.version)
        #expect(info.json?["ProductName"]?.stringValue == "Jellyfin Server")

        let body = Array(#"{"Username":"demo","Pw":"demo"}"#.utf8)
        let auth = try TestSupport.request(
            server, "POST", "/Users/AuthenticateByName",
            headers: [
                ("Authorization", #"MediaBrowser Client="t", Device="d", DeviceId="x", Version="1""#),
                ("Content-Type", "application/json"),
            ], body: body)
        #expect(auth.status == 200)
        #expect(auth.json?["AccessToken"]?.stringValue == library.accessToken)
        #expect(auth.json?["ServerId"]?.stringValue == library.serverId)
        #expect(auth.json?["User"]?["Id"]?.stringValue == library.userId)
        #expect(auth.json?["SessionInfo"]?["DeviceId"]?.stringValue == "x")

        let wrong = try TestSupport.request(
            server, "POST", "/Users/AuthenticateByName",
            body: Array(#"{"Username":"demo","Pw":"nope"}"#.utf8))
        #expect(wrong.status == 401)
        #expect(wrong.body.isEmpty)
    }

    @Test func tokenRules() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        let library = server.library
        let path = "/UserViews?userId=\(library.userId)"
        let missing = try TestSupport.request(server, path)
        #expect(missing.status == 401)
        #expect(missing.headers["content-length"] == "0")
        #expect(try TestSupport.request(server, path, headers: [TestSupport.authHeader("bad")]).status == 401)
        #expect(try TestSupport.request(server, path, headers: [("X-Emby-Token", library.accessToken)]).status == 401)
        #expect(try TestSupport.request(server, path + "&api_key=\(library.apiKey)").status == 401)
        #expect(
            try TestSupport.request(
                server, path, headers: [("X-Emby-Authorization", TestSupport.authHeader(library.accessToken).1)]
            ).status == 401)
        // Percent-encoded values and just a token are fine.
        let minimal = try TestSupport.request(
            server, path, headers: [("Authorization", "MediaBrowser Token=\"\(library.apiKey)\"")])
        #expect(minimal.status == 200)
        let views = try TestSupport.request(server, path, headers: [TestSupport.authHeader(library.accessToken)])
        #expect(views.status == 200)
        guard case .array(let items)? = views.json?["Items"] else {
            Issue.record("no Items")
            return
        }
        #expect(items.compactMap { $0["CollectionType"]?.stringValue } == ["movies", "tvshows"])
        #expect(views.json?["TotalRecordCount"] == .int(2))
    }

    @Test func itemsPaging() throws {
        let library = TestLibrary(movies: 5, series: 2, seasonsPerSeries: 2, episodesPerSeason: 3)
        let server = try TestSupport.makeServer(library)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        var ids: [String] = []
        var start = 0
        var total = -1
        repeat {
            let r = try TestSupport.request(
                server,
                "/Items?userId=\(library.userId)&Recursive=true&includeItemTypes=Movie,Episode&startIndex=\(start)&limit=4&fields=MediaSources",
                headers: [auth])
            #expect(r.status == 200)
            guard let json = r.json, case .array(let page)? = json["Items"],
                let t = json["TotalRecordCount"]?.intValue
            else {
                Issue.record("bad page")
                return
            }
            #expect(json["StartIndex"] == .integer(start))
            total = Int(t)
            ids += page.compactMap { $0["Id"]?.stringValue }
            #expect(page.allSatisfy { $0["MediaSources"] != nil && $0["Path"] == nil })
            start += 4
        } while start < total
        #expect(total == 5 + 2 * 2 * 3)
        #expect(ids.count == total)
        #expect(Set(ids).count == total)

        // /Items without userId: 400 for a user token, fine for the API key.
        #expect(try TestSupport.request(server, "/Items?recursive=true", headers: [auth]).status == 400)
        #expect(
            try TestSupport.request(server, "/Items?recursive=true", headers: [TestSupport.authHeader(library.apiKey)])
                .status == 200)

        // Legacy route, search, ids.
        let search = try TestSupport.request(
            server, "/Users/\(library.userId)/Items?searchTerm=movie%203&Recursive=True", headers: [auth])
        #expect(search.json?["TotalRecordCount"] == .int(1))
        let movie = library.movies[1]
        let byIds = try TestSupport.request(server, "/Items?userId=\(library.userId)&ids=\(movie.id)", headers: [auth])
        guard case .array(let found)? = byIds.json?["Items"] else {
            Issue.record("no items")
            return
        }
        #expect(found.first?["Name"]?.stringValue == movie.name)
        let children = try TestSupport.request(
            server, "/Items?userId=\(library.userId)&parentId=\(library.moviesViewId)", headers: [auth])
        #expect(children.json?["TotalRecordCount"] == .int(5))
    }

    /// Every page of one listing reads the candidates its first page filtered and ordered; the order is still the
    /// profile's: 10.10 pages through each item once in library order among ties, 10.11 orders each request's ties
    /// its own way, so that paging through ties skips and repeats items as a real 10.11 server's does.
    @Test func pagesOfOneListingShareItsOrderAndTiesAreDecidedPerRequest() throws {
        var library = TestLibrary(movies: 12, series: 0, seasonsPerSeries: 0, episodesPerSeason: 0, seed: 5)
        let created = library.items[0].dateCreated
        for index in library.items.indices {
            library.items[index].name = "Same Name"
            library.items[index].dateCreated = created
        }
        let server = try TestSupport.makeServer(library)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        func pagedIds() throws -> [String] {
            var ids: [String] = []
            for start in stride(from: 0, to: 12, by: 3) {
                let page = try TestSupport.request(
                    server,
                    "/Items?userId=\(library.userId)&parentId=\(library.moviesViewId)&sortBy=SortName,DateCreated"
                        + "&startIndex=\(start)&limit=3",
                    headers: [auth])
                #expect(page.json?["TotalRecordCount"] == .int(12))
                guard case .array(let items)? = page.json?["Items"] else {
                    Issue.record("no items")
                    return ids
                }
                ids += items.compactMap { $0["Id"]?.stringValue }
            }
            return ids
        }
        let listed = library.items.filter { !$0.isAlternateVersion && $0.type == "Movie" }.map(\.id)
        server.profile = .v10_10
        let first = try pagedIds()
        #expect(first == listed)
        #expect(try pagedIds() == first)
        server.profile = .v10_11
        var orders = Set<[String]>()
        var skippedOrRepeated = false
        for _ in 0..<6 {
            let ids = try pagedIds()
            #expect(ids.count == 12)
            #expect(Set(ids).isSubset(of: Set(listed)))
            orders.insert(ids)
            if Set(ids).count < 12 { skippedOrRepeated = true }
        }
        #expect(orders.count > 1)
        #expect(skippedOrRepeated)
    }

    @Test func showsAndPlaybackInfo() throws {
        let library = TestLibrary()
        let server = try TestSupport.makeServer(library)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        let series = try #require(library.series.first)
        let seasons = try TestSupport.request(
            server, "/Shows/\(series.id)/Seasons?userId=\(library.userId)", headers: [auth])
        #expect(seasons.json?["TotalRecordCount"] == .int(2))
        let season = try #require(library.seasons.last)
        let episodes = try TestSupport.request(
            server, "/Shows/\(series.id)/Episodes?userId=\(library.userId)&seasonId=\(season.id)&isMissing=false",
            headers: [auth])
        guard case .array(let eps)? = episodes.json?["Items"] else {
            Issue.record("no episodes")
            return
        }
        #expect(eps.count == 3)
        #expect(eps.first?["ParentIndexNumber"] == .int(2))
        #expect(eps.first?["IndexNumber"] == .int(1))
        #expect(eps.first?["SeasonId"]?.stringValue == season.id)

        let movie = try #require(library.movies.first)
        #expect(movie.mediaSources.count == 2)
        let info = try TestSupport.request(
            server, "/Items/\(movie.id)/PlaybackInfo?userId=\(library.userId)", headers: [auth])
        guard case .array(let sources)? = info.json?["MediaSources"] else {
            Issue.record("no sources")
            return
        }
        #expect(sources.compactMap { $0["Id"]?.stringValue } == movie.mediaSources.map(\.id))
        #expect(sources.first?["Size"] == .integer(movie.mediaSources[0].size))
        #expect(sources.first?["ETag"]?.stringValue == movie.mediaSources[0].etag)
        #expect(info.json?["PlaySessionId"]?.stringValue?.count == 32)
        let posted = try TestSupport.request(
            server, "POST", "/Items/\(movie.id)/PlaybackInfo?userId=\(library.userId)", headers: [auth],
            body: Array("{}".utf8))
        #expect(posted.status == 200)
    }

    @Test func downloadImagesSubtitles() throws {
        let library = TestLibrary(mediaSize: 200_000)
        let server = try TestSupport.makeServer(library)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        let movie = try #require(library.movies.first)
        let second = movie.mediaSources[1]
        let expected = try #require(library.mediaBytes(forMediaSourceId: second.id))
        #expect(expected.count == second.size)
        let download = try TestSupport.request(server, "/Items/\(second.id)/Download", headers: [auth])
        #expect(download.status == 200)
        #expect(TestSupport.same(download.body, expected))
        #expect(download.headers["etag"] == nil)
        #expect(download.headers["content-type"] == "video/x-matroska")
        #expect(download.headers["content-disposition"] == "attachment; filename=\"\(second.name).mkv\"")
        #expect(download.headers["last-modified"] != nil)
        let lastModified = try #require(download.headers["last-modified"])
        let resumed = try TestSupport.request(
            server, "/Items/\(second.id)/Download",
            headers: [auth, ("Range", "bytes=1000-"), ("If-Range", lastModified)])
        #expect(resumed.status == 206)
        #expect(TestSupport.same(resumed.body, Array(expected[1000...])))
        #expect(try TestSupport.request(server, "/Items/\(second.id)/Download").status == 401)
        #expect(
            try TestSupport.request(server, "/Items/00000000000000000000000000000000/Download", headers: [auth]).status
                == 404)
        #expect(library.mediaBytes(forMediaSourceId: movie.id) != expected)

        let tag = try #require(movie.imageTags["Primary"])
        let image = try TestSupport.request(server, "/Items/\(movie.id)/Images/Primary?tag=\(tag)&maxWidth=300")
        #expect(image.status == 200)
        #expect(image.headers["etag"] == "\"\(tag)\"")
        #expect(image.headers["cache-control"] != nil)
        #expect(Array(image.body.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        let cached = try TestSupport.request(
            server, "/Items/\(movie.id)/Images/Primary?tag=\(tag)", headers: [("If-None-Match", "\"\(tag)\"")])
        #expect(cached.status == 304)
        #expect(try TestSupport.request(server, "/Items/\(movie.id)/Images/Backdrop/0").status == 200)
        #expect(try TestSupport.request(server, "/Items/\(movie.id)/Images/Backdrop/3").status == 404)

        // Library changes are visible.
        server.updateLibrary { $0.changeMediaContent(ofMediaSourceId: second.id) }
        let changed = try TestSupport.request(server, "/Items/\(second.id)/Download", headers: [auth])
        #expect(changed.body.count == expected.count)
        #expect(!TestSupport.same(changed.body, expected))
        #expect(server.library.mediaSource(withId: second.id)?.etag != second.etag)
        server.updateLibrary { $0.removeItem(withId: movie.id) }
        #expect(try TestSupport.request(server, "/Items/\(second.id)/Download", headers: [auth]).status == 404)

        let episode = try #require(library.episodes.first)
        let srt = try TestSupport.request(
            server, "/Videos/\(episode.id)/\(episode.id)/Subtitles/2/Stream.srt", headers: [auth])
        #expect(srt.status == 200)
        #expect(srt.text.hasPrefix("1\r\n00:00:01,000 --> "))
    }

    @Test func quickConnectFlow() throws {
        let server = try TestSupport.makeServer()
        defer { server.shutdown() }
        #expect(try TestSupport.request(server, "/QuickConnect/Enabled").text == "true")
        let initiate = try TestSupport.request(server, "POST", "/QuickConnect/Initiate")
        let secret = try #require(initiate.json?["Secret"]?.stringValue)
        #expect(initiate.json?["Code"]?.stringValue?.count == 6)
        #expect(initiate.json?["Authenticated"] == .bool(false))
        let early = try TestSupport.request(
            server, "POST", "/Users/AuthenticateWithQuickConnect", body: Array("{\"Secret\":\"\(secret)\"}".utf8))
        #expect(early.status == 401)
        var states: [JSONValue?] = []
        for _ in 0..<3 {
            states.append(
                try TestSupport.request(server, "/QuickConnect/Connect?secret=\(secret)").json?["Authenticated"])
        }
        #expect(states == [.bool(false), .bool(false), .bool(true)])
        let done = try TestSupport.request(
            server, "POST", "/Users/AuthenticateWithQuickConnect", body: Array("{\"Secret\":\"\(secret)\"}".utf8))
        #expect(done.status == 200)
        #expect(done.json?["AccessToken"]?.stringValue == server.library.accessToken)
        #expect(try TestSupport.request(server, "/QuickConnect/Connect?secret=unknown").status == 404)
    }

    @Test func faultsApplyToJellyfinRoutes() throws {
        let library = TestLibrary()
        let server = try TestSupport.makeServer(library)
        defer { server.shutdown() }
        server.inject(.status(502), path: "/UserViews")
        #expect(
            try TestSupport.request(server, "/UserViews", headers: [TestSupport.authHeader(library.accessToken)]).status
                == 502)
        #expect(
            try TestSupport.request(server, "/UserViews", headers: [TestSupport.authHeader(library.accessToken)]).status
                == 200)
    }

    @Test func libraryIsDeterministic() {
        let a = TestLibrary(seed: 3)
        let b = TestLibrary(seed: 3)
        let c = TestLibrary(seed: 4)
        #expect(a == b)
        #expect(a.userId != c.userId)
        #expect(a.items.allSatisfy { $0.id.count == 32 && $0.id.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(a.movies.count == 2)
        #expect(a.series.count == 1)
        #expect(a.seasons.count == 2)
        #expect(a.episodes.count == 6)
        let source = a.episodes[0].mediaSources[0]
        #expect(a.mediaBytes(forMediaSourceId: source.id) == b.mediaBytes(forMediaSourceId: source.id))
        #expect(a.mediaBytes(forMediaSourceId: source.id)?.count == source.size)
        #expect(a.mediaBytes(forMediaSourceId: "nope") == nil)
    }

    @Test func jsonRoundTrip() throws {
        let text = #"{"a":[1,2.5,true,null,"x\"\u00e9\n"],"b":{}}"#
        let value = try #require(JSONValue.parse(Array(text.utf8)))
        #expect(JSONValue.parse(value.serialized()) == value)
        #expect(value["a"] == .array([.int(1), .double(2.5), .bool(true), .null, .string("x\"é\n")]))
        #expect(JSONValue.parse(Array("{".utf8)) == nil)
    }
}
