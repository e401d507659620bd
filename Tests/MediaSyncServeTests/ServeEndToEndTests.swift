import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestServer
import Testing

/// A mirror synced from the test server, served, browsed and played over HTTP as a Jellyfin client does; then
/// `sync` sends what was played home, once.
@Suite struct ServeEndToEndTests {
    static func library() -> TestLibrary {
        TestLibrary(movies: 2, series: 1, seasonsPerSeries: 1, episodesPerSeason: 3, mediaSize: 20_000, seed: 61)
    }

    static func ticks(_ item: [String: Any]) -> Int64 {
        (item["RunTimeTicks"] as? NSNumber)?.int64Value ?? 0
    }

    @Test func aClientBrowsesPlaysAndThePlayedStateGoesHomeOnce() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let library = fixture.library
            let movie = library.movies[0]
            let series = library.series[0]
            let episodes = library.episodes.filter { $0.seriesId == series.id }
                .sorted { ($0.indexNumber ?? 0) < ($1.indexNumber ?? 0) }
            var runtime: Int64 = 0
            let countBefore = fixture.upstream.userData(of: episodes[0].id)?.playCount ?? 0

            try await fixture.serving { http in
                // Anonymous routes, and the sign-in.
                let info = try await http.send("GET", "/system/info/public")
                #expect(info.status == 200)
                #expect(info.object["Id"] as? String == http.serverId)
                #expect(http.serverId != library.serverId)
                #expect(info.headers["access-control-allow-origin"] == "*")
                #expect(try await http.send("GET", "/System/Info").status == 401)
                #expect(try await http.signIn("demo", "wrong").status == 401)
                let auth = try await http.send(
                    "POST", "/Users/AuthenticateByName", json: ["username": "DEMO", "pw": ServeFixture.password])
                #expect(auth.status == 200)
                let token = auth.object["AccessToken"] as? String ?? ""
                #expect(token.count == 32)
                #expect(auth.object["ServerId"] as? String == http.serverId)
                let userId = (auth.object["User"] as? [String: Any])?["Id"] as? String ?? ""
                #expect(userId == library.userId)
                #expect(try await http.send("GET", "/System/Info", token: token).status == 200)
                #expect(try await http.send("GET", "/Users/Me", headers: ["X-Emby-Token": token]).status == 200)
                #expect(try await http.send("GET", "/users/public").text == "[]")

                // Views, movies, the series' seasons and episodes.
                let views = try await http.send("GET", "/UserViews?userId=\(userId)", token: token)
                let kinds = Dictionary(
                    views.items.map { ($0["CollectionType"] as? String ?? "", $0["Id"] as? String ?? "") },
                    uniquingKeysWith: { first, _ in first })
                #expect(Set(kinds.keys) == ["movies", "tvshows"])
                let movies = try await http.send(
                    "GET",
                    "/Users/\(userId)/Items?ParentId=\(kinds["movies"] ?? "")&SortBy=SortName&Fields=MediaSources",
                    token: token)
                #expect(movies.object["TotalRecordCount"] as? Int == library.movies.count)
                let listed = movies.items.first { $0["Id"] as? String == movie.id }
                #expect(listed?["Name"] as? String == movie.name)
                #expect(listed?["ServerId"] as? String == http.serverId)
                #expect((listed?["MediaSources"] as? [Any])?.count == 1)
                // One item: its own streams are its primary version's.
                let one = try await http.send("GET", "/Items/\(movie.id)", token: token)
                let oneSources = one.object["MediaSources"] as? [[String: Any]] ?? []
                let ownStreams = one.object["MediaStreams"] as? [[String: Any]] ?? []
                #expect(!ownStreams.isEmpty)
                #expect(
                    ownStreams.map { $0["Index"] as? Int }
                        == (oneSources.first?["MediaStreams"] as? [[String: Any]] ?? []).map { $0["Index"] as? Int })
                let shows = try await http.send("GET", "/Items?api_key=\(token)&parentId=\(kinds["tvshows"] ?? "")")
                #expect(shows.items.map { $0["Id"] as? String } == [series.id])
                let seasons = try await http.send("GET", "/Shows/\(series.id)/Seasons?userId=\(userId)", token: token)
                #expect(seasons.items.count == 1)
                let seasonId = seasons.items.first?["Id"] as? String ?? ""
                let listedEpisodes = try await http.send(
                    "GET", "/Shows/\(series.id)/Episodes?SeasonId=\(seasonId)", token: token)
                #expect(listedEpisodes.items.map { $0["Id"] as? String ?? "" } == episodes.map(\.id))
                runtime = Self.ticks(listedEpisodes.items.first ?? [:])
                #expect(runtime > 0)

