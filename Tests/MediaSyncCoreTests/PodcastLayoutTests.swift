import MediaSyncCore
import Testing

@Suite struct PodcastLayoutTests {
    @Test func uuidV5MatchesPublishedValues() {
        // RFC 9562 appendix A.4: the DNS namespace and "www.example.com".
        #expect(
            UUIDv5.make(namespace: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", name: "www.example.com")
                == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
        // The Podcasting 2.0 namespace documentation's example feed.
        #expect(
            PodcastLayout.podcastId(feedURL: "https://mp3s.nashownotes.com/pc20rss.xml", declaredGUID: nil)
                == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
    }

    @Test func thePodcastIdIgnoresTheSchemeAndTrailingSlashesAndPrefersTheFeedsOwnGuid() {
        let a = PodcastLayout.podcastId(feedURL: "http://example.org/feed/", declaredGUID: nil)
        let b = PodcastLayout.podcastId(feedURL: "https://example.org/feed//", declaredGUID: nil)
        #expect(a == b)
        #expect(
            PodcastLayout.podcastId(
                feedURL: "https://example.org/feed", declaredGUID: "917393E3-1B1E-5CEF-ACE4-EDAA54E1F810")
                == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        // A declared guid that could not be a folder name is ignored.
        #expect(PodcastLayout.podcastId(feedURL: "https://example.org/feed", declaredGUID: "../../x") == a)
    }

    @Test(
        arguments: [
            ("ep-1", "ep-1"), ("abc.def_1", "abc.def_1"),
            ("https://example.org/?p=12", nil), ("a/b", nil), ("a b", nil), ("", nil), (".hidden", nil), ("CON", nil),
            ("aux.mp3", nil), ("com7", nil), ("LPT5.x", nil),
            ("x-0123456789ab", nil), ("ünïcode", nil), (String(repeating: "a", count: 81), nil),
        ] as [(String, String?)])
    func episodeIds(guid: String, direct: String?) {
        let id = PodcastLayout.episodeId(guid: guid)
        if let direct {
            #expect(id == direct)
        } else {
            #expect(id != guid)
            #expect(id.count <= 61)
            #expect(SafeName.isContained(id) && !id.hasPrefix("."))
            #expect(id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        }
        #expect(PodcastLayout.episodeId(guid: guid) == id)
    }

    @Test func guidsThatSanitiseAlikeDoNotCollide() {
        let ids = ["a/b", "a?b", "a b", "a_b-", "a:b"].map(PodcastLayout.episodeId)
        #expect(Set(ids).count == ids.count)
        // A guid that already looks like a hashed id is hashed too, so it cannot take another guid's name.
        let hashed = PodcastLayout.episodeId(guid: "a b")
        #expect(PodcastLayout.episodeId(guid: hashed) != hashed)
    }

    @Test(
        arguments: [
            ("audio/mpeg", "https://x/ep.m4a", "mp3"), ("audio/x-m4a", "https://x/ep", "m4a"),
            (nil, "https://x/ep.aac?x=1", "aac"),
            ("application/octet-stream", "https://x/ep.wav", "wav"), (nil, "https://x/ep.exe", "mp3"),
            ("video/mp4", "https://x/v", "mp4"),
        ] as [(String?, String, String)])
    func extensions(type: String?, url: String, expected: String) {
        #expect(PodcastLayout.fileExtension(type: type, url: url) == expected)
    }

    @Test func retentionKeepsTheNewestOrTheRecentOrAll() {
        let published: [Double?] = [300, 100, nil, 200, 400]
        #expect(Retention.newest(2).keep(published: published) == [4, 0])
        #expect(Retention.since(200).keep(published: published) == [4, 0, 3])
        #expect(Retention.all.keep(published: published) == [4, 0, 3, 1, 2])
        #expect(Retention.newest(0).keep(published: published) == [])
    }
}
