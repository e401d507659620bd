import Foundation
import MediaSyncJSON
import MediaSyncMirror

/// One item's played state as `serve` answers it (`UserItemDataDto`): the home server's as the last sync left it
/// in `metadata.json`, with the marks made here since (by `mediasync played`, `mediasync play` or a client of
/// `serve`) applied over it.
public struct UserState: Sendable, Equatable {
    public var played = false
    public var positionTicks: Int64 = 0
    public var playCount = 0
    public var isFavorite = false
    /// ISO 8601.
    public var lastPlayed: String?

    public init(
        played: Bool = false, positionTicks: Int64 = 0, playCount: Int = 0, isFavorite: Bool = false,
        lastPlayed: String? = nil
    ) {
        self.played = played
        self.positionTicks = positionTicks
        self.playCount = playCount
        self.isFavorite = isFavorite
        self.lastPlayed = lastPlayed
    }

    /// Started and not finished: what `Filters=IsResumable` and the resume shelf list.
    public var isResumable: Bool { positionTicks > 0 && !played }

    /// The state the home server sent, read from an item's `UserData` object.
    public static func upstream(_ item: CatalogItem) -> UserState { item.upstreamState }

    /// The state an upstream `UserData` object gives.
    init(upstream data: JSONObject) {
        self.init(
            played: data["Played"]?.boolValue ?? false,
            positionTicks: data["PlaybackPositionTicks"]?.intValue ?? 0,
            playCount: Int(data["PlayCount"]?.intValue ?? 0), isFavorite: data["IsFavorite"]?.boolValue ?? false,
            lastPlayed: data["LastPlayedDate"]?.stringValue)
    }

    /// This state with a mark made here applied, as the home server applies it once the next sync sends it:
    /// played sets the date, clears the position and counts a play; unplayed clears all three; a position keeps
    /// the played flag as it was (`UserDataManager.SaveUserData` stores what is sent).
    public func applying(_ event: PlayEvent) -> UserState {
        var state = self
        let date = WholeSecondTime.string(event.at)
        switch event.kind {
        case .played:
            state.played = true
            state.positionTicks = 0
            state.playCount += 1
            state.lastPlayed = date
        case .unplayed:
            state.played = false
            state.positionTicks = 0
            state.playCount = 0
            state.lastPlayed = nil
        case .position:
            state.positionTicks = event.positionTicks
            state.lastPlayed = date
        }
        return state
    }
}
