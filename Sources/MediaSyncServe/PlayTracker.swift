import Foundation
import MediaSyncMirror
import Synchronization

/// Played state from `serve`'s clients, recorded as the same offline marks `mediasync played` records (the index's
/// play events), so the next `sync` sends each viewing to the home server once.
///
/// Progress reports only move an item's position in memory: one viewing is one mark, recorded when the client
/// reports the stop, or, if it never does, when the same client starts playing something again. Marks apply
/// Jellyfin's resume rules (``ResumeRule``: played past 90 %, nothing under 5 %).
final class PlayTracker: Sendable {
    /// One client's playback that has not been reported stopped.
    struct Viewing: Sendable, Equatable {
        var itemId: String
        var positionTicks: Int64
        var playSessionId: String?
    }

    private struct State: Sendable {
        /// Open viewings by client (its device id, else its token).
        var viewings: [String: Viewing] = [:]
        /// The latest mark of each item not yet on the home server (pending, or local for podcasts).
        var marks: [String: PlayEvent] = [:]
    }

    private let book: PlayStateBook
    private let root: MirrorRoot
    private let state = Mutex(State())

    init(book: PlayStateBook, root: MirrorRoot) {
        self.book = book
        self.root = root
    }

    /// Reads the marks not yet sent again (after the index changed: a sync sent them, or `mediasync played` ran).
    func reloadMarks() {
        guard let events = try? book.events() else { return }
        var marks: [String: PlayEvent] = [:]
        for event in events where event.state == .pending || event.state == .local { marks[event.itemId] = event }
        state.withLock { $0.marks = marks }
    }

    /// The item's state: the home server's, with the latest mark made here over it.
    func userState(_ item: CatalogItem) -> UserState {
        let upstream = UserState.upstream(item)
        guard let mark = state.withLock({ $0.marks[item.markId] }) else { return upstream }
        return upstream.applying(mark)
    }

    /// `Sessions/Playing`: a new viewing; the client's earlier one, never reported stopped, is recorded first.
    func started(client: String, item: CatalogItem, positionTicks: Int64, playSessionId: String?, catalog: Catalog)
        throws
    {
        let previous = state.withLock { state -> Viewing? in
            let previous = state.viewings[client]
            state.viewings[client] = Viewing(
                itemId: item.id, positionTicks: positionTicks, playSessionId: playSessionId)
            return previous
        }
        if let previous, let previousItem = catalog.item(previous.itemId) {
            try record(previousItem, positionTicks: previous.positionTicks)
        }
    }

    /// `Sessions/Playing/Progress`: moves the position in memory only.
    func progressed(client: String, item: CatalogItem, positionTicks: Int64?, playSessionId: String?, catalog: Catalog)
        throws
    {
        let previous = state.withLock { state -> Viewing? in
            if var viewing = state.viewings[client], viewing.itemId == item.id {
                if let positionTicks { viewing.positionTicks = positionTicks }
                state.viewings[client] = viewing
                return nil
            }
            let previous = state.viewings[client]
            state.viewings[client] = Viewing(
                itemId: item.id, positionTicks: positionTicks ?? 0, playSessionId: playSessionId)
            return previous
        }
        if let previous, let previousItem = catalog.item(previous.itemId) {
            try record(previousItem, positionTicks: previous.positionTicks)
        }
    }

    /// `Sessions/Playing/Stopped`: the viewing is recorded (at the reported position, else the last progress).
    func stopped(client: String, item: CatalogItem, positionTicks: Int64?) throws {
        let viewing = state.withLock { state -> Viewing? in
            guard let viewing = state.viewings[client], viewing.itemId == item.id else { return nil }
            state.viewings[client] = nil
            return viewing
        }
        guard let position = positionTicks ?? viewing?.positionTicks else { return }
        try record(item, positionTicks: position)
    }

    /// Marks played or unplayed (`UserPlayedItems`), or a position (`UserItems/{id}/UserData`), as given.
    func mark(_ item: CatalogItem, _ kind: PlayEvent.Kind, positionTicks: Int64 = 0, at: Date = Date()) throws {
        let target = try book.target(item.markId, root: root)
        remember(try book.mark(target, kind, positionTicks: positionTicks, at: at))
    }

    private func record(_ item: CatalogItem, positionTicks: Int64) throws {
        let target = try book.target(item.markId, root: root)
        if item.type == "Audio" && !target.isPodcast {
            // A music track does not resume: a stop marks it played, or records nothing.
            if Self.trackPlayed(position: positionTicks, runtime: item.runTimeTicks) {
                remember(try book.mark(target, .played))
            }
            return
        }
        if let event = try book.stopped(target, position: positionTicks, runtime: item.runTimeTicks) {
            remember(event)
        }
    }

    /// Whether a stop at `position` plays a music track through, as Jellyfin's `UserDataManager.UpdatePlayState`
    /// decides for an `Audio` item (v10.10.7 L212–286), which keeps no position (`SupportsPositionTicksResume` is
    /// false): without a known length, yes; past 90 % (or the end), yes; under 5 %, no; in between, yes for a track
    /// shorter than `MinResumeDurationSeconds` (300 s, `ServerConfiguration`), else no (the position is dropped).
    static func trackPlayed(position: Int64, runtime: Int64?) -> Bool {
        guard let runtime, runtime > 0 else { return true }
        guard position > 0 else { return false }
        let percent = Double(position) / Double(runtime) * 100
        if percent < ResumeRule.minResumePercent { return false }
        if percent > ResumeRule.maxResumePercent || position >= runtime { return true }
        return runtime < 300 * 10_000_000
    }

    private func remember(_ event: PlayEvent) {
        state.withLock { $0.marks[event.itemId] = event }
    }
}
