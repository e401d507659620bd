import Foundation
import MediaSync
import Testing

/// The account's decisions as tables: the merge of subscriptions, which play state wins, what a `play` means, and
/// which episode an action names.
@Suite struct PodcastAccountPlannerTests {
    typealias Local = AccountPlanner.LocalFeed
    typealias Agreed = AccountPlanner.AgreedFeed
    typealias Plan = AccountPlanner.SubscriptionPlan

    struct MergeCase: CustomTestStringConvertible, Sendable {
        var name: String
        var local: [Local]
        var agreed: [Agreed]
        var added: [String]
        var removed: [String]
        var firstLink: Bool
        var expected: Plan
        var testDescription: String { name }
    }

    static let merges: [MergeCase] = [
        MergeCase(
            name: "first link takes the union and removes nothing",
            local: [Local(id: "a", urls: ["https://a/feed"]), Local(id: "b", urls: ["https://b/feed"])],
            agreed: [], added: ["https://b/feed", "https://c/feed"], removed: ["https://a/feed"], firstLink: true,
            expected: Plan(
                subscribe: ["https://c/feed"], pushAdd: [Agreed(url: "https://a/feed", podcastId: "a")],
                agree: [Agreed(url: "https://b/feed", podcastId: "b")])),
        MergeCase(
            name: "added in the group is subscribed here",
            local: [Local(id: "a", urls: ["https://a/feed"])], agreed: [Agreed(url: "https://a/feed", podcastId: "a")],
            added: ["https://c/feed"], removed: [], firstLink: false, expected: Plan(subscribe: ["https://c/feed"])),
        MergeCase(
            name: "removed in the group is unsubscribed here, also by an old URL",
            local: [Local(id: "a", urls: ["https://a/new", "https://a/old"])],
            agreed: [Agreed(url: "https://a/new", podcastId: "a")], added: [], removed: ["https://a/old"],
            firstLink: false, expected: Plan(unsubscribe: ["a"])),
        MergeCase(
            name: "a subscription made here and not yet sent survives a removal in the group, and is sent",
            local: [Local(id: "a", urls: ["https://a/feed"])], agreed: [], added: [], removed: ["https://a/feed"],
            firstLink: false, expected: Plan(pushAdd: [Agreed(url: "https://a/feed", podcastId: "a")])),
        MergeCase(
            name: "unsubscribed here is sent as remove",
            local: [], agreed: [Agreed(url: "https://a/feed", podcastId: "a")], added: [], removed: [],
            firstLink: false, expected: Plan(pushRemove: ["https://a/feed"])),
        MergeCase(
            name: "an add of a feed already agreed is no news (our own upload coming back): the removal here stands",
            local: [], agreed: [Agreed(url: "https://a/feed", podcastId: "a")], added: ["https://a/feed"],
            removed: [], firstLink: false, expected: Plan(pushRemove: ["https://a/feed"])),
        MergeCase(
            name: "an add of a feed already agreed and held: nothing to do",
            local: [Local(id: "a", urls: ["https://a/feed"])], agreed: [Agreed(url: "https://a/feed", podcastId: "a")],
            added: ["https://a/feed"], removed: [], firstLink: false, expected: Plan()),
        MergeCase(
            name: "removed on both sides: nothing to do",
            local: [], agreed: [Agreed(url: "https://a/feed", podcastId: "a")], added: [], removed: ["https://a/feed"],
            firstLink: false, expected: Plan()),
        MergeCase(
            name: "added and removed in the same span: the add stands",
            local: [], agreed: [], added: ["https://c/feed"], removed: ["https://c/feed"], firstLink: false,
            expected: Plan(subscribe: ["https://c/feed"])),
        MergeCase(
            name: "a feed waiting to be subscribed here is not sent as remove",
            local: [], agreed: [Agreed(url: "https://c/feed", podcastId: nil)], added: [], removed: [],
            firstLink: false, expected: Plan()),
    ]

    @Test(arguments: merges) func subscriptionMerge(_ row: MergeCase) {
        let plan = AccountPlanner.subscriptions(
            local: row.local, agreed: row.agreed, added: row.added, removed: row.removed, firstLink: row.firstLink)
        #expect(plan == row.expected)
    }

