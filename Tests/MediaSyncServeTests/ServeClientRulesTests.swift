import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestServer
import Testing

@testable import MediaSyncServe

/// What a long-lived client relies on: its token outlives a restart, "latest" is grouped as Jellyfin groups it,
/// another user's items are refused, and a web client gets the subtitles it can show.
@Suite struct ServeClientRulesTests {
    static func library() -> TestLibrary {
        TestLibrary(movies: 2, series: 1, seasonsPerSeries: 1, episodesPerSeason: 3, mediaSize: 4_000, seed: 67)
    }

    static func signedIn(_ http: ServeHTTP, deviceId: String = "device-1") async throws -> String {
        let reply = try await http.send(
            "POST", "/Users/AuthenticateByName", json: ["Username": "demo", "Pw": ServeFixture.password],
            deviceId: deviceId)
        return reply.object["AccessToken"] as? String ?? ""
    }

    @Test func aTokenOutlivesARestartUntilLogoutOrANewPassword() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            var kept = ""
            var other = ""
            try await fixture.serving { http in
                kept = try await Self.signedIn(http)
                other = try await Self.signedIn(http, deviceId: "device-2")
                #expect(kept.count == 32 && other.count == 32 && kept != other)
                #expect(try await http.send("GET", "/Users/Me", token: kept).status == 200)
            }
            // Only a digest of each token is stored, readable by the owner only.
            let path = fixture.config.path + "/serve-tokens.json"
            let stored = try String(contentsOfFile: path, encoding: .utf8)
            #expect(!stored.contains(kept) && !stored.contains(other))
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?
                .intValue
            #expect(mode == 0o600)

