import Foundation
import MediaSyncCore
import MediaSyncServer

/// The server's play state of one item, as a listing or an answer by id showed it (`UserData`).
public struct ServerPlayState: Sendable, Equatable {
    public var played: Bool
    public var positionTicks: Int64
    public var lastPlayed: Date?

    public init(played: Bool, positionTicks: Int64 = 0, lastPlayed: Date? = nil) {
        self.played = played
        self.positionTicks = positionTicks
        self.lastPlayed = lastPlayed
    }

    /// From an item's `UserData`; nil when the item has none.
    public init?(_ userData: UserData?) {
        guard let userData else { return nil }
        self.init(
            played: userData.played ?? false, positionTicks: userData.playbackPositionTicks ?? 0,
            lastPlayed: userData.lastPlayedDate.flatMap(ServerPlayState.parseDate))
    }

    /// A Jellyfin date: ISO 8601 with up to seven fractional digits (.NET's round-trip form), `Z` or an offset.
    public static func parseDate(_ text: String) -> Date? {
        var text = text
        if !text.hasSuffix("Z"), !text.dropFirst(19).contains(where: { $0 == "+" || $0 == "-" }) { text += "Z" }
        var fraction = 0.0
        if let dot = text.firstIndex(of: ".") {
            let end = text[dot...].firstIndex { $0 == "Z" || $0 == "+" || $0 == "-" } ?? text.endIndex
            fraction = Double("0" + text[dot..<end]) ?? 0
            text.removeSubrange(dot..<end)
        }
        return WholeSecondTime.date(text).map { $0.addingTimeInterval(fraction) }
    }
}

/// Decides what a sync does with the play state recorded here. Pure: the clock is an argument.
public enum PlayStatePlanner {
    /// Dates within this of each other are the same moment (the server keeps ticks; events are whole seconds).
    static let sameMoment: TimeInterval = 1
    /// An event dated this far after the time of the sync was recorded by a clock set wrong.
    static let futureTolerance: TimeInterval = 300

    /// What to do with an item's latest pending event.
    public enum Decision: Sendable, Equatable {
        /// Send this change.
        case send(PlayStateChange)
        /// The server already shows it (an earlier sync sent it and was stopped before it noted that): nothing is
        /// sent, so a played mark is never counted twice.
        case alreadyThere
        /// The server's state is newer (the item was played elsewhere after this event): the server's is kept.
        case serverNewer(Date)
        /// The item is no longer on the server.
        case gone
    }

    /// The latest pending event per item (sent), and the earlier ones it replaces (never sent).
    public static func latestPending(_ events: [PlayEvent]) -> (latest: [PlayEvent], superseded: [PlayEvent]) {
        var latest: [String: PlayEvent] = [:]
        var superseded: [PlayEvent] = []
        for event in events where event.state == .pending {
            if let known = latest[event.itemId] {
                if (event.at, event.seq) >= (known.at, known.seq) {
                    superseded.append(known)
                    latest[event.itemId] = event
                } else {
                    superseded.append(event)
                }
            } else {
                latest[event.itemId] = event
            }
        }
        return (latest.values.sorted { $0.seq < $1.seq }, superseded.sorted { $0.seq < $1.seq })
    }

    /// The earliest time an event can honestly carry: before it, the clock that recorded it was not set.
    static let earliest = Date(timeIntervalSince1970: 978_307_200)  // 2001-01-01

    /// An event's time as sent: one from the future, or from before 2001 (a clock set wrong when it was recorded), is
    /// the time of the sync, so it neither wins nor loses every later conflict. `clamped` says whether that happened.
    public static func sendTime(_ event: PlayEvent, now: Date) -> (at: Date, clamped: Bool) {
        guard event.at.timeIntervalSince(now) > futureTolerance || event.at < earliest else { return (event.at, false) }
        return (Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down)), true)
    }

    /// What to do with an item's latest pending event, given the server's state (nil: the item is gone).
    public static func decide(_ event: PlayEvent, at time: Date, server: ServerPlayState?, routes: PlayStateRoutes)
        -> Decision
    {
        guard let server else { return .gone }
        func same(_ a: Date?, _ b: Date) -> Bool { a.map { abs($0.timeIntervalSince(b)) < sameMoment } ?? false }
        switch event.kind {
        case .played:
            if server.played, same(server.lastPlayed, time) { return .alreadyThere }
        case .unplayed:
            if !server.played, server.positionTicks == 0, server.lastPlayed == nil { return .alreadyThere }
        case .position:
            if !server.played, server.positionTicks == event.positionTicks,
                routes == .legacy || same(server.lastPlayed, time)
            {
                return .alreadyThere
            }
        }
        if let last = server.lastPlayed, last.timeIntervalSince(time) >= sameMoment { return .serverNewer(last) }
        switch event.kind {
        case .played: return .send(.played(at: time))
        case .unplayed: return .send(.unplayed)
        case .position: return .send(.position(ticks: event.positionTicks, at: time))
        }
    }

    /// The state an item has once the event is applied (what the next listing will show).
    public static func applying(_ event: PlayEvent, to server: ServerPlayState?) -> ServerPlayState {
        switch event.kind {
        case .played: return ServerPlayState(played: true, positionTicks: 0, lastPlayed: event.at)
        case .unplayed: return ServerPlayState(played: false)
        case .position:
            return ServerPlayState(
                played: server?.played ?? false, positionTicks: event.positionTicks, lastPlayed: event.at)
        }
    }

    /// What `--delete-played` does with an item of its selection.
    public enum Release: Sendable, Equatable {
        /// Not played: wanted as any other.
        case wanted
        /// Played, but not to go yet (within the grace period, or its played state is not yet on the server):
        /// kept when held, not fetched.
        case kept
        /// Played, on the server, and the grace period has passed: its files go (through the destructive gate).
        case released
    }

    /// - Parameters:
    ///   - server: the server's state as the listing showed it (after this sync's events were sent).
    ///   - pending: a local event of the item the server does not have yet.
    public static func release(server: ServerPlayState?, pending: PlayEvent?, grace: TimeInterval, now: Date)
        -> Release
    {
        if let pending {
            return pending.kind == .played ? .kept : .wanted
        }
        guard let server, server.played else { return .wanted }
        // Jellyfin always dates a played mark (`datePlayed ?? old ?? now`, `BaseItem.MarkPlayed`); one without a
        // date cannot have its grace period counted, so it is kept.
        guard let last = server.lastPlayed else { return .kept }
        return now.timeIntervalSince(last) >= grace ? .released : .kept
    }
}
