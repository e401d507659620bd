import MediaSync
import Testing

/// `CanDownload: false` has four causes on Jellyfin 10.8–10.11 (`BaseItem.CanDownload(User)`); the report names
/// the one that holds, and never one the item contradicts.
@Suite struct DownloadRefusalTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var type: String?
        var videoType: String?
        var locationType: String?
        var protocols: [String]
        var userMayDownload: Bool?
        var expected: DownloadRefusal
        var testDescription: String {
            "\(type ?? "-") \(videoType ?? "-") \(locationType ?? "-") \(protocols) "
                + "\(userMayDownload.map(String.init) ?? "unknown") → \(expected)"
        }
    }

    static let rows: [Row] = [
        // The policy decides first: with it off every item is false, a DVD folder too.
        Row(
            type: "Movie", videoType: "VideoFile", locationType: "FileSystem", protocols: ["File"],
            userMayDownload: false, expected: .userPolicy),
        Row(
            type: "Movie", videoType: "Dvd", locationType: "FileSystem", protocols: ["File"],
            userMayDownload: false, expected: .userPolicy),
        Row(
            type: "Movie", videoType: "Dvd", locationType: "FileSystem", protocols: ["File"],
            userMayDownload: true, expected: .discFolder(videoType: "Dvd")),
        Row(
            type: "Episode", videoType: "BluRay", locationType: "FileSystem", protocols: [],
            userMayDownload: nil, expected: .discFolder(videoType: "BluRay")),
        Row(
            type: "Movie", videoType: "Iso", locationType: "FileSystem", protocols: ["File"],
            userMayDownload: true, expected: .discFolder(videoType: "Iso")),
        Row(
            type: "Movie", videoType: "VideoFile", locationType: "Remote", protocols: [],
            userMayDownload: true, expected: .remoteStream),
        Row(
            type: "Movie", videoType: "VideoFile", locationType: "FileSystem", protocols: ["Http"],
            userMayDownload: true, expected: .remoteStream),
        Row(
            type: "Movie", videoType: "VideoFile", locationType: "FileSystem", protocols: ["File", "Http"],
            userMayDownload: true, expected: .unexplained),
        Row(
            type: "Recording", videoType: "VideoFile", locationType: "FileSystem", protocols: ["File"],
            userMayDownload: true, expected: .recording),
        // Nothing in the item explains it, and the policy is unknown (an API key) or on.
        Row(
            type: "Movie", videoType: "VideoFile", locationType: "FileSystem", protocols: ["File"],
            userMayDownload: nil, expected: .unexplained),
        Row(
            type: "Movie", videoType: nil, locationType: nil, protocols: [], userMayDownload: true,
            expected: .unexplained),
    ]

    @Test(arguments: rows) func theCauseIsToldApart(_ row: Row) {
        let reason = DownloadRefusal.reason(
            type: row.type, videoType: row.videoType, locationType: row.locationType, sourceProtocols: row.protocols,
            userMayDownload: row.userMayDownload)
        #expect(reason == row.expected)
    }

    @Test func eachLineSaysOnlyWhatHolds() throws {
        #expect(DownloadRefusal.userPolicy.line(name: "A") == nil)
        let dvd = try #require(DownloadRefusal.discFolder(videoType: "Dvd").line(name: "A"))
        #expect(dvd.contains("a DVD folder") && !dvd.contains("Blu-ray"))
        let bluray = try #require(DownloadRefusal.discFolder(videoType: "BluRay").line(name: "A"))
        #expect(bluray.contains("a Blu-ray folder") && !bluray.contains("DVD"))
        let unexplained = try #require(DownloadRefusal.unexplained.line(name: "A"))
        #expect(!unexplained.contains("DVD") && !unexplained.contains("Blu-ray") && unexplained.contains("no reason"))
        let remote = try #require(DownloadRefusal.remoteStream.line(name: "A"))
        #expect(remote.contains("remote stream") && !remote.contains("DVD"))
        #expect(DownloadRefusal.policyLine.contains("administrator"))
    }
}
