import Foundation
import MediaSyncCore
import MediaSyncJSON
import MediaSyncTestSupport
import Testing

/// The metadata files written by ``JSONWriter`` are byte for byte what `JSONEncoder` writes for them.
@Suite struct MetadataJSONTests {
    @Test func writesWhatJSONEncoderWritesForTheMetadataFiles() throws {
        let item = try JSONValue(
            parsing: Array(#"{"Id":"abc","Name":"A/B","RunTimeTicks":636000000000,"UserData":{"Played":false}}"#.utf8))
        let version = VersionInfo(
            versionId: "v1", container: "mkv", isStatic: true, mediaSourceId: "m1",
            downloadDate: "2026-11-23T06:00:00Z",
            taskId: "t", itemId: "e1")
        let download = DownloadMetadata(
            itemId: "abc", itemType: "Season", displayTitle: "Season 1", item: item, versions: [version, version],
            episodes: [item])
        #expect(try JSONWriter.prettyBytes(download) == JSONEncoderOracle.prettyBytes(download))
        #expect(try JSONWriter.sortedCompactBytes(download) == JSONEncoderOracle.sortedCompactBytes(download))
        let podcast = PodcastMetadata(
            podcastID: "p", podcastTitle: "Show", feedURL: "https://example.org/feed.xml",
            episodes: [
                .init(
                    episodeID: "e", title: "T", fileName: "e.mp3", fileSize: 12_345_678_901, downloadDate: "d",
                    guid: "g", published: nil)
            ])
        #expect(try JSONWriter.prettyBytes(podcast) == JSONEncoderOracle.prettyBytes(podcast))
        #expect(try JSONWriter.sortedCompactBytes(podcast) == JSONEncoderOracle.sortedCompactBytes(podcast))
    }
}
