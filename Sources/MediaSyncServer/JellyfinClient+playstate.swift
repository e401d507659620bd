import Foundation
import MediaSyncCore
import MediaSyncJSON

/// A change of the user's play state of one item, as a client sends it.
public enum PlayStateChange: Sendable, Equatable {
    /// Watched to the end at this time.
    case played(at: Date)
    /// Not watched (Jellyfin resets the count, the position and the date).
    case unplayed
    /// Stopped at this position at this time.
    case position(ticks: Int64, at: Date)
}

/// Which play-state routes a server has.
public enum PlayStateRoutes: Sendable, Equatable {
    /// 10.8: `/Users/{userId}/PlayedItems/{itemId}` for marks; a position only as a playback-stop report
    /// (`DELETE /Users/{userId}/PlayingItems/{itemId}?positionTicks=`), where the server applies its own resume
    /// rules and keeps its own date (`PlaystateController`, `UserDataManager.UpdatePlayState`, v10.8.13).
    case legacy
    /// 10.9 and later: `/UserPlayedItems/{itemId}` and `POST /UserItems/{itemId}/UserData`, which stores the
    /// position and the date as sent (`PlaystateController` L72/L138, `ItemsController` L1022, v10.10.7).
    case unified

    /// The routes of a server of this `Version` (from `/System/Info/Public`): before 10.9, the legacy ones.
    public static func forVersion(_ version: String?) -> PlayStateRoutes {
        let parts = (version ?? "").split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2 else { return .unified }
        return (parts[0], parts[1]) < (10, 9) ? .legacy : .unified
    }
}

extension JellyfinClient {
    /// Sends one play-state change of an item.
    /// - Throws: ``JellyfinError`` (``JellyfinError/Kind/notFound`` when the item is gone — on 10.8, whose route
    ///   has no null check, a 500).
    public func send(_ change: PlayStateChange, itemId: String, routes: PlayStateRoutes) async throws {
        let userId = try requireUserId()
        let item = try JellyfinID.pathSegment(itemId, role: "item id")
        let user = try JellyfinID.pathSegment(userId, role: "user id")
        let resource = "item \(itemId)"
        switch (change, routes) {
        case (.played(let date), .legacy):
            _ = try await send(
                Call(
                    method: "POST", path: "/Users/\(user)/PlayedItems/\(item)",
                    query: [("datePlayed", WholeSecondTime.string(date))], action: "mark an item played",
                    resource: resource))
        case (.played(let date), .unified):
            _ = try await send(
                Call(
                    method: "POST", path: "/UserPlayedItems/\(item)",
                    query: [("userId", userId), ("datePlayed", WholeSecondTime.string(date))],
                    action: "mark an item played", resource: resource))
        case (.unplayed, .legacy):
            _ = try await send(
                Call(
                    method: "DELETE", path: "/Users/\(user)/PlayedItems/\(item)", action: "mark an item unplayed",
                    resource: resource))
        case (.unplayed, .unified):
            _ = try await send(
                Call(
                    method: "DELETE", path: "/UserPlayedItems/\(item)", query: [("userId", userId)],
                    action: "mark an item unplayed", resource: resource))
        case (.position(let ticks, _), .legacy):
            _ = try await send(
                Call(
                    method: "DELETE", path: "/Users/\(user)/PlayingItems/\(item)",
                    query: [("positionTicks", String(ticks))], action: "report where playback stopped",
                    resource: resource))
        case (.position(let ticks, let date), .unified):
            var body: [UInt8] = []
            JSONWriter.write(
                .object([
                    "PlaybackPositionTicks": .number(Double(ticks)),
                    "LastPlayedDate": .string(WholeSecondTime.string(date)),
                ]), indent: 0, into: &body)
            _ = try await send(
                Call(
                    method: "POST", path: "/UserItems/\(item)/UserData", query: [("userId", userId)],
                    body: body, action: "save where playback stopped", resource: resource))
        }
    }
}