                // Playback info, then the file: a range, the whole, past the end, HEAD.
                let episode = episodes[0]
                let playback = try await http.send(
                    "POST", "/Items/\(episode.id)/PlaybackInfo?UserId=\(userId)", token: token,
                    json: ["DeviceProfile": [:] as [String: Any]])
                #expect(playback.status == 200)
                #expect((playback.object["PlaySessionId"] as? String)?.count == 32)
                let sources = playback.object["MediaSources"] as? [[String: Any]] ?? []
                #expect(sources.count == 1)
                let source = sources.first ?? [:]
                let bytes = library.mediaBytes(forMediaSourceId: episode.mediaSources[0].id) ?? []
                #expect(source["SupportsDirectPlay"] as? Bool == true)
                #expect(source["SupportsTranscoding"] as? Bool == false)
                #expect(source["Protocol"] as? String == "File")
                #expect(source["Path"] == nil)
                #expect((source["Size"] as? NSNumber)?.intValue == bytes.count)
                let sourceId = source["Id"] as? String ?? ""
                let streams = source["MediaStreams"] as? [[String: Any]] ?? []
                let subtitle = streams.first { $0["DeliveryMethod"] as? String == "External" }
                #expect(subtitle?["IsExternal"] as? Bool == true)

                let ranged = try await http.send(
                    "GET", "/Videos/\(episode.id)/stream.mkv?static=true&MediaSourceId=\(sourceId)", token: token,
                    headers: ["Range": "bytes=100-199"])
                #expect(ranged.status == 206)
                #expect(ranged.body == Array(bytes[100...199]))
                #expect(ranged.headers["content-range"] == "bytes 100-199/\(bytes.count)")
                #expect(ranged.headers["accept-ranges"] == "bytes")
                #expect(ranged.headers["last-modified"] != nil)
                let whole = try await http.send("GET", "/Items/\(episode.id)/Download", token: token)
                #expect(whole.status == 200)
                #expect(whole.body == bytes)
                let past = try await http.send(
                    "GET", "/Videos/\(episode.id)/stream", token: token, headers: ["Range": "bytes=\(bytes.count)-"])
                #expect(past.status == 416)
                #expect(past.headers["content-range"] == "bytes */\(bytes.count)")
                let multi = try await http.send(
                    "GET", "/Videos/\(episode.id)/stream", token: token, headers: ["Range": "bytes=0-1,5-6"])
                #expect(multi.status == 200)
                #expect(multi.body.count == bytes.count)
                let head = try await http.send("HEAD", "/Videos/\(episode.id)/stream", token: token)
                #expect(head.status == 200)
                #expect(head.headers["content-length"] == "\(bytes.count)")
                // As on Jellyfin, the stream routes need no token; the download route does.
                #expect(try await http.send("GET", "/Videos/\(episode.id)/stream").status == 200)
                #expect(try await http.send("GET", "/Items/\(episode.id)/Download").status == 401)

                // The subtitle beside it, and an image (anonymous, with ETag / If-None-Match).
                let deliveryURL = subtitle?["DeliveryUrl"] as? String ?? "/missing"
                let subtitleReply = try await http.send("GET", deliveryURL)
                #expect(subtitleReply.status == 200)
                #expect(subtitleReply.text.contains("mediasync test subtitle"))
                let image = try await http.send("GET", "/Items/\(movie.id)/Images/Primary?tag=whatever")
                #expect(image.status == 200)
                #expect(!image.body.isEmpty)
                let etag = image.headers["etag"] ?? ""
                let again = try await http.send(
                    "GET", "/Items/\(movie.id)/Images/Primary", headers: ["If-None-Match": etag])
                #expect(again.status == 304)