            try await fixture.serving { http in
                #expect(try await http.send("GET", "/Users/Me", token: kept).status == 200)
                // Signing in again from the same device replaces that device's token.
                let renewed = try await Self.signedIn(http, deviceId: "device-2")
                #expect(try await http.send("GET", "/Users/Me", token: other).status == 401)
                #expect(try await http.send("GET", "/Users/Me", token: renewed).status == 200)
                other = renewed
                // Logging out forgets that token only.
                #expect(try await http.send("POST", "/Sessions/Logout", token: kept).status == 204)
                #expect(try await http.send("GET", "/Users/Me", token: kept).status == 401)
                #expect(try await http.send("GET", "/Users/Me", token: other).status == 200)
            }
            // A new password signs every client out.
            try MediaServe.setPassword("another one", user: nil, config: fixture.config)
            try await fixture.serving { http in
                let reply = try await http.send("GET", "/Users/Me", token: other)
                #expect(reply.status == 401)
            }
        }
    }

    @Test func latestGroupsASeriesNewEpisodesAsJellyfinDoes() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let library = fixture.library
            let series = library.series[0]
            let episodes = library.episodes.filter { $0.seriesId == series.id }
            try await fixture.serving { http in
                let token = try await Self.signedIn(http)
                let unplayed = episodes.filter { !(fixture.upstream.userData(of: $0.id)?.played ?? false) }
                #expect(unplayed.count >= 2)
                let grouped = try await http.send("GET", "/Items/Latest?Limit=20", token: token)
                let list = grouped.json as? [[String: Any]] ?? []
                let seriesEntry = list.first { $0["Id"] as? String == series.id }
                #expect(seriesEntry?["Type"] as? String == "Series")
                #expect((seriesEntry?["ChildCount"] as? NSNumber)?.intValue == unplayed.count)
                #expect(!list.contains { $0["Type"] as? String == "Episode" })
                let movieIds = Set(list.filter { $0["Type"] as? String == "Movie" }.compactMap { $0["Id"] as? String })
                #expect(!movieIds.isEmpty)

                let flat = try await http.send("GET", "/Items/Latest?GroupItems=false", token: token)
                let flatIds = Set((flat.json as? [[String: Any]] ?? []).compactMap { $0["Id"] as? String })
                #expect(Set(unplayed.map(\.id)).isSubset(of: flatIds))
                #expect(!flatIds.contains(series.id))

                // With one new episode left, that episode is listed, not its series.
                for episode in unplayed.dropFirst() {
                    #expect(try await http.send("POST", "/UserPlayedItems/\(episode.id)", token: token).status == 200)
                }
                let one = try await http.send("GET", "/Items/Latest", token: token)
                let oneList = one.json as? [[String: Any]] ?? []
                #expect(oneList.contains { $0["Id"] as? String == unplayed[0].id })
                #expect(!oneList.contains { $0["Id"] as? String == series.id })
            }
        }
    }

    @Test func anotherUsersItemsAreForbidden() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let own = fixture.library.userId
            let dashed = [8, 4, 4, 4, 12].reduce(into: (parts: [String](), rest: Substring(own))) { state, length in
                state.parts.append(String(state.rest.prefix(length)))
                state.rest = state.rest.dropFirst(length)
            }.parts.joined(separator: "-")
            let stranger = String(repeating: "e", count: 32)
            try await fixture.serving { http in
                let token = try await Self.signedIn(http)
                #expect(try await http.send("GET", "/Users/\(own)/Items", token: token).status == 200)
                #expect(try await http.send("GET", "/Users/\(dashed.uppercased())/Items", token: token).status == 200)
                #expect(try await http.send("GET", "/Users/\(stranger)/Items", token: token).status == 403)
                #expect(try await http.send("GET", "/Items?userId=\(stranger)", token: token).status == 403)
                #expect(try await http.send("GET", "/Users/\(stranger)/Items/Latest", token: token).status == 403)
                #expect(try await http.send("GET", "/Users/\(stranger)/Items", token: nil).status == 401)
            }
        }
    }

    @Test func aWebClientGetsSubRipAsWebVTT() async throws {
        try await ServeFixture.with(Self.library()) { fixture in
            try fixture.selectEverything()
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let movie = fixture.library.movies[0]
            try await fixture.serving { http in
                let token = try await Self.signedIn(http)
                // jellyfin-web's device profile takes WebVTT (and ASS/SSA) as external files, not SubRip.
                let profile: [String: Any] = [
                    "SubtitleProfiles": [
                        ["Format": "vtt", "Method": "External"], ["Format": "ass", "Method": "External"],
                        ["Format": "srt", "Method": "Embed"],
                    ]
                ]
                let info = try await http.send(
                    "POST", "/Items/\(movie.id)/PlaybackInfo", token: token, json: ["DeviceProfile": profile])
                let sources = info.object["MediaSources"] as? [[String: Any]] ?? []
                let streams = sources.first?["MediaStreams"] as? [[String: Any]] ?? []
                let subtitle = streams.first { $0["DeliveryMethod"] as? String == "External" }
                let url = subtitle?["DeliveryUrl"] as? String ?? "/missing"
                #expect(url.hasSuffix("/Stream.vtt"))
                let vtt = try await http.send("GET", url)
                #expect(vtt.status == 200)
                #expect(vtt.headers["content-type"]?.hasPrefix("text/vtt") == true)
                #expect(vtt.text.hasPrefix("WEBVTT\n"))
                #expect(vtt.text.contains("00:00:05.000 --> 00:00:08.000\nmediasync test subtitle"))
                #expect(!vtt.text.contains(","))
                // Without a profile the held format is offered, and served as it is.
                let plain = try await http.send("GET", "/Items/\(movie.id)/PlaybackInfo", token: token)
                let plainStreams =
                    (plain.object["MediaSources"] as? [[String: Any]])?.first?["MediaStreams"] as? [[String: Any]] ?? []
                let plainURL =
                    plainStreams.first { $0["DeliveryMethod"] as? String == "External" }?["DeliveryUrl"] as? String
                #expect(plainURL?.hasSuffix("/Stream.srt") == true)
                let srt = try await http.send("GET", plainURL ?? "/missing")
                #expect(srt.text.contains("00:00:05,000 --> 00:00:08,000"))
                // A format nothing is made in is not found.
                let ass = url.replacingOccurrences(of: "Stream.vtt", with: "Stream.ass")
                #expect(try await http.send("GET", ass).status == 404)
            }
        }
    }

    @Test(arguments: [
        (
            "1\r\n00:00:01,000 --> 00:00:04,000\r\nHello\r\n\r\n2\r\n00:01:05,5 --> 00:01:08,250 X1:10\r\nTwo\r\nlines\r\n",
            "WEBVTT\n\n1\n00:00:01.000 --> 00:00:04.000\nHello\n\n2\n00:01:05.500 --> 00:01:08.250\nTwo\nlines\n"
        ),
        // A byte-order mark, no cue numbers, single-digit hours, extra blank lines.
        (
            "\u{FEFF}0:00:01,000 --> 0:00:02,000\nA\n\n\n\n0:00:03,000 --> 0:00:04,000\nB\n",
            "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nA\n\n00:00:03.000 --> 00:00:04.000\nB\n"
        ),
        // A block without a timing line is dropped; an arrow in the text is dropped from the cue.
        (
            "garbage\n\n1\n00:00:01,000 --> 00:00:02,000\nok --> not\nfine\n",
            "WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nfine\n"
        ),
        ("", "WEBVTT\n"),
    ])
    func subRipBecomesWebVTT(_ input: String, _ expected: String) {
        #expect(SubtitleText.webVTT(fromSubRip: input) == expected)
    }

    @Test func latestGroupingTable() {
        let parents = ["e1": "s1", "e2": "s1", "e3": "s2", "a1": "album", "a2": "album"]
        func group(_ ids: [String], _ grouped: Bool = true, _ limit: Int = 20) -> [LatestItems.Group] {
            LatestItems.group(ids, groupItems: grouped, limit: limit) { parents[$0] }
        }
        #expect(
            group(["e1", "m1", "e2", "e3"]) == [
                .init(container: "s1", items: ["e1", "e2"]), .init(container: nil, items: ["m1"]),
                .init(container: "s2", items: ["e3"]),
            ])
        #expect(group(["e1", "e2"], false).map(\.items) == [["e1"], ["e2"]])
        // The limit counts groups, and the walk stops once it is reached (as `GetLatestItems` breaks).
        #expect(
            group(["e1", "m1", "e2", "e3"], true, 2) == [
                .init(container: "s1", items: ["e1"]), .init(container: nil, items: ["m1"]),
            ])
        let single = LatestItems.Group(container: "s2", items: ["e3"])
        #expect(LatestItems.answered(single, containerIsAlbum: false) == ("e3", 0))
        #expect(LatestItems.answered(.init(container: "album", items: ["a1"]), containerIsAlbum: true) == ("album", 1))
        #expect(
            LatestItems.answered(.init(container: "s1", items: ["e1", "e2"]), containerIsAlbum: false) == ("s1", 2))
    }
}
