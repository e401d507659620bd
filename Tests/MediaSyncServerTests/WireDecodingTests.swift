import Foundation
import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer
import Testing

/// One test per recorded response in `Fixtures/server/decode/` (copies of `../shared/jellyfin-api/`), checking
/// the fields a mirror relies on.
@Suite struct WireDecodingTests {
    typealias Items = QueryResult<BaseItem>

    static let pioneerOne = "05991932707d2c668148d8ed19cdb544"
    static let demoServer = "713dc3fe952b438fa70ed35e4ef0525a"

    /// Every file here has a test below; a new recording needs one too.
    static let covered: Set<String> = [
        "jellyash/quickconnect-enabled.json", "jellyash/shows-episodes-by-seasonid.json", "jellyash/shows-seasons.json",
        "jellyash/system-info-public.json", "jellyash/system-info.json", "jellyash/users-authenticatebyname.json",
        "jellyash/users-items-empty-result.json", "jellyash/users-items-episode-search.json",
        "jellyash/users-items-series-search.json",
        "jellyfin-server-testdata/MediaSourceInfo-mkv-h264-ac3-srt-2600k.json",
        "jellyfin-server-testdata/MediaSourceInfo-mp4-h264-aac-srt-2600k.json",
        "mediux-posters/get-movie.json", "mediux-posters/get-show.json", "mediux-posters/list-episodes.json",
        "mediux-posters/list-libraries.json", "mediux-posters/list-movies.json", "mediux-posters/list-seasons.json",
        "mediux-posters/list-shows.json", "music-assistant/infest.json", "music-assistant/thrown_away.json",
    ]

    /// The first item of the listing in `file`, which claims `total` items in all.
    static func firstItem(of file: String, claiming total: Int, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> BaseItem
    {
        let page = try DecodeFixture.decode(Items.self, file)
        #expect(page.totalRecordCount == total, sourceLocation: sourceLocation)
        return try #require(page.items.first, sourceLocation: sourceLocation)
    }

    @Test func everyRecordingHasADecodeTest() {
        let files = DecodeFixture.allFiles()
        #expect(files.count == 20)
        #expect(Set(files) == WireDecodingTests.covered)
    }

    // MARK: jellyash (demo.jellyfin.org, 10.8.10)

    @Test func quickConnectEnabledIsABareBoolean() throws {
        let value = try DecodeFixture.json("jellyash/quickconnect-enabled.json")
        #expect(value == .bool(false))
        #expect(try DecodeFixture.decode(Bool.self, "jellyash/quickconnect-enabled.json") == false)
    }

    @Test func episodesBySeasonId() throws {
        let page = try DecodeFixture.decode(Items.self, "jellyash/shows-episodes-by-seasonid.json")
        #expect(page.totalRecordCount == 2)
        #expect(page.startIndex == 0)
        #expect(page.items.map(\.id) == ["a20cc5741f4fe20413c23fa2b48920fc", "26e5d3268d21165df762a033b8b116f6"])
        let first = try #require(page.items.first)
        #expect(first.name == "Earthfall")
        #expect(first.type == "Episode")
        #expect(first.serverId == WireDecodingTests.demoServer)
        #expect(first.indexNumber == 1)
        #expect(first.parentIndexNumber == 1)
        #expect(first.seriesId == WireDecodingTests.pioneerOne)
        #expect(first.seriesName == "Pioneer One")
        #expect(first.seasonId == "0bf82b6ecd61047b8dea0eb0035ad364")
        #expect(first.seasonName == "Season 1")
        #expect(first.container == "mov,mp4,m4a,3gp,3g2,mj2")
        #expect(first.runTimeTicks == 3_240_349_952)
        #expect(first.isFolder == false)
        #expect(first.locationType == "FileSystem")
        #expect(!first.isVirtual)
        #expect(first.mediaType == "Video")
        #expect(first.imageTags == ["Primary": "c79fb9025224f592bd39f06aaaaf0564"])
        #expect(first.backdropImageTags.isEmpty)
        #expect(first.parentBackdropItemId == WireDecodingTests.pioneerOne)
        #expect(first.parentBackdropImageTags == ["b8f1332f5ca6e72d8129c4bceadd100b"])
        #expect(first.seriesPrimaryImageTag == "63bd1ece25c9fdb2d91b6b4d48ae07f1")
        // Fields only sent when asked for are absent here.
        #expect(first.etag == nil)
        #expect(first.path == nil)
        #expect(first.mediaSources == nil)
        #expect(first.raw["ChannelId"] == .null)
        let userData = try #require(first.userData)
        #expect(userData.playCount == 17)
        #expect(userData.isFavorite == true)
        #expect(userData.played == false)
        #expect(userData.playbackPositionTicks == 0)
        #expect(userData.lastPlayedDate == "2023-05-15T15:10:02.3333918Z")
        #expect(page.items[1].userData?.played == true)
        #expect(page.items[1].indexNumber == 2)
    }

    @Test func seasonsWithRequestedFields() throws {
        let season = try Self.firstItem(of: "jellyash/shows-seasons.json", claiming: 1)
        #expect(season.id == "0bf82b6ecd61047b8dea0eb0035ad364")
        #expect(season.type == "Season")
        #expect(season.name == "Season 1")
        #expect(season.indexNumber == 1)
        #expect(season.etag == "7bbc26ed572a7ca4ca5ca2278c4b59dd")
        #expect(season.dateCreated == "2019-11-29T03:46:20.9183807Z")
        #expect(season.path == "/media/TV Shows/Pioneer One (2010)/Season 01")
        #expect(season.parentId == WireDecodingTests.pioneerOne)
        #expect(season.seriesId == WireDecodingTests.pioneerOne)
        #expect(season.isFolder == true)
        #expect(season.providerIds.isEmpty)
        #expect(season.userData?.unplayedItemCount == 1)
        #expect(season.imageTags["Primary"] == "792441701f42e7ddbd69888686eae67c")
        // JSON escapes (\u002B) are decoded.
        #expect(
            season.raw["ImageBlurHashes"]?["Primary"]?["792441701f42e7ddbd69888686eae67c"]
                == .string("djMYf^^+ODRj=Gs,XSR+0LR5WBR+xuWEVta{OsWYsAba"))
    }