                // One viewing of the first episode to 95 %: played.
                let session = playback.object["PlaySessionId"] as? String ?? ""
                let start: [String: Any] = ["ItemId": episode.id, "PositionTicks": 0, "PlaySessionId": session]
                #expect(try await http.send("POST", "/Sessions/Playing", token: token, json: start).status == 204)
                for fraction in [Int64(25), 50, 75] {
                    let progress: [String: Any] = ["ItemId": episode.id, "PositionTicks": runtime * fraction / 100]
                    #expect(
                        try await http.send("POST", "/Sessions/Playing/Progress", token: token, json: progress).status
                            == 204)
                }
                let stop: [String: Any] = ["itemId": episode.id, "positionTicks": runtime * 95 / 100]
                #expect(
                    try await http.send("POST", "/Sessions/Playing/Stopped", token: token, json: stop).status == 204)
                let data = try await http.send("GET", "/UserItems/\(episode.id)/UserData", token: token)
                #expect(data.object["Played"] as? Bool == true)
                let legacyData = try await http.send(
                    "GET", "/Users/\(userId)/Items/\(episode.id)/UserData", token: token)
                #expect(legacyData.object["Played"] as? Bool == true)

                // The movie marked played by hand.
                let marked = try await http.send("POST", "/UserPlayedItems/\(movie.id)", token: token)
                #expect(marked.status == 200)
                #expect(marked.object["Played"] as? Bool == true)

                // Another client stops the second episode half-way without a Stopped: its next start records it.
                let second = episodes[1]
                let other: [String: Any] = ["ItemId": second.id, "PositionTicks": 0]
                _ = try await http.send("POST", "/Sessions/Playing", token: token, json: other, deviceId: "device-2")
                let half: [String: Any] = ["ItemId": second.id, "PositionTicks": runtime / 2]
                _ = try await http.send(
                    "POST", "/Sessions/Playing/Progress", token: token, json: half, deviceId: "device-2")
                let next: [String: Any] = ["ItemId": movie.id, "PositionTicks": 0]
                _ = try await http.send("POST", "/Sessions/Playing", token: token, json: next, deviceId: "device-2")
                let resume = try await http.send("GET", "/UserItems/Resume?userId=\(userId)", token: token)
                #expect(resume.items.map { $0["Id"] as? String } == [second.id])
                let nextUp = try await http.send("GET", "/Shows/NextUp?userId=\(userId)", token: token)
                #expect(nextUp.items.map { $0["Id"] as? String } == [second.id])
                // Under its series, under a folder it is not in, and with started episodes left out.
                let seriesId = nextUp.items.first?["SeriesId"] as? String ?? ""
                for (query, expected) in [
                    ("ParentId=\(seriesId)", [second.id]), ("ParentId=\(movie.id)", []),
                    ("ParentId=\(String(repeating: "f", count: 32))", []), ("EnableResumable=false", []),
                ] {
                    let asked = try await http.send("GET", "/Shows/NextUp?userId=\(userId)&\(query)", token: token)
                    #expect(asked.items.map { $0["Id"] as? String } == expected, "\(query)")
                }
                let unplayed = try await http.send(
                    "GET", "/Items?ParentId=\(seasonId)&Filters=IsUnplayed&SortBy=IndexNumber", token: token)
                #expect(unplayed.items.map { $0["Id"] as? String ?? "" } == [second.id, episodes[2].id])

                // The mirror holds no intros, trailers or extras: empty answers for an item that is here.
                let intros = try await http.send("GET", "/Items/\(movie.id)/Intros", token: token)
                #expect(intros.object["TotalRecordCount"] as? Int == 0)
                let trailers = try await http.send(
                    "GET", "/Users/\(userId)/Items/\(movie.id)/LocalTrailers", token: token)
                #expect(trailers.status == 200 && trailers.text == "[]")
                let absent = String(repeating: "f", count: 32)
                #expect(try await http.send("GET", "/Items/\(absent)/SpecialFeatures", token: token).status == 404)

                // An older client's reports: the item in the route, the position in the query.
                let third = episodes[2]
                let legacy = [
                    ("POST", "/PlayingItems/\(third.id)?PositionTicks=0"),
                    ("POST", "/Users/\(userId)/PlayingItems/\(third.id)/Progress?PositionTicks=\(runtime / 3)"),
                    ("DELETE", "/PlayingItems/\(third.id)?PositionTicks=\(runtime / 3)"),
                ]
                for (method, path) in legacy {
                    #expect(try await http.send(method, path, token: token).status == 204, "\(method) \(path)")
                }

                // Refusals.
                #expect(
                    try await http.send("GET", "/Items/\(String(repeating: "f", count: 32))", token: token).status
                        == 404)
                #expect(try await http.send("GET", "/Items/..%2F..%2Fetc", token: token).status == 400)
                #expect(try await http.send("DELETE", "/Items/\(movie.id)", token: token).status == 405)
                #expect(try await http.send("GET", "/Nothing/Here", token: token).status == 404)
                #expect(try await http.send("GET", "/Items", token: "0123456789abcdef0123456789abcdef").status == 401)
                let preflight = try await http.send(
                    "OPTIONS", "/Items", headers: ["Access-Control-Request-Headers": "x-emby-authorization"])
                #expect(preflight.status == 204)
                #expect(preflight.headers["access-control-allow-origin"] == "*")
                #expect(preflight.headers["access-control-allow-headers"]?.lowercased() == "x-emby-authorization")
            }

            // The marks wait in the index as `mediasync played`'s do; one sync sends each once.
            let pending = try fixture.index.playEvents(state: .pending)
            #expect(Set(pending.map(\.itemId)) == [episodes[0].id, episodes[1].id, episodes[2].id, movie.id])
            try await fixture.sync()
            #expect(fixture.upstream.userData(of: episodes[0].id)?.played == true)
            #expect(fixture.upstream.userData(of: episodes[0].id)?.playCount == countBefore + 1)
            #expect(fixture.upstream.userData(of: movie.id)?.played == true)
            #expect(fixture.upstream.userData(of: episodes[1].id)?.playbackPositionTicks == runtime / 2)
            #expect(fixture.upstream.userData(of: episodes[2].id)?.playbackPositionTicks == runtime / 3)
            #expect(try fixture.index.playEvents(state: .pending).isEmpty)
            let sent = fixture.upstream.allRequests.filter { $0.method == "POST" && $0.path.contains("PlayedItems") }
            #expect(sent.count == 2)
            try await fixture.sync()
            let sentAgain = fixture.upstream.allRequests.filter {
                $0.method == "POST" && $0.path.contains("PlayedItems")
            }
            #expect(sentAgain.count == 2)
            #expect(fixture.upstream.userData(of: episodes[0].id)?.playCount == countBefore + 1)
        }
    }

    @Test func withoutAPasswordEverySignInIsRefusedAndOnlyLoopbackIsServed() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            #expect(throws: ServeError.self) {
                try MediaServe(
                    options: ServeOptions(root: fixture.root, config: fixture.config, host: "0.0.0.0", port: 0))
            }
            try await fixture.serving { http in
                let empty = try await http.signIn("demo", "")
                #expect(empty.status == 401)
                let right = try await http.signIn("demo", ServeFixture.password)
                #expect(right.status == 401)
                let info = try await http.send("GET", "/System/Info/Public")
                #expect(info.status == 200)
            }
        }
    }

    @Test func theServerIdIsKeptInTheRoot() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            let first = try MediaServe(options: ServeOptions(root: fixture.root, config: fixture.config, port: 0))
            let second = try MediaServe(options: ServeOptions(root: fixture.root, config: fixture.config, port: 0))
            #expect(first.serverId == second.serverId)
            #expect(first.serverId.count == 32)
            let stored = try String(contentsOfFile: fixture.root.stateDirectory + "/serve-id", encoding: .utf8)
            #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == first.serverId)
        }
    }

    @Test func thePasswordIsAKeptSaltedHashReadableByTheOwnerOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-pw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = ConfigDirectory(path: folder.path)
        #expect(throws: ServeError.self) { try MediaServe.setPassword("pw", user: nil, config: config) }
        try MediaServe.setPassword("s3cret", user: "Alice", config: config)
        let path = folder.path + "/" + ServePassword.fileName
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains("s3cret"))
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        let stored = ServePassword.load(from: config)
        #expect(stored?.rounds ?? 0 >= 200_000)
        #expect(stored?.accepts(user: "alice", password: "s3cret") == true)
        #expect(stored?.accepts(user: "alice", password: "s3cret ") == false)
        #expect(stored?.accepts(user: "bob", password: "s3cret") == false)
    }
}
