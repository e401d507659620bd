import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

@Suite struct ServerChangeTests {
    @Test func aMovieDeletedOnTheServerIsLeftOverThenDeletedWithDelete() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try fixture.select(.movie, movie.id)
            try fixture.select(.movie, library.movies[0].id)
            _ = try await fixture.sync()
            fixture.server.updateLibrary { $0.removeItem(withId: movie.id) }
            let kept = try await fixture.sync()
            #expect(kept.gone.count == 1)
            #expect(kept.sourceErrors.isEmpty)
            #expect(kept.extraneous.contains { $0.hasPrefix("Downloads/\(movie.id)/") })
            let deleted = try await fixture.sync(delete: true)
            #expect(deleted.deleted.contains { $0.hasPrefix("Downloads/\(movie.id)/") })
            #expect(!fixture.tree().contains { $0.hasPrefix("Downloads/\(movie.id)/") })
            #expect(fixture.tree().contains { $0.hasPrefix("Downloads/\(library.movies[0].id)/") })
        }
    }

    @Test(arguments: ["/Items", "/Shows/{series}/Episodes", "/Shows/{series}/Seasons"])
    func a404FromAListingIsAFailedListingNotADeletion(_ endpoint: String) async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.series, library.series[0].id)
            try fixture.select(.movie, library.movies[0].id)
            #expect(try await fixture.sync().failed.isEmpty)
            let tree = fixture.tree()
            fixture.server.inject(
                .status(404), path: endpoint.replacingOccurrences(of: "{series}", with: library.series[0].id))
            let report = try await fixture.sync(delete: true)
            #expect(report.gone.isEmpty, "\(report.gone)")
            #expect(
                report.sourceErrors.count == 1 && report.sourceErrors.first?.contains("404") == true,
                "\(report.sourceErrors)")
            #expect(report.deleted.isEmpty && report.extraneous.isEmpty)
            #expect(fixture.tree() == tree)
        }
    }

    @Test(arguments: [false, true])
    func aDownloadRefusedWith401AsksForANewSignInOnlyWhenTheTokenIsRefusedToo(_ revoked: Bool) async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try fixture.select(.movie, movie.id)
            let server = fixture.server
            fixture.server.inject(.status(401), path: "/Items/\(movie.mediaSources[0].id)/Download") {
                // The token revoked while the run downloads: `/Users/Me` refuses it too.
                if revoked { server.updateLibrary { $0.accessToken = "revoked" } }
            }
            let report = try await fixture.sync()
            // `/Users/Me` answers 200 while the token holds: a refused file, reported (exit 3), the sign-in kept.
            #expect(report.needsSignIn == revoked)
            #expect(!fixture.server.requests(to: "/Users/Me").isEmpty)
            #expect(
                report.failed.map(\.path).contains("Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mp4"))
            #expect(report.failed.first?.message.contains("401") == true)
            if !revoked {
                #expect(!(try await fixture.sync().needsSignIn))
            }
        }
    }

    @Test func changedMediaOnTheServerIsFetchedAgainAndReplacedAtomically() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[0]
            try fixture.select(.movie, movie.id)
            _ = try await fixture.sync()
            let source = movie.mediaSources[0].id
            fixture.server.updateLibrary { $0.changeMediaContent(ofMediaSourceId: source) }
            let report = try await fixture.sync()
            let path = "Downloads/\(movie.id)/\(movie.id)-\(source).mkv"
            #expect(report.downloaded.contains(path))
            let same = fixture.bytes(path) == fixture.server.library.mediaBytes(forMediaSourceId: source)
            #expect(same)
            #expect(report.written.contains("Downloads/\(movie.id)/metadata.json"))
        }
    }

    /// An item saved again on the server (a subtitle downloader replaced its subtitle) fetches its external
    /// subtitles again, never its media; an unchanged item fetches nothing.
    @Test func subtitlesFollowTheirItemsEtag() async throws {
        try await MirrorFixture.with { fixture, library in
            let movie = library.movies[1]
            try fixture.select(.movie, movie.id)
            _ = try await fixture.sync()
            let subtitle = try #require(fixture.tree().first { $0.contains(movie.id) && $0.hasSuffix(".srt") })
            let quiet = try await fixture.sync()
            #expect(quiet.downloaded.isEmpty)
            fixture.server.updateLibrary { library in
                if let index = library.items.firstIndex(where: { $0.id == movie.id }) {
                    library.items[index].etag = "saved-again"
                }
            }
            let report = try await fixture.sync()
            #expect(report.downloaded == [subtitle])
            #expect(report.written.contains("Downloads/\(movie.id)/metadata.json"))
        }
    }

    /// Library listings leave media sources out (building them is most of a listing's cost on the server); they are
    /// asked for by id only for items that are new or whose Etag changed. A no-op sync makes the server build none.
    @Test(arguments: [JellyfinProfile.v10_8, .v10_11])
    func aNoOpSyncMakesTheServerBuildNoMediaSources(profile: JellyfinProfile) async throws {
        try await MirrorFixture.with(.golden(), profile: profile) { fixture, library in
            try fixture.select(.library, library.views[0].id)
            try fixture.select(.library, library.views[1].id)
            let first = try await fixture.sync()
            #expect(first.failed.isEmpty, "\(first.failed)")
            let videos = library.items.filter { !$0.isFolder && !$0.mediaSources.isEmpty && !$0.isAlternateVersion }
            #expect(fixture.server.counters.mediaSourcesBuilt == videos.count)
            let tree = fixture.tree()
            fixture.server.counters.reset()
            let quiet = try await fixture.sync()
            #expect(quiet.changedNothing)
            #expect(fixture.server.counters.mediaSourcesBuilt == 0)
            // One item saved again: only its media sources are asked for.
            let movie = library.movies[0]
            fixture.server.updateLibrary { library in
                if let index = library.items.firstIndex(where: { $0.id == movie.id }) {
                    library.items[index].etag = "saved-again"
                }
            }
            let changed = try await fixture.sync()
            #expect(fixture.server.counters.mediaSourcesBuilt == 1)
            #expect(changed.downloaded.allSatisfy { $0.hasSuffix(".srt") })
            #expect(fixture.tree() == tree)
        }
    }

    /// The cache's media sources are loaded abridged to what planning reads; a `metadata.json` written again (a
    /// season, after one of its episodes was watched on another device) still holds every episode's whole media sources.
    @Test func aMetadataFileWrittenAgainKeepsTheWholeMediaSources() async throws {
        try await MirrorFixture.with(.golden()) { fixture, library in
            try fixture.select(.library, library.views[1].id)
            let first = try await fixture.sync()
            #expect(first.failed.isEmpty, "\(first.failed)")
            let seasonFile = try #require(
                fixture.tree().first { path in
                    path.hasSuffix("/metadata.json") && path.contains("/Season-")
                        && ((fixture.json(path)?["episodes"] as? [Any])?.count ?? 0) >= 2
                }, "a season with two episodes")
            let before = try #require(fixture.json(seasonFile)?["episodes"] as? [[String: Any]])
            let watched = try #require(before.first?["Id"] as? String)
            // Watched halfway on another device: its user data changes, its `Etag` does not.
            fixture.server.setUserData(
                of: watched,
                TestUserData(played: false, playCount: 1, playbackPositionTicks: 123_456_789, lastPlayedDate: Date()))
            fixture.server.counters.reset()
            let second = try await fixture.sync()
            #expect(second.failed.isEmpty, "\(second.failed)")
            #expect(fixture.server.counters.mediaSourcesBuilt == 0, "the Etag did not change: no media sources asked")
            let after = try #require(fixture.json(seasonFile)?["episodes"] as? [[String: Any]])
            #expect(after.count == before.count)
            #expect(
                ((after.first?["UserData"] as? [String: Any])?["PlaybackPositionTicks"] as? Int) == 123_456_789,
                "written again")
            for (old, new) in zip(before, after) {
                // Members planning never reads (`Formats`, a stream's `BitRate`) are there as the server sent them.
                let oldSources = try JSONSerialization.data(
                    withJSONObject: old["MediaSources"] ?? [], options: .sortedKeys)
                let newSources = try JSONSerialization.data(
                    withJSONObject: new["MediaSources"] ?? [], options: .sortedKeys)
                #expect(oldSources == newSources)
                let oldStreams = try JSONSerialization.data(
                    withJSONObject: old["MediaStreams"] ?? [], options: .sortedKeys)
                let newStreams = try JSONSerialization.data(
                    withJSONObject: new["MediaStreams"] ?? [], options: .sortedKeys)
                #expect(oldStreams == newStreams)
                let sources = try #require(new["MediaSources"] as? [[String: Any]])
                #expect(sources.first?["Formats"] != nil && sources.first?["SupportsTranscoding"] != nil)
            }
        }
    }

    /// What a sync loads of the cache is abridged to the members planning reads; the whole fields stay stored.
    @Test func theCacheLoadsAbridgedAndKeepsTheWhole() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let index = try MirrorIndex(path: folder.file("index.sqlite"))
        let whole = try JSONValue(
            parsing: Array(
                #"{"MediaSources":[{"Id":"s1","Container":"mkv","Size":5,"ETag":"e","Protocol":"File","#.utf8)
                + Array(
                    #""Formats":[],"Bitrate":9,"MediaStreams":[{"Type":"Subtitle","Index":2,"IsExternal":true,"#.utf8)
                + Array(#""Codec":"srt","TimeBase":"1/1000"},{"Type":"Audio","Index":1,"Codec":"ac3"},"#.utf8)
                + Array(#"{"Type":"Video","Index":0,"Codec":"h264"}]}],"#.utf8)
                + Array(#""MediaStreams":[{"Type":"Video","Index":0,"#.utf8)
                + Array(#""Width":1920}]}"#.utf8))
        try index.saveMediaSources(["item1": MediaSourceCache.Entry(etag: "etag1", fields: whole)])
        let loaded = try #require(try index.mediaSourceCache().entries["item1"])
        #expect(loaded.etag == "etag1")
        let source = try #require(loaded.fields["MediaSources"]?.arrayValue?.first)
        #expect(source["Id"]?.stringValue == "s1" && source["Size"]?.intValue == 5 && source["ETag"] != nil)
        #expect(source["Formats"] == nil, "not read by planning: not loaded")
        #expect(source["Bitrate"]?.intValue == 9, "a track's bit rate decides whether it fits an audio quality")
        let stream = try #require(source["MediaStreams"]?.arrayValue?.first)
        #expect(stream["Codec"]?.stringValue == "srt" && stream["IsExternal"]?.boolValue == true)
        #expect(stream["TimeBase"] == nil)
        #expect(loaded.fields["MediaStreams"] == nil, "the default version's streams again: not loaded")
        #expect(source["MediaStreams"]?.arrayValue?.count == 1, "a version's video and audio streams are not loaded")
        #expect(index.wholeMediaSourceFields(itemId: "item1") == whole)
        #expect(index.wholeMediaSourceFields(itemId: "item2") == nil)
        // A track's version (no video stream) keeps its audio stream: its codec and channels decide a quality.
        let track = try JSONValue(
            parsing: Array(
                #"{"MediaSources":[{"Id":"t1","Container":"mp3","Bitrate":320000,"MediaStreams":["#.utf8)
                + Array(#"{"Type":"Audio","Index":0,"Codec":"mp3","Channels":2,"TimeBase":"1/1000"}]}]}"#.utf8))
        try index.saveMediaSources(["track1": MediaSourceCache.Entry(etag: "etag2", fields: track)])
        let trackSource = try #require(
            try index.mediaSourceCache().entries["track1"]?.fields["MediaSources"]?.arrayValue?.first)
        let audio = try #require(trackSource["MediaStreams"]?.arrayValue?.first)
        #expect(audio["Codec"]?.stringValue == "mp3" && audio["Channels"]?.intValue == 2)
        #expect(audio["TimeBase"] == nil)
    }

    /// The season file of a listed episode whose sources came abridged and of a kept one (deselected, its file
    /// still held): the listed one gets its whole sources back, the kept one is written as it was recorded, and
    /// whole sources that cannot be read fail the file instead of writing it abridged.
    @Test func onlyListedEpisodesGetTheirWholeSourcesBack() throws {
        func episode(_ id: String, source: String) -> JSONValue {
            .object([
                "Id": .string(id), "Type": .string("Episode"), "Etag": .string("etag-\(id)"),
                "MediaSources": .array([.object(["Id": .string(source)])]),
            ])
        }
        let listed = try #require(BaseItem(episode("a", source: "abridged")))
        let series = try #require(BaseItem(.object(["Id": .string("s"), "Type": .string("Series")])))
        let season = try #require(
            BaseItem(.object(["Id": .string("s1"), "Type": .string("Season"), "IndexNumber": .number(1)])))
        var items = MirrorItems(series: [
            SeriesEntry(
                series: series,
                seasons: [SeasonEntry(number: 1, season: season, episodes: [EpisodeEntry(item: listed, versions: [])])])
        ])
        items.abridgedSources = ["a", "b"]
        let entries = ["a", "b"].map { id in
            IndexEntry(
                file: LocalFile(
                    key: .media(itemId: id, versionId: id),
                    path: LibraryLayout.episodeMedia(
                        seriesId: "s", seasonNumber: 1, episodeId: id, versionId: id, fileExtension: "mkv"),
                    kind: .media, size: 1, signature: "sig", itemId: id),
                versionId: id, mediaSourceId: id, container: "mkv", downloadedAt: "2026-01-01T00:00:00Z", taskId: "t")
        }
        let seasonPath = LibraryLayout.seasonMetadata(seriesId: "s", seasonNumber: 1)
        let recorded = DownloadMetadata(
            itemId: "s1", itemType: "Season", displayTitle: "Season 1", item: nil, versions: [],
            episodes: [episode("b", source: "recorded")])
        func render(whole: @escaping @Sendable (String) -> JSONValue?) throws -> [UInt8] {
            let files = MetadataComposer.files(
                for: items, entries: entries, previous: { $0 == seasonPath ? recorded : nil }, wholeSources: whole)
            return try #require(files.first { $0.file.path == seasonPath }).render().bytes
        }
        let bytes = try render { id in .object(["MediaSources": .array([.object(["Id": .string("whole-\(id)")])])]) }
        let episodes = try #require(try JSONValue(parsing: bytes)["episodes"]?.arrayValue)
        let sources = Dictionary(
            uniqueKeysWithValues: episodes.compactMap { episode in
                episode["Id"]?.stringValue.map { ($0, episode["MediaSources"]?.arrayValue?.first?["Id"]?.stringValue) }
            })
        #expect(sources == ["a": "whole-a", "b": "recorded"])
        #expect(throws: SyncError.self) { try render { _ in nil } }
    }
}