    @Test func publicSystemInfo() throws {
        let info = try DecodeFixture.decode(PublicSystemInfo.self, "jellyash/system-info-public.json")
        #expect(info.serverName == "Stable Demo")
        #expect(info.version == "10.8.10")
        #expect(info.id == WireDecodingTests.demoServer)
        #expect(info.productName == "Jellyfin Server")
        #expect(info.localAddress == "http://172.17.0.2:8096/stable")
        #expect(info.operatingSystem == "Linux")
        #expect(info.startupWizardCompleted == true)
    }

    @Test func authenticatedSystemInfo() throws {
        let info = try DecodeFixture.decode(PublicSystemInfo.self, "jellyash/system-info.json")
        #expect(info.version == "10.8.10")
        #expect(info.id == WireDecodingTests.demoServer)
        #expect(info.productName == nil)
        #expect(info.raw["HasPendingRestart"] == .bool(false))
        #expect(info.raw["WebSocketPortNumber"]?.intValue == 8096)
    }

    @Test func authenticationResult() throws {
        let result = try DecodeFixture.decode(AuthenticationResult.self, "jellyash/users-authenticatebyname.json")
        #expect(result.accessToken == "e34cb064daa54795b6fd85337fff3919")
        #expect(result.serverId == WireDecodingTests.demoServer)
        #expect(result.user.id == "a076a5bfc9034f379f5889bc6dafc77b")
        #expect(result.user.name == "demo")
        #expect(result.user.serverId == WireDecodingTests.demoServer)
        #expect(result.user.hasPassword == false)
        let policy = try #require(result.user.policy)
        #expect(policy.isAdministrator == false)
        #expect(policy.isHidden == true)
        #expect(policy.enableContentDownloading == true)
        #expect(policy.enableMediaPlayback == true)
        #expect(result.sessionInfo["DeviceId"] == .string("482716ab-8750-436c-971b-3012e56338f5"))
        #expect(result.sessionInfo["UserId"] == .string("a076a5bfc9034f379f5889bc6dafc77b"))
        // The token never shows in a description or dump.
        var dumped = ""
        dump(result, to: &dumped)
        for text in [result.description, String(describing: result), String(reflecting: result), dumped] {
            #expect(!text.contains("e34cb064daa54795b6fd85337fff3919"))
        }
        #expect(result.description.contains("demo"))
    }

