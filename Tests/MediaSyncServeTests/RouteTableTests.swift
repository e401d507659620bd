import MediaSyncServe
import Testing

@Suite struct RouteTableTests {
    @Test(arguments: [
        ("GET", "/System/Info/Public", RouteMatch.found(.systemInfoPublic)),
        ("GET", "/system/info/public", .found(.systemInfoPublic)),
        ("POST", "/System/Ping", .found(.ping)),
        ("GET", "/System/Ping", .found(.ping)),
        ("POST", "/users/authenticatebyname", .found(.authenticateByName)),
        ("GET", "/Users/AuthenticateByName", .methodNotAllowed(allowed: ["POST"])),
        ("GET", "/Users/Me", .found(.currentUser)),
        ("GET", "/Users/Public", .found(.publicUsers)),
        ("GET", "/Users/abc", .found(.user(id: "abc"))),
        ("GET", "/Users/u1/Views", .found(.views(userId: "u1"))),
        ("GET", "/UserViews", .found(.views(userId: nil))),
        ("GET", "/Users/u1/Items/Latest", .found(.latest(userId: "u1"))),
        ("GET", "/Users/u1/Items/Resume", .found(.resume(userId: "u1"))),
        ("GET", "/Users/u1/Items/i1", .found(.item(id: "i1", userId: "u1"))),
        ("GET", "/Items/Latest", .found(.latest(userId: nil))),
        ("GET", "/Items/i1", .found(.item(id: "i1", userId: nil))),
        ("DELETE", "/Items/i1", .methodNotAllowed(allowed: ["GET", "HEAD"])),
        ("POST", "/Items/i1/PlaybackInfo", .found(.playbackInfo(id: "i1"))),
        ("GET", "/Videos/i1/stream", .found(.stream(id: "i1", anonymous: true))),
        ("GET", "/Videos/i1/stream.mkv", .found(.stream(id: "i1", anonymous: true))),
        ("HEAD", "/Audio/i1/stream.mp3", .found(.stream(id: "i1", anonymous: true))),
        ("GET", "/Audio/i1/universal", .found(.stream(id: "i1", anonymous: false))),
        ("GET", "/Items/i1/Download", .found(.download(id: "i1"))),
        ("GET", "/Items/i1/Images/Primary", .found(.image(id: "i1", type: "Primary", index: nil))),
        ("GET", "/Items/i1/Images/Backdrop/0", .found(.image(id: "i1", type: "Backdrop", index: 0))),
        (
            "GET", "/Videos/i1/v1/Subtitles/2/Stream.srt",
            .found(.subtitle(id: "i1", mediaSourceId: "v1", index: 2, format: "srt"))
        ),
        (
            "GET", "/Videos/i1/v1/Subtitles/2/0/Stream.srt",
            .found(.subtitle(id: "i1", mediaSourceId: "v1", index: 2, format: "srt"))
        ),
        ("GET", "/Videos/i1/v1/Subtitles/2/0/Stream", .notFound),
        ("POST", "/UserPlayedItems/i1", .found(.playedItem(id: "i1", userId: nil))),
        ("DELETE", "/Users/u1/PlayedItems/i1", .found(.playedItem(id: "i1", userId: "u1"))),
        ("POST", "/UserItems/i1/UserData", .found(.userData(id: "i1", userId: nil))),
        ("GET", "/Users/u1/Items/i1/UserData", .found(.userData(id: "i1", userId: "u1"))),
        ("GET", "/UserItems/Resume", .found(.resume(userId: nil))),
        ("GET", "/Shows/NextUp", .found(.nextUp)),
        ("POST", "/PlayingItems/i1", .found(.playingItem(id: "i1", userId: nil, report: .start))),
        ("DELETE", "/Users/u1/PlayingItems/i1", .found(.playingItem(id: "i1", userId: "u1", report: .stop))),
        ("POST", "/playingitems/i1/progress", .found(.playingItem(id: "i1", userId: nil, report: .progress))),
        ("GET", "/Items/i1/Intros", .found(.extras(id: "i1", userId: nil, kind: .intros))),
        ("GET", "/users/u1/items/i1/localtrailers", .found(.extras(id: "i1", userId: "u1", kind: .localTrailers))),
        ("GET", "/Items/i1/SpecialFeatures", .found(.extras(id: "i1", userId: nil, kind: .specialFeatures))),
        ("GET", "/Shows/s1/Seasons", .found(.seasons(seriesId: "s1"))),
        ("GET", "/Shows/s1/Episodes", .found(.episodes(seriesId: "s1"))),
        ("POST", "/Sessions/Playing/Stopped", .found(.playingStopped)),
        ("POST", "/Sessions/Capabilities/Full", .found(.capabilities)),
        ("GET", "/Branding/Css.css", .found(.brandingCss)),
        ("GET", "/Library/MediaFolders", .notFound),
        ("GET", "/Items/a%2Fb", .found(.item(id: "a/b", userId: nil))),
    ])
    func matches(method: String, path: String, expected: RouteMatch) {
        #expect(RouteTable.match(method: method, path: path) == expected)
    }

