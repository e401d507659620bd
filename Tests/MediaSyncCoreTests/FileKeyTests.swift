import Testing

@testable import MediaSyncCore

/// Every key this version makes, as the index stores it and as it parses back.
struct FileKeyTests {
    static let cases: [(FileKey, String, FileKey.Parts, Bool)] = [
        (.media(itemId: "i1", versionId: "v1"), "media:i1:v1", .media(itemId: "i1", versionId: "v1"), false),
        (
            .subtitle(itemId: "i1", versionId: "v1", streamIndex: 3), "subtitle:i1:v1:3",
            .subtitle(itemId: "i1", versionId: "v1", streamIndex: 3), false
        ),
        (.image(itemId: "i1", type: "Primary"), "image:i1:Primary", .image(itemId: "i1", type: "Primary"), false),
        (.metadata(itemId: "s1"), "metadata:s1", .metadata(itemId: "s1"), false),
        (.lyrics(itemId: "t1"), "lyrics:t1", .lyrics(itemId: "t1"), false),
        (
            .image(itemId: "i1", type: "Chapter-12"), "image:i1:Chapter-12", .image(itemId: "i1", type: "Chapter-12"),
            false
        ),
        (
            .trickplay(itemId: "i1", versionId: "v1", width: 320, index: 7), "trickplay:i1:v1:320:7",
            .trickplay(itemId: "i1", versionId: "v1", width: 320, index: 7), false
        ),
        (.segments(itemId: "i1", versionId: "v1"), "segments:i1:v1", .segments(itemId: "i1", versionId: "v1"), false),
        (
            .podcastEpisode(podcastId: "p1", episodeId: "e1"), "podcast:p1:e1",
            .podcastEpisode(podcastId: "p1", episodeId: "e1"), true
        ),
        (
            .podcastExtra(podcastId: "p1", episodeId: "e1", what: "transcript"), "podcast-extra:p1:e1:transcript",
            .podcastExtra(podcastId: "p1", episodeId: "e1", what: "transcript"), true
        ),
        (.podcastMetadata(podcastId: "p1"), "podcast-metadata:p1", .podcastMetadata(podcastId: "p1"), true),
    ]

    @Test(arguments: 0..<cases.count)
    func aKeyIsStoredAsTheIndexAlwaysSpelledItAndParsesBack(_ index: Int) {
        let (key, stored, parts, podcast) = Self.cases[index]
        #expect(key.rawValue == stored)
        #expect(FileKey(rawValue: stored) == key)
        #expect(key.parts == parts)
        #expect(key.isPodcast == podcast)
    }

    @Test(arguments: [
        "", "media", "media:", "media:a", "media:a:b:c", "subtitle:a:b:x", "metadata:", "thing:a", "podcast", "lyrics:",
        "lyrics:a:b",
    ])
    func aSpellingThisVersionDoesNotMakeHasNoParts(_ stored: String) {
        #expect(FileKey(rawValue: stored).parts == nil)
    }
}