    @Test func emptyResult() throws {
        let page = try DecodeFixture.decode(Items.self, "jellyash/users-items-empty-result.json")
        #expect(page.items.isEmpty)
        #expect(page.totalRecordCount == 0)
        #expect(page.startIndex == 0)
    }

    @Test func episodeSearchWithAFolder() throws {
        let page = try DecodeFixture.decode(Items.self, "jellyash/users-items-episode-search.json")
        #expect(page.items.map(\.type) == ["Folder", "Episode"])
        let folder = page.items[0]
        #expect(folder.name == "Pioneer One (2010) - S01E02 - The Man From Mars")
        #expect(folder.isFolder == true)
        #expect(folder.userData?.unplayedItemCount == 0)
        #expect(folder.userData?.played == true)
        #expect(folder.mediaType == nil)
        let episode = page.items[1]
        #expect(episode.name == "The Man From Mars")
        #expect(episode.indexNumber == 2)
        #expect(episode.parentIndexNumber == 1)
        #expect(episode.userData?.playCount == 12)
    }

    @Test func seriesSearch() throws {
        let series = try Self.firstItem(of: "jellyash/users-items-series-search.json", claiming: 1)
        #expect(series.id == WireDecodingTests.pioneerOne)
        #expect(series.type == "Series")
        #expect(series.name == "Pioneer One")
        #expect(series.productionYear == 2010)
        #expect(series.runTimeTicks == 17_999_998_976)
        #expect(
            series.imageTags == [
                "Primary": "63bd1ece25c9fdb2d91b6b4d48ae07f1", "Banner": "f06d9e317cb59d0f050e2fbd1fe64e54",
            ])
        #expect(series.backdropImageTags == ["b8f1332f5ca6e72d8129c4bceadd100b"])
        #expect(series.userData?.unplayedItemCount == 1)
        #expect(series.raw["Status"] == .string("Ended"))
    }

    // MARK: mediux-posters (a user's server; pretty-printed, trimmed)

    @Test func getMovieWithoutTotal() throws {
        let page = try DecodeFixture.decode(Items.self, "mediux-posters/get-movie.json")
        #expect(page.totalRecordCount == nil)
        #expect(page.startIndex == nil)
        let movie = try #require(page.items.first)
        #expect(page.items.count == 1)
        #expect(movie.id == "3fc8b00200041d83e3118646d82ba4e4")
        #expect(movie.name == "Kiki's Delivery Service")
        #expect(movie.type == "Movie")
        #expect(movie.container == "mkv")
        #expect(movie.providerIds == ["Imdb": "tt0097814", "Tmdb": "16859"])
        #expect(movie.imageTags.keys.sorted() == ["Logo", "Primary", "Thumb"])
        #expect(movie.backdropImageTags == ["a49c502b3b18219ef9337dd4bc1d4f1d"])
        #expect(movie.userData == nil)
    }

    @Test func getShow() throws {
        let show = try Self.firstItem(of: "mediux-posters/get-show.json", claiming: 1)
        #expect(show.id == "7df9cc7bbd2d497ec18b448731d3c1ec")
        #expect(show.name == "Downton Abbey")
        #expect(show.type == "Series")
        #expect(show.isFolder == true)
        #expect(show.backdropImageTags.count == 22)
        #expect(show.backdropImageTags.first == "82b68122f7fbd4c6a9930056cfdf93d0")
    }

    @Test func trimmedEpisodeListKeepsTheClaimedTotal() throws {
        let page = try DecodeFixture.decode(Items.self, "mediux-posters/list-episodes.json")
        #expect(page.totalRecordCount == 7)
        #expect(page.items.count == 3)
        #expect(page.items.map(\.indexNumber) == [1, 2, 3])
        #expect(Set(page.items.map(\.parentIndexNumber)) == [1])
        #expect(Set(page.items.compactMap(\.seasonId)) == ["759a122515cb24b264e906bb80f3f06a"])
        #expect(Set(page.items.compactMap(\.seriesId)) == ["7df9cc7bbd2d497ec18b448731d3c1ec"])
        #expect(page.items.allSatisfy { $0.container == "mkv" && $0.type == "Episode" })
    }

    @Test func libraries() throws {
        let page = try DecodeFixture.decode(Items.self, "mediux-posters/list-libraries.json")
        #expect(page.totalRecordCount == 6)
        #expect(
            page.items.map(\.collectionType) == ["boxsets", "books", "movies", "homevideos", "playlists", "tvshows"])
        let movies = try #require(page.items.first { $0.collectionType == "movies" })
        #expect(movies.id == "f137a2dd21bbc1b99aa5c0f6bf02a805")
        #expect(movies.type == "CollectionFolder")
        #expect(movies.etag == "976d310cca18bf8aaa7b0c730ec14225")
        #expect(movies.path == "/config/root/default/Movies")
        #expect(movies.dateCreated == "2024-10-13T11:20:43.1487092Z")
        #expect(movies.parentId == "e9d5075a555c1cbc394eec4cef295274")
        #expect(movies.canDownload == false)
        #expect(movies.mediaType == "Unknown")
        #expect(page.items.first { $0.collectionType == "playlists" }?.type == "ManualPlaylistsFolder")
    }

    @Test func movies() throws {
        let page = try DecodeFixture.decode(Items.self, "mediux-posters/list-movies.json")
        #expect(page.totalRecordCount == nil)
        #expect(page.items.map(\.name) == ["Despicable Me", "Porco Rosso", "Kiki's Delivery Service"])
        #expect(page.items[0].id == "f6890000cdb1434c4ab3208fdf02da30")
        #expect(page.items[0].container == "mov,mp4,m4a,3gp,3g2,mj2")
        #expect(page.items[0].providerIds["TmdbCollection"] == "86066")
        #expect(page.items.allSatisfy { $0.type == "Movie" && $0.isFolder == false && $0.mediaType == "Video" })
    }

    @Test func seasonsWithSpecials() throws {
        let page = try DecodeFixture.decode(Items.self, "mediux-posters/list-seasons.json")
        #expect(page.totalRecordCount == 7)
        let specials = try #require(page.items.first)
        #expect(specials.name == "Specials")
        #expect(specials.indexNumber == 0)
        #expect(page.items.map(\.indexNumber).prefix(3) == [0, 1, 2])
        #expect(page.items.allSatisfy { $0.type == "Season" && $0.seriesId == "7df9cc7bbd2d497ec18b448731d3c1ec" })
    }

    @Test func shows() throws {
        let page = try DecodeFixture.decode(Items.self, "mediux-posters/list-shows.json")
        #expect(page.items.map(\.name) == ["Big Fat Quiz", "The Green Planet", "Downton Abbey"])
        #expect(page.items.allSatisfy { $0.type == "Series" && $0.isFolder == true })
        #expect(page.items[0].providerIds["Tvdb"] == "81068")
        #expect(page.items[1].backdropImageTags == ["4cadb2acb1b000f724ed8138439a77ae"])
    }

    // MARK: music-assistant (a real item with MediaSources)

    @Test func trackWithMediaSources() throws {
        let item = try DecodeFixture.decode(BaseItem.self, "music-assistant/thrown_away.json")
        #expect(item.id == "b5319fb11cde39fca2023184fcfa9862")
        #expect(item.type == "Audio")
        #expect(item.canDownload == true)
        #expect(item.container == "mp3")
        #expect(item.indexNumber == 0)
        #expect(item.mediaType == "Audio")
        #expect(item.imageTags.isEmpty)
        let sources = try #require(item.mediaSources)
        #expect(sources.count == 1)
        let source = sources[0]
        #expect(source.id == "b5319fb11cde39fca2023184fcfa9862")
        #expect(source.name == "11 Thrown Away")
        #expect(source.path == "/media/music/Papa Roach/Infest/11 Thrown Away.m4a")
        #expect(source.container == "mp3")
        #expect(source.size == 11_283_443)
        #expect(source.etag == "d76cb3d88267e21a9a5a7b43e5981c99")
        #expect(source.protocol == "File")
        #expect(source.type == "Default")
        #expect(source.isRemote == false)
        #expect(source.supportsDirectPlay == true)
        #expect(source.runTimeTicks == 5_777_763_270)
        #expect(source.bitrate == 156_232)
        #expect(source.defaultAudioStreamIndex == 0)
        let stream = try #require(source.mediaStreams.first)
        #expect(stream.type == "Audio")
        #expect(stream.index == 0)
        #expect(stream.codec == "mp3")
        #expect(stream.displayTitle == "MP3 - Stereo")
        #expect(stream.isExternal == false)
        #expect(stream.isDefault == false)
        #expect(stream.isForced == false)
        #expect(item.mediaStreams?.first == stream)
    }

    @Test func albumWithEtagAndPath() throws {
        let item = try DecodeFixture.decode(BaseItem.self, "music-assistant/infest.json")
        #expect(item.id == "70b7288088b42d318f75dbcc41fd0091")
        #expect(item.type == "MusicAlbum")
        #expect(item.etag == "ecf97edd78eb2b76a30ae2adba6b66e5")
        #expect(item.dateCreated == "2023-12-11T12:10:40.7607527Z")
        #expect(item.path == "/media/music/Papa Roach/Infest")
        #expect(item.parentId == "e439648e08ade14e27d5de48fa97c88e")
        #expect(item.canDownload == false)
        #expect(item.providerIds.count == 3)
        #expect(item.raw["NormalizationGain"]?.intValue == -11)
        #expect(item.userData?.key == "MusicAlbum-MusicBrainzReleaseGroup-0193355a-cdfb-3936-afd2-44d651eb006d")
    }

    // MARK: jellyfin-server-testdata (numeric enums)

    @Test func mkvSourceWithNumericStreamTypes() throws {
        let source = try DecodeFixture.decode(
            MediaSource.self, "jellyfin-server-testdata/MediaSourceInfo-mkv-h264-ac3-srt-2600k.json")
        #expect(source.id == "a766d122b58e45d9492d17af77748bf5")
        #expect(source.path == "/Media/MyVideo-720p.mkv")
        #expect(source.container == "mkv")
        #expect(source.size == 835_317_696)
        #expect(source.etag == "579a34c6d5dfb21d81539a51220b6a23")
        #expect(source.runTimeTicks == 25_801_230_336)
        #expect(source.protocol == nil)
        #expect(source.defaultSubtitleStreamIndex == 2)
        let streams = source.mediaStreams
        #expect(streams.count == 3)
        #expect(streams.map(\.type) == ["Video", nil, "Subtitle"])
        #expect(streams.map(\.index) == [nil, 1, 2])
        #expect(streams.map(\.codec) == ["h264", "ac3", "srt"])
        let subtitle = streams[2]
        #expect(subtitle.isSubtitle)
        #expect(subtitle.language == "eng")
        #expect(subtitle.displayTitle == "En - Default")
        #expect(subtitle.isExternal == true)
        #expect(subtitle.isTextSubtitleStream == true)
        #expect(subtitle.supportsExternalStream == true)
        #expect(subtitle.isDefault == true)
        #expect(streams[0].raw["Type"] == .number(1))
    }

    @Test func mp4SourceWithCommaListContainer() throws {
        let source = try DecodeFixture.decode(
            MediaSource.self, "jellyfin-server-testdata/MediaSourceInfo-mp4-h264-aac-srt-2600k.json")
        #expect(source.container == "mov,mp4,m4a,3gp,3g2,mj2")
        #expect(source.path == "/Media/MyVideo-720p.mp4")
        #expect(source.name == "MyVideo-720p")
        #expect(source.bitrate == 2_590_008)
        #expect(source.mediaStreams.map(\.codec) == ["h264", "aac", "srt"])
        #expect(source.mediaStreams.map(\.type) == ["Video", nil, "Subtitle"])
    }

    // MARK: Round trip

    /// Every item of every listing, and every single object, encodes back to exactly what was received.
    @Test(arguments: WireDecodingTests.covered.sorted())
    func rawRoundTrip(_ file: String) throws {
        let original = try DecodeFixture.json(file)
        let encoder = JSONEncoder()
        if let items = original["Items"]?.arrayValue {
            let page = try DecodeFixture.decode(Items.self, file)
            #expect(page.items.count == items.count)
            for (item, raw) in zip(page.items, items) {
                let again = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(item))
                #expect(again == raw)
            }
        } else if file.hasPrefix("jellyfin-server-testdata/") {
            let source = try DecodeFixture.decode(MediaSource.self, file)
            #expect(try JSONDecoder().decode(JSONValue.self, from: encoder.encode(source)) == original)
        } else if file.hasPrefix("music-assistant/") {
            let item = try DecodeFixture.decode(BaseItem.self, file)
            #expect(try JSONDecoder().decode(JSONValue.self, from: encoder.encode(item)) == original)
        } else if file.contains("system-info") {
            let info = try DecodeFixture.decode(PublicSystemInfo.self, file)
            #expect(try JSONDecoder().decode(JSONValue.self, from: encoder.encode(info)) == original)
        }
    }
}
