import Foundation
import MediaSync
import MediaSyncServer
import Testing

/// The pure decisions about play state, as tables.
@Suite struct PlayStatePlannerTests {
    static let t0 = Date(timeIntervalSince1970: 1_790_000_000)
    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }
    func at(_ seconds: TimeInterval) -> Date { Self.at(seconds) }

    struct DecideCase: Sendable, CustomTestStringConvertible {
        var name: String
        var event: PlayEvent
        var server: ServerPlayState?
        var routes: PlayStateRoutes = .unified
        var expected: PlayStatePlanner.Decision
        var testDescription: String { name }
    }

    static let decideCases: [DecideCase] = [
        DecideCase(
            name: "played offline, unplayed on the server: sent with its date",
            event: PlayEvent(itemId: "i", kind: .played, at: at(0)), server: ServerPlayState(played: false),
            expected: .send(.played(at: at(0)))),
        DecideCase(
            name: "the server already shows this played mark (a sync stopped before noting it): nothing sent",
            event: PlayEvent(itemId: "i", kind: .played, at: at(0)),
            server: ServerPlayState(played: true, lastPlayed: at(0.4)), expected: .alreadyThere),
        DecideCase(
            name: "played again offline after an older watch: sent (a second watch counts)",
            event: PlayEvent(itemId: "i", kind: .played, at: at(100)),
            server: ServerPlayState(played: true, lastPlayed: at(0)), expected: .send(.played(at: at(100)))),
        DecideCase(
            name: "played elsewhere later: the server's state wins",
            event: PlayEvent(itemId: "i", kind: .played, at: at(0)),
            server: ServerPlayState(played: true, lastPlayed: at(3600)), expected: .serverNewer(at(3600))),
        DecideCase(
            name: "unplayed offline, played elsewhere later: the server's state wins",
            event: PlayEvent(itemId: "i", kind: .unplayed, at: at(0)),
            server: ServerPlayState(played: true, lastPlayed: at(60)), expected: .serverNewer(at(60))),
        DecideCase(
            name: "unplayed offline after an older watch: sent",
            event: PlayEvent(itemId: "i", kind: .unplayed, at: at(60)),
            server: ServerPlayState(played: true, lastPlayed: at(0)), expected: .send(.unplayed)),
        DecideCase(
            name: "unplayed, and the server agrees: nothing sent",
            event: PlayEvent(itemId: "i", kind: .unplayed, at: at(60)), server: ServerPlayState(played: false),
            expected: .alreadyThere),
        DecideCase(
            name: "a position on 10.9+: sent with its date",
            event: PlayEvent(itemId: "i", kind: .position, positionTicks: 500, at: at(0)),
            server: ServerPlayState(played: false), expected: .send(.position(ticks: 500, at: at(0)))),
        DecideCase(
            name: "a position the 10.9+ server already holds with its date: nothing sent",
            event: PlayEvent(itemId: "i", kind: .position, positionTicks: 500, at: at(0)),
            server: ServerPlayState(played: false, positionTicks: 500, lastPlayed: at(0)), expected: .alreadyThere),
        DecideCase(
            name: "a position 10.8 already holds (it keeps its own date): nothing sent",
            event: PlayEvent(itemId: "i", kind: .position, positionTicks: 500, at: at(0)),
            server: ServerPlayState(played: false, positionTicks: 500, lastPlayed: nil), routes: .legacy,
            expected: .alreadyThere),
        DecideCase(
            name: "an item no longer on the server", event: PlayEvent(itemId: "i", kind: .played, at: at(0)),
            server: nil, expected: .gone),
    ]

    @Test(arguments: decideCases) func decide(_ table: DecideCase) {
        let decision = PlayStatePlanner.decide(
            table.event, at: table.event.at, server: table.server, routes: table.routes)
        #expect(decision == table.expected)
    }

    @Test func onlyTheLatestPendingEventOfAnItemIsSent() {
        let events = [
            PlayEvent(seq: 1, itemId: "a", kind: .position, positionTicks: 5, at: at(0)),
            PlayEvent(seq: 2, itemId: "b", kind: .played, at: at(10)),
            PlayEvent(seq: 3, itemId: "a", kind: .played, at: at(20)),
            PlayEvent(seq: 4, itemId: "a", kind: .unplayed, at: at(5)),  // recorded later, dated earlier (--at)
            PlayEvent(seq: 5, itemId: "c", kind: .played, at: at(0), state: .pushed),
        ]
        let (latest, superseded) = PlayStatePlanner.latestPending(events)
        #expect(latest.map(\.seq) == [2, 3])
        #expect(superseded.map(\.seq) == [1, 4])
    }

    @Test func anEventFromAClockSetWrongIsSentWithTheTimeOfTheSync() {
        let now = at(0)
        #expect(
            PlayStatePlanner.sendTime(PlayEvent(itemId: "i", kind: .played, at: at(-86_400)), now: now) == (
                at(-86_400), false
            ))
        #expect(
            PlayStatePlanner.sendTime(PlayEvent(itemId: "i", kind: .played, at: at(120)), now: now) == (at(120), false))
        #expect(
            PlayStatePlanner.sendTime(PlayEvent(itemId: "i", kind: .played, at: at(86_400 * 400)), now: now) == (
                now, true
            ))
        let epoch = PlayEvent(itemId: "i", kind: .played, at: Date(timeIntervalSince1970: 0))
        #expect(PlayStatePlanner.sendTime(epoch, now: now) == (now, true))
    }

    struct ReleaseCase: Sendable, CustomTestStringConvertible {
        var name: String
        var server: ServerPlayState?
        var pending: PlayEvent?
        var grace: TimeInterval
        var expected: PlayStatePlanner.Release
        var testDescription: String { name }
    }

    static let releaseCases: [ReleaseCase] = [
        ReleaseCase(name: "unplayed: wanted", server: ServerPlayState(played: false), grace: 0, expected: .wanted),
        ReleaseCase(
            name: "played on the server, grace passed: released",
            server: ServerPlayState(played: true, lastPlayed: at(-90_000)), grace: 86_400, expected: .released),
        ReleaseCase(
            name: "played on the server within the grace period: kept",
            server: ServerPlayState(played: true, lastPlayed: at(-3600)), grace: 86_400, expected: .kept),
        ReleaseCase(
            name: "played here, not yet on the server: kept whatever the grace",
            server: ServerPlayState(played: false), pending: PlayEvent(itemId: "i", kind: .played, at: at(-90_000)),
            grace: 0, expected: .kept),
        ReleaseCase(
            name: "unplayed here, played on the server: wanted (the local mark is newer)",
            server: ServerPlayState(played: true, lastPlayed: at(-90_000)),
            pending: PlayEvent(itemId: "i", kind: .unplayed, at: at(-10)), grace: 0, expected: .wanted),
        ReleaseCase(
            name: "played without a date: kept (its grace cannot be counted)", server: ServerPlayState(played: true),
            grace: 0, expected: .kept),
        ReleaseCase(name: "no user data: wanted", server: nil, grace: 0, expected: .wanted),
    ]

    @Test(arguments: releaseCases) func release(_ table: ReleaseCase) {
        #expect(
            PlayStatePlanner.release(server: table.server, pending: table.pending, grace: table.grace, now: at(0))
                == table.expected)
    }

    /// Jellyfin's resume rules applied to where mpv stopped: (position %, event kind or nil).
    @Test(
        arguments: [
            (0.0, nil), (4.9, nil), (5.0, PlayEvent.Kind.position), (50.0, .position), (90.0, .position),
            (90.1, .played), (100.0, .played),
        ] as [(Double, PlayEvent.Kind?)])
    func resumeRule(percent: Double, expected: PlayEvent.Kind?) {
        let runtime: Int64 = 36_000_000_000
        let event = ResumeRule.event(
            itemId: "i", position: Int64(Double(runtime) * percent / 100), runtime: runtime, at: at(0))
        #expect(event?.kind == expected)
        if expected == .played { #expect(event?.positionTicks == 0) }
    }

    /// An audiobook's rule (`MinAudiobookResume`, `MaxAudiobookResume`: 5 minutes each) and a book's (the position
    /// as it is), against a video's for the same stop: (runtime minutes, position minutes, media, event kind or nil).
    @Test(
        arguments: [
            (60.0, 0.0, ResumeRule.Media.audiobook, nil), (60.0, 2.0, .audiobook, nil), (60.0, 4.99, .audiobook, nil),
            (60.0, 5.0, .audiobook, PlayEvent.Kind.position), (60.0, 30.0, .audiobook, .position),
            (60.0, 55.0, .audiobook, .position), (60.0, 55.5, .audiobook, .played), (60.0, 60.0, .audiobook, .played),
            // 3 % into a long book is kept (a video's 5 % would drop it); 92 % with 48 minutes left too.
            (600.0, 18.0, .audiobook, .position), (600.0, 18.0, .video, nil), (600.0, 552.0, .audiobook, .position),
            (600.0, 552.0, .video, .played),
            // A book shorter than the two margins: past its first 5 minutes it is played.
            (8.0, 4.0, .audiobook, nil), (8.0, 5.0, .audiobook, .played),
            // A book (`RunTimeTicks` one second) keeps any position.
            (1.0 / 60, 90.0, .book, .position), (1.0 / 60, 0.0, .book, nil),
        ] as [(Double, Double, ResumeRule.Media, PlayEvent.Kind?)])
    func resumeRuleOfAudiobooksAndBooks(
        runtimeMinutes: Double, positionMinutes: Double, media: ResumeRule.Media, expected: PlayEvent.Kind?
    ) {
        let position = Int64(positionMinutes * 600_000_000)
        let event = ResumeRule.event(
            itemId: "i", position: position, runtime: Int64(runtimeMinutes * 600_000_000), at: at(0), media: media)
        #expect(event?.kind == expected)
        if expected == .position { #expect(event?.positionTicks == position) }
        if expected == .played { #expect(event?.positionTicks == 0) }
    }

    @Test(
        arguments: [
            ("1:02:30", Int64(3750) * 10_000_000), ("62:30", 3750 * 10_000_000), ("90", 900_000_000),
            ("0:00:01.5", 15_000_000), ("1:60:00", nil), ("1:02:3x", nil), ("", nil), ("-5", nil),
            ("1:2:3:4", nil), ("1e3", nil),
        ] as [(String, Int64?)])
    func positions(text: String, ticks: Int64?) {
        #expect(TimeText.position(text) == ticks)
    }

    @Test(
        arguments: [
            ("0", 0.0), ("90s", 90), ("30m", 1800), ("12h", 43_200), ("1d", 86_400), ("2w", 1_209_600), ("3", 259_200),
            ("1.5h", 5400), ("x", nil), ("-1d", nil), ("", nil),
        ] as [(String, TimeInterval?)])
    func durations(text: String, seconds: TimeInterval?) {
        #expect(TimeText.duration(text) == seconds)
        if let seconds, seconds > 0, seconds.rounded() == seconds {
            #expect(TimeText.duration(TimeText.format(duration: seconds)) == seconds)
        }
    }

    @Test(
        arguments: [
            ("200G", Int64(200_000_000_000)), ("1.5T", 1_500_000_000_000), ("500MB", 500_000_000),
            ("700 MiB", 734_003_200), ("123", 123), ("2GiB", 2_147_483_648), ("10k", 10_000), ("G", nil),
            ("-1G", nil), ("5X", nil), ("", nil), ("1e30T", nil),
        ] as [(String, Int64?)])
    func sizes(text: String, bytes: Int64?) {
        #expect(ByteCount.parse(text) == bytes)
    }

    @Test(
        arguments: [
            ("2026-11-20T21:30:00.1234567Z", 1_795_210_200.1234567), ("2026-11-20T21:30:00Z", 1_795_210_200),
            ("2026-11-20T21:30:00", 1_795_210_200), ("2026-11-20T22:30:00+01:00", 1_795_210_200),
        ] as [(String, Double)])
    func jellyfinDates(text: String, seconds: Double) throws {
        let date = try #require(ServerPlayState.parseDate(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test(
        arguments: [
            ("10.8.13", PlayStateRoutes.legacy), ("10.9.11", .unified), ("10.11.11", .unified), (nil, .unified),
        ] as [(String?, PlayStateRoutes)])
    func routesByVersion(version: String?, routes: PlayStateRoutes) {
        #expect(PlayStateRoutes.forVersion(version) == routes)
    }
}
