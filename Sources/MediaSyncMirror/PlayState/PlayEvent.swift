import Foundation

/// One change of an item's play state made here (by `mediasync played` or `mediasync play`), kept in the index
/// until the server has it.
public struct PlayEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, CaseIterable {
        /// Watched to the end.
        case played
        /// Marked as not watched.
        case unplayed
        /// Stopped at ``PlayEvent/positionTicks``.
        case position
    }

    /// Where the event stands.
    public enum State: String, Sendable, CaseIterable {
        /// Not yet on the server: the next sync sends it.
        case pending
        /// The server has it (sent, or found already there).
        case pushed
        /// A later event of the same item replaced it before it was sent.
        case superseded
        /// The server had a newer state (the item was played elsewhere later): the server's state was kept.
        case lost
        /// The item is no longer on the server: nothing to send it to.
        case dropped
        /// A podcast episode's: there is no server to send it to.
        case local
    }

    /// The order it was recorded in (assigned by the index).
    public var seq: Int64
    /// The Jellyfin item id (or a podcast episode's id).
    public var itemId: String
    public var kind: Kind
    /// For ``Kind/position``: where playback stopped, in 100 ns ticks.
    public var positionTicks: Int64
    /// When it happened (whole seconds).
    public var at: Date
    public var state: State
    /// Why it is not ``State/pushed`` (a conflict, a refusal), for `mediasync played --list`.
    public var note: String?

    public init(
        seq: Int64 = 0, itemId: String, kind: Kind, positionTicks: Int64 = 0, at: Date, state: State = .pending,
        note: String? = nil
    ) {
        self.seq = seq
        self.itemId = itemId
        self.kind = kind
        self.positionTicks = kind == .position ? max(0, positionTicks) : 0
        self.at = Date(timeIntervalSince1970: at.timeIntervalSince1970.rounded(.down))
        self.state = state
        self.note = note
    }
}

/// Jellyfin's resume rules, applied to where a player stopped (`UserDataManager.UpdatePlayState`,
/// `ServerConfiguration.MinResumePct` 5 and `MaxResumePct` 90, the same in 10.8–10.11).
public enum ResumeRule {
    public static let minResumePercent = 5.0
    public static let maxResumePercent = 90.0
    /// An audiobook keeps no position in its first minutes, and is played once fewer are left
    /// (`ServerConfiguration.MinAudiobookResume` and `MaxAudiobookResume`, 5 in 10.8–10.11).
    public static let minAudiobookResumeMinutes = 5.0
    public static let maxAudiobookResumeMinutes = 5.0

    /// Which of Jellyfin's rules an item's stop follows (`UserDataManager.UpdatePlayState` L212–286, v10.10.7).
    public enum Media: Sendable, Equatable {
        /// A movie, an episode, a podcast episode: 5 % and 90 %.
        case video
        /// An `AudioBook`: minutes from the start and minutes left, whatever its length (L248–263).
        case audiobook
        /// A `Book`: the position as reported (neither rule applies to it, L222).
        case book
    }

    /// What stopping at `position` of an item `runtime` long records: played past 90 %, nothing under 5 %
    /// (nil: the item stays as it was), else the position; an audiobook by its first and last 5 minutes instead, a
    /// book as it is. Without a runtime, a position is kept as it is.
    public static func event(
        itemId: String, position: Int64, runtime: Int64?, at: Date, media: Media = .video
    ) -> PlayEvent? {
        guard let runtime, runtime > 0, media != .book else {
            return position > 0 ? PlayEvent(itemId: itemId, kind: .position, positionTicks: position, at: at) : nil
        }
        if media == .audiobook {
            guard position > 0 else { return nil }
            let minutesIn = Double(position) / 600_000_000
            let minutesLeft = Double(runtime - position) / 600_000_000
            if minutesIn < minAudiobookResumeMinutes { return nil }
            if minutesLeft < maxAudiobookResumeMinutes || position >= runtime {
                return PlayEvent(itemId: itemId, kind: .played, at: at)
            }
            return PlayEvent(itemId: itemId, kind: .position, positionTicks: position, at: at)
        }
        let percent = Double(position) / Double(runtime) * 100
        if percent > maxResumePercent || position >= runtime {
            return PlayEvent(itemId: itemId, kind: .played, at: at)
        }
        if percent < minResumePercent { return nil }
        return PlayEvent(itemId: itemId, kind: .position, positionTicks: position, at: at)
    }
}
