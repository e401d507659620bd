import Foundation
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import Testing

/// Browsing and paging against the local test server over loopback.
@Suite struct BrowseTests {
    @Test func userViews() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let views = try await makeUserClient(server).userViews()
        #expect(views.map(\.collectionType) == ["movies", "tvshows"])
        #expect(views.map(\.id) == [library.moviesViewId, library.showsViewId])
        #expect(server.requests(to: "/UserViews").first?.queryValue("userId") == library.userId)
    }

    @Test func itemsAlwaysSendUserIdAndFields() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let client = try makeUserClient(server)
        let movies = try await client.items(
            ItemsQuery(parentId: library.moviesViewId, recursive: true, includeItemTypes: ["Movie"]))
        #expect(movies.map(\.id) == library.movies.map(\.id))
        let first = try #require(movies.first)
        #expect(first.mediaSources?.count == 2)
        #expect(first.etag != nil)
        #expect(first.path != nil)
        #expect(first.dateCreated != nil)
        #expect(first.parentId == library.moviesViewId)
        let request = try #require(server.requests(to: "/Items").first)
        #expect(request.queryValue("userId") == library.userId)
        #expect(request.queryValue("parentId") == library.moviesViewId)
        #expect(request.queryValue("recursive") == "true")
        #expect(request.queryValue("includeItemTypes") == "Movie")
        #expect(request.queryValue("fields") == "MediaSources,Etag,Path,DateCreated,ParentId,ProviderIds")
        #expect(request.queryValue("startIndex") == "0")
        #expect(request.queryValue("limit") == "200")
    }

    @Test func searchTermIsEncoded() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let found = try await makeUserClient(server).items(ItemsQuery(recursive: true, searchTerm: "Movie 2 & co"))
        #expect(found.isEmpty)
        #expect(server.requests(to: "/Items").first?.queryValue("searchTerm") == "Movie 2 & co")
        let series = try await makeUserClient(server).items(ItemsQuery(recursive: true, searchTerm: "series 1"))
        #expect(series.map(\.name) == ["Test Series 1"])
    }

    @Test func pagingAcrossSeveralPages() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // Library order without sortBy: 10.10's (10.11 sorts by SortName and shuffles ties: ProfileTests).
        server.profile = .v10_10
        let library = server.library
        let expected = library.items.filter { !$0.isAlternateVersion }.map(\.id)
        #expect(expected.count == 11)
        let all = try await makeUserClient(server).items(ItemsQuery(recursive: true, limit: 2))
        #expect(all.map(\.id) == expected)
        let requests = server.requests(to: "/Items")
        // Pages after the first are asked for a few at a time, so they arrive in any order; each once.
        #expect(
            requests.compactMap { $0.queryValue("startIndex").flatMap { Int($0) } }.sorted() == [0, 2, 4, 6, 8, 10])
        #expect(requests.first?.queryValue("startIndex") == "0")
        #expect(requests.allSatisfy { $0.queryValue("limit") == "2" && $0.queryValue("userId") == library.userId })
    }

    @Test func aFullPageAtTheTotalAsksOnceMore() async throws {
        let server = try TestServer(library: TestLibrary(movies: 4, series: 0))
        defer { server.shutdown() }
        let movies = try await makeUserClient(server).items(
            ItemsQuery(recursive: true, includeItemTypes: ["Movie"], limit: 2))
        #expect(movies.count == 4)
        // The total is not trusted to end a listing: an empty page does.
        #expect(server.requests(to: "/Items").map { $0.queryValue("startIndex") } == ["0", "2", "4"])
    }

    @Test func aTotalBelowTheRealCountDoesNotCutTheListingShort() async throws {
        let server = try TestServer(library: TestLibrary(movies: 5, series: 0))
        defer { server.shutdown() }
        server.inject(.totalRecordCount(2), path: "/Items")
        let movies = try await makeUserClient(server).items(
            ItemsQuery(recursive: true, includeItemTypes: ["Movie"], limit: 2))
        #expect(movies.map(\.id) == server.library.movies.map(\.id))
        #expect(movies.count == 5)
    }

    @Test func aLyingTotalDoesNotLoop() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let body =
            #"{"Items":[{"Id":"aaaa0000aaaa0000aaaa0000aaaa0000","Name":"Only","Type":"Movie"}],"TotalRecordCount":1000,"StartIndex":0}"#
        server.inject(
            .body(status: 200, contentType: "application/json", bytes: jsonBytes(body)), path: "/Items", count: 1000)
        let items = try await makeUserClient(server).items(ItemsQuery(recursive: true))
        #expect(items.map(\.name) == ["Only"])
        // Fewer distinct items than the total claims: listed once more (a scan may have shifted the pages), no further.
        #expect(server.requests(to: "/Items").count == 2)
    }

    @Test func repeatedPagesAreNotDuplicated() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // A server that ignores startIndex: every page is the same two items, and the total claims ten.
        let body =
            #"{"Items":[{"Id":"a1","Name":"A"},{"Id":"b2","Name":"B"},{"Id":"a1","Name":"A again"}],"TotalRecordCount":10,"StartIndex":0}"#
        server.inject(
            .body(status: 200, contentType: "application/json", bytes: jsonBytes(body)), path: "/Items", count: 1000)
        let items = try await makeUserClient(server).items(ItemsQuery(recursive: true, limit: 3))
        #expect(items.map(\.id) == ["a1", "b2"])
        #expect(items.first?.name == "A")
        // The first page, then one window of pages asked together (the total announced more), and the same once
        // more because the distinct items fall short of the total: no further.
        #expect(server.requests(to: "/Items").count == 10)
    }

    @Test func aPageThatStallsIsAskedAgainSmaller() async throws {
        let server = try TestServer(library: TestLibrary(movies: 50, series: 0))
        defer { server.shutdown() }
        // The first page (of 40) never sends a byte, until the client gives up on it (a big 10.11 server building
        // media sources for a whole page); the pages after it answer at once. Which page stalls is set here, not
        // raced against the clock: the 3 s window only has to see a page that never comes.
        server.inject(.stall(afterBytes: 0, seconds: 3_600), path: "/Items", count: 1)
        let library = server.library
        let client = try makeUserClient(
            server, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.01),
            patience: ListingPatience(stallSeconds: 3, pageTimeout: 60, smallestPage: 2))
        let movies = try await client.items(
            ItemsQuery(recursive: true, includeItemTypes: ["Movie"], fields: ["MediaSources"], limit: 40))
        #expect(Set(movies.map(\.id)) == Set(library.movies.map(\.id)))
        #expect(movies.count == 50)
        let limits = server.requests(to: "/Items").compactMap { $0.queryValue("limit").flatMap { Int($0) } }
        // The stalled page of 40 was asked once (a stall is not retried as it is), then again smaller from the
        // same place; the rest of the listing kept the smaller size.
        #expect(limits.first == 40)
        #expect(limits.filter { $0 == 40 }.count == 1)
        #expect(limits.dropFirst().allSatisfy { $0 <= 10 })
        #expect(server.requests(to: "/Items").dropFirst().first?.queryValue("startIndex") == "0")
    }

    @Test func aPageThatStallsAtTheSmallestSizeFailsTheListing() async throws {
        let server = try TestServer(library: TestLibrary(movies: 8, series: 0))
        defer { server.shutdown() }
        server.counters.mediaSourceCost = 0.5
        let client = try makeUserClient(
            server, patience: ListingPatience(stallSeconds: 1, pageTimeout: 30, smallestPage: 4))
        let error = await jellyfinError {
            try await client.items(
                ItemsQuery(recursive: true, includeItemTypes: ["Movie"], fields: ["MediaSources"], limit: 8))
        }
        #expect(error?.isStall == true)
        #expect(error?.message.contains("pages of 4 items did not come within 1 s either") == true)
        // The server records a request once it has answered: the stalled page of 4 is still being built here.
        #expect(server.requests(to: "/Items").first?.queryValue("limit") == "8")
    }

    @Test func idsThatDifferOnlyByNormalisationAreTwoItems() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        // "café" in NFC and in NFD: canonically equivalent, so equal as Swift Strings, but two ids on the wire.
        let body = #"{"Items":[{"Id":"caf\u00e9","Name":"NFC"},{"Id":"cafe\u0301","Name":"NFD"}],"TotalRecordCount":2}"#
        server.inject(.body(status: 200, contentType: "application/json", bytes: jsonBytes(body)), path: "/Items")
        let items = try await makeUserClient(server).items(ItemsQuery(recursive: true))
        #expect(items.map(\.name) == ["NFC", "NFD"])
        #expect(items.map { Array($0.id.utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
    }

    @Test func itemById() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let client = try makeUserClient(server)
        let movie = library.movies[0]
        let item = try await client.item(id: movie.id)
        #expect(item.name == movie.name)
        #expect(item.mediaSources?.map(\.id) == movie.mediaSources.map(\.id))
        #expect(server.requests(to: "/Items").first?.queryValue("ids") == movie.id)

        let missing = await jellyfinError { try await client.item(id: "0123456789abcdef0123456789abcdef") }
        #expect(missing?.kind == .notFound)
        #expect(missing?.message.contains("0123456789abcdef0123456789abcdef") == true)
        let hostile = await jellyfinError { try await client.item(id: "../../x") }
        #expect(hostile?.kind == .invalidID)
    }

    @Test func seasonsAndEpisodes() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let client = try makeUserClient(server)
        let series = try #require(library.series.first)
        let seasons = try await client.seasons(seriesId: series.id)
        #expect(seasons.map(\.indexNumber) == [1, 2])
        #expect(seasons.allSatisfy { $0.etag != nil && $0.seriesId == series.id })
        let seasonRequest = try #require(server.requests(to: "/Shows/\(series.id)/Seasons").first)
        #expect(seasonRequest.queryValue("userId") == library.userId)
        #expect(seasonRequest.queryValue("fields")?.contains("Etag") == true)

        let episodes = try await client.episodes(seriesId: series.id, seasonId: seasons[0].id)
        #expect(episodes.count == 3)
        #expect(episodes.map(\.indexNumber) == [1, 2, 3])
        #expect(episodes.allSatisfy { $0.parentIndexNumber == 1 && $0.mediaSources?.count == 1 && $0.etag != nil })
        let request = try #require(server.requests(to: "/Shows/\(series.id)/Episodes").first)
        #expect(request.queryValue("userId") == library.userId)
        #expect(request.queryValue("seasonId") == seasons[0].id)
        #expect(request.queryValue("isMissing") == "false")
        #expect(request.queryValue("fields")?.hasPrefix("MediaSources,Etag,Path,DateCreated") == true)

        let wholeSeries = try await client.episodes(seriesId: series.id)
        #expect(wholeSeries.count == 6)
    }

    @Test func virtualEpisodesAreExcluded() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let series = try #require(server.library.series.first)
        let body = """
            {"Items":[
              {"Id":"e1","Name":"On disk","Type":"Episode","LocationType":"FileSystem","IndexNumber":1},
              {"Id":"e2","Name":"Missing","Type":"Episode","LocationType":"Virtual","IndexNumber":2},
              {"Id":"e3","Name":"No location","Type":"Episode","IndexNumber":3},
              {"Id":"e4","Name":"Numeric virtual","Type":"Episode","LocationType":2,"IndexNumber":4}
            ],"TotalRecordCount":4,"StartIndex":0}
            """
        server.inject(
            .body(status: 200, contentType: "application/json", bytes: jsonBytes(body)),
            path: "/Shows/\(series.id)/Episodes")
        let episodes = try await makeUserClient(server).episodes(seriesId: series.id, seasonId: "s1")
        #expect(episodes.map(\.id) == ["e1", "e3"])
    }

    @Test func playbackInfo() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let movie = library.movies[0]
        let sources = try await makeUserClient(server).playbackInfo(itemId: movie.id)
        #expect(sources.map(\.id) == movie.mediaSources.map(\.id))
        #expect(sources.map(\.size) == movie.mediaSources.map { Int64($0.size) })
        let subtitle = try #require(sources.first?.mediaStreams.first { $0.isSubtitle })
        #expect(subtitle.isExternal == true)
        #expect(subtitle.index == 2)
        #expect(subtitle.deliveryMethod == "External")
        #expect(server.requests(to: "/Items/\(movie.id)/PlaybackInfo").first?.queryValue("userId") == library.userId)
    }

    @Test func browsingNeedsAUser() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let client = try makeClient(server, token: server.library.accessToken)
        let error = await jellyfinError { try await client.items(ItemsQuery()) }
        #expect(error?.kind == .notSignedIn)
        #expect(server.allRequests.isEmpty)
    }

    @Test func downloadURLsServeTheMedia() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let client = try makeUserClient(server)
        let alternate = library.movies[0].mediaSources[1]
        var headers = HTTPHeaders()
        headers.add(name: client.authorizationHeader.name, value: client.authorizationHeader.value)
        let response = try await client.http.send(
            HTTPRequest(url: try client.downloadURL(mediaSourceId: alternate.id), headers: headers))
        #expect(response.body == library.mediaBytes(forMediaSourceId: alternate.id))
        let image = try await client.http.send(
            HTTPRequest(
                url: try client.imageURL(
                    itemId: library.movies[0].id, type: "Primary", tag: library.movies[0].imageTags["Primary"],
                    maxWidth: 300)))
        #expect(image.status == 200)
        let subtitle = try await client.http.send(
            HTTPRequest(
                url: try client.subtitleURL(
                    itemId: library.movies[0].id, mediaSourceId: alternate.id, streamIndex: 2, format: "srt"),
                headers: headers))
        #expect(String(decoding: subtitle.body, as: UTF8.self).contains(library.movies[0].name))
    }

    /// The token and API key never go into a URL, and no legacy auth mechanism is used.
    @Test func tokenNeverInAURL() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let library = server.library
        let anonymous = try makeClient(server)
        _ = try await anonymous.publicSystemInfo()
        let result = try await anonymous.authenticate(username: library.userName, password: library.password)
        let client = anonymous.signedIn(result)
        _ = try await client.userViews()
        _ = try await client.items(ItemsQuery(recursive: true, limit: 3))
        let series = try #require(library.series.first)
        let seasons = try await client.seasons(seriesId: series.id)
        _ = try await client.episodes(seriesId: series.id, seasonId: seasons.first?.id)
        _ = try await client.playbackInfo(itemId: library.movies[0].id)
        _ = try await client.item(id: library.movies[1].id)
        let keyClient = try makeClient(server, token: library.apiKey)
        _ = try await keyClient.validateAPIKey()
        for url in [
            try client.downloadURL(mediaSourceId: library.movies[0].id),
            try client.imageURL(itemId: library.movies[0].id, type: "Primary", tag: "t", maxWidth: 300),
            try client.subtitleURL(
                itemId: library.movies[0].id, mediaSourceId: library.movies[0].id, streamIndex: 2, format: "srt"),
        ] {
            #expect(!url.contains(library.accessToken))
        }

        let requests = server.allRequests
        #expect(requests.count >= 9)
        for request in requests {
            let url = request.path + "?" + request.query.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
            #expect(!url.contains(library.accessToken))
            #expect(!url.contains(library.apiKey))
            #expect(!request.query.keys.contains { $0.lowercased() == "api_key" || $0.lowercased() == "apikey" })
            #expect(request.header("x-emby-token") == nil)
            #expect(request.header("x-emby-authorization") == nil)
            #expect(request.header("x-mediabrowser-token") == nil)
            #expect(request.header("authorization")?.hasPrefix(#"MediaBrowser Client="mediasync""#) == true)
        }
    }
}