    @Test func newerTimestampWinsAndATieKeepsTheStateHeld() {
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        let rows: [(group: Date, here: Date?, winner: AccountPlanner.Winner)] = [
            (base, nil, .nothingHere),
            (base.addingTimeInterval(1), base, .group),
            (base, base, .here),
            (base, base.addingTimeInterval(1), .here),
        ]
        for row in rows {
            #expect(AccountPlanner.winner(group: row.group, here: row.here) == row.winner)
        }
    }

    @Test func aPlayIsPlayedWithinOnePercentOrTenSecondsOfTheEnd() {
        let rows: [(position: Int, total: Int?, state: AccountPlanner.PlayState)] = [
            (3600, 3600, .played),
            (3564, 3600, .played),  // 1 % of an hour is 36 s
            (3563, 3600, .position(seconds: 3563)),
            (290, 300, .played),  // 10 s beats 1 % (3 s)
            (289, 300, .position(seconds: 289)),
            (120, nil, .position(seconds: 120)),
            (120, 0, .position(seconds: 120)),
            (-5, 300, .position(seconds: 0)),
        ]
        for row in rows {
            #expect(AccountPlanner.playState(position: row.position, total: row.total) == row.state, "\(row)")
        }
    }

    @Test func aPlayedMarkIsSentAsPositionEqualToTotal() {
        #expect(AccountPlanner.playFields(played: true, positionSeconds: 0, total: 1800)! == (1800, 1800))
        #expect(AccountPlanner.playFields(played: true, positionSeconds: 0, total: nil) == nil)
        let position = AccountPlanner.playFields(played: false, positionSeconds: 75, total: 1800)
        #expect(position?.position == 75 && position?.total == 1800)
        let unknown = AccountPlanner.playFields(played: false, positionSeconds: 75, total: nil)
        #expect(unknown?.position == 75 && unknown?.total == nil)
    }

    @Test func actionsAreMatchedByGuidWithinThePodcastThenByEnclosureThenByGuid() {
        let episodes = [
            AccountPlanner.KnownEpisode(
                podcastId: "p1", episodeId: "e1", guid: "g1", enclosureURLs: ["https://cdn/1.mp3"], durationSeconds: 60),
            AccountPlanner.KnownEpisode(
                podcastId: "p2", episodeId: "e2", guid: "g1", enclosureURLs: ["https://cdn/2.mp3"], durationSeconds: nil
            ),
            AccountPlanner.KnownEpisode(
                podcastId: "p2", episodeId: "e3", guid: "g3", enclosureURLs: ["https://cdn/3.mp3"], durationSeconds: nil
            ),
        ]
        let podcasts = ["https://p1/feed": "p1", "https://p2/feed": "p2", "https://p2/old": "p2"]
        func match(_ podcast: String, _ episode: String, _ guid: String?) -> String? {
            AccountPlanner.match(
                podcast: podcast, episode: episode, guid: guid, podcasts: podcasts, episodes: episodes)?.episodeId
        }
        #expect(match("https://p2/feed", "https://elsewhere/x.mp3", "g1") == "e2")
        #expect(match("https://p2/old", "https://elsewhere/x.mp3", "g1") == "e2")
        #expect(match("https://p1/feed", "https://cdn/3.mp3", nil) == "e3")
        #expect(match("https://unknown/feed", "https://elsewhere/x.mp3", "g3") == "e3")
        #expect(match("https://unknown/feed", "https://elsewhere/x.mp3", "nope") == nil)
        #expect(match("https://p1/feed", "https://elsewhere/x.mp3", nil) == nil)
    }

    @Test func timestampsAreUTCWithoutAZoneAndReadInEveryCommonSpelling() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(EpisodeAction.timestamp(date) == "2023-11-14T22:13:20")
        for text in [
            "2023-11-14T22:13:20", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.123456", "2023-11-14T23:13:20+01:00",
        ] {
            #expect(EpisodeAction.date(text) == date, "\(text)")
        }
        #expect(EpisodeAction.date("yesterday") == nil)
    }

    @Test func aClockInTheFutureOrNeverSetCountsAsNow() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(AccountPlanner.sane(now.addingTimeInterval(86_400), now: now) == now)
        #expect(AccountPlanner.sane(Date(timeIntervalSince1970: 0), now: now) == now)
        #expect(AccountPlanner.sane(now.addingTimeInterval(-60), now: now) == now.addingTimeInterval(-60))
    }
}