    @Test func anonymousRoutesAreJellyfinsAnonymousOnes() {
        #expect(ServeRoute.systemInfoPublic.isAnonymous)
        #expect(ServeRoute.image(id: "x", type: "Primary", index: nil).isAnonymous)
        #expect(!ServeRoute.systemInfo.isAnonymous)
        #expect(!ServeRoute.stream(id: "x", anonymous: false).isAnonymous)
        #expect(ServeRoute.stream(id: "x", anonymous: true).isAnonymous)
        #expect(!ServeRoute.items(userId: nil).isAnonymous)
    }
}

@Suite struct ByteRangeTests {
    @Test(
        arguments: [
            (nil, 100, ByteRange.whole),
            ("bytes=0-9", 100, .partial(first: 0, last: 9)),
            ("bytes=90-", 100, .partial(first: 90, last: 99)),
            ("bytes=-10", 100, .partial(first: 90, last: 99)),
            ("bytes=-1000", 100, .partial(first: 0, last: 99)),
            ("bytes=50-1000", 100, .partial(first: 50, last: 99)),
            ("bytes=100-", 100, .unsatisfiable),
            ("bytes=100-200", 100, .unsatisfiable),
            ("bytes=9-5", 100, .unsatisfiable),
            ("bytes=-0", 100, .unsatisfiable),
            ("bytes=0-1,5-6", 100, .whole),
            ("items=0-1", 100, .whole),
            ("bytes=a-b", 100, .whole),
            ("bytes=0-", 0, .unsatisfiable),
            ("BYTES=1-2", 100, .partial(first: 1, last: 2)),
        ] as [(String?, Int64, ByteRange)])
    func parses(header: String?, size: Int64, expected: ByteRange) {
        #expect(ByteRange.parse(header, size: size) == expected)
    }
}

@Suite struct AuthorizationTests {
    @Test func readsTheMediaBrowserHeader() {
        let header =
            #"MediaBrowser Client="Jellyfin Web", Device="Firefox", DeviceId="d%201", Version="10.10.7", Token="abc""#
        let read = ClientAuthorization.read(headers: ["authorization": header], query: RequestQuery(nil))
        #expect(
            read
                == ClientAuthorization(
                    token: "abc", client: "Jellyfin Web", device: "Firefox", deviceId: "d 1", version: "10.10.7"))
    }

    @Test(
        arguments: [
            (["x-emby-authorization": #"MediaBrowser Client="c", Token="t1""#], "", "t1"),
            (["authorization": #"Emby Token="t2""#], "", "t2"),
            (["x-emby-token": "t3"], "", "t3"),
            (["x-mediabrowser-token": "t4"], "", "t4"),
            ([:], "api_key=t5", "t5"),
            ([:], "ApiKey=t6", "t6"),
            ([:], "apikey=t7", "t7"),
            (["authorization": "Bearer zzz"], "", nil),
            (["authorization": #"MediaBrowser Client="c""#, "x-emby-token": "t8"], "", "t8"),
        ] as [([String: String], String, String?)])
    func findsTheToken(headers: [String: String], query: String, token: String?) {
        #expect(ClientAuthorization.read(headers: headers, query: RequestQuery(query)).token == token)
    }
}

@Suite struct RequestQueryTests {
    @Test func keysAreCaseInsensitiveAndListsComeBothWays() {
        let query = RequestQuery("ids=a,b&Ids=c&SortBy=SortName%2CDateCreated&searchTerm=the+pioneer&limit=5")
        #expect(query.list("IDS") == ["a", "b", "c"])
        #expect(query.list("sortby") == ["SortName", "DateCreated"])
        #expect(query.string("SearchTerm") == "the pioneer")
        #expect(query.int("Limit") == 5)
        #expect(query.bool("Recursive") == nil)
        #expect(RequestQuery("Recursive=True").bool("recursive") == true)
    }
}
