import Foundation
import MediaSyncCore
import MediaSyncServer

/// Sends the play state recorded here to the server, once per event, before a sync lists anything.
///
/// Only each item's latest pending event is sent (the earlier ones are superseded). The server's state of those
/// items is asked for first, by id: an event the server already shows is settled without a request (a sync
/// stopped between sending and recording does not count a watch twice), a newer state on the server wins (the
/// item was played elsewhere later; the offline event is reported as lost), and an item no longer on the server
/// drops its event. Events that could not be sent stay pending for the next sync.
struct PlayStateSync {
    let index: MirrorIndex
    let server: any MediaServer
    let now: Date

    /// What was done, for the report.
    struct Outcome {
        var sent = 0
        var lines: [String] = []
        var failures: [String] = []
    }

    func push() async throws -> Outcome {
        var outcome = Outcome()
        let (latest, superseded) = PlayStatePlanner.latestPending(try index.playEvents(state: .pending))
        try index.settle(superseded.map { ($0.seq, .superseded, "replaced by a later event before it was sent") })
        guard !latest.isEmpty else { return outcome }
        var states: [String: ServerPlayState]
        var unknown = Set<String>()
        do {
            let found = try await server.existingItems(ids: latest.map(\.itemId), below: nil)
            states = Dictionary(
                found.map { ($0.id.lowercased(), ServerPlayState($0.userData) ?? ServerPlayState(played: false)) },
                uniquingKeysWith: { first, _ in first })
            // An item the batch answer left out is asked for alone: only a 404 drops its mark (a short answer is no
            // proof that an item is gone).
            for event in latest where states[event.itemId.lowercased()] == nil {
                do {
                    let item = try await server.item(id: event.itemId)
                    states[event.itemId.lowercased()] = ServerPlayState(item.userData) ?? ServerPlayState(played: false)
                } catch let error as JellyfinError where error.kind == .notFound {
                    continue
                } catch {
                    unknown.insert(event.itemId)
                }
            }
        } catch {
            outcome.failures.append(
                "play state of \(latest.count) items not sent (\(error)); kept for the next sync")
            return outcome
        }
        let routes = await server.playStateRoutes()
        var settled: [(seq: Int64, state: PlayEvent.State, note: String?)] = []
        defer { try? index.settle(settled) }
        func drop(_ event: PlayEvent, note: String) {
            settled.append((event.seq, .dropped, note))
            outcome.lines.append(
                "item \(event.itemId) is no longer on the server: its offline \(event.kind.rawValue) state is dropped")
        }
        for event in latest {
            if unknown.contains(event.itemId) {
                outcome.failures.append(
                    "the server could not say whether item \(event.itemId) still exists; its "
                        + "\(event.kind.rawValue) state is kept for the next sync")
                continue
            }
            let (time, clamped) = PlayStatePlanner.sendTime(event, now: now)
            if clamped {
                outcome.lines.append(
                    "item \(event.itemId): its \(event.kind.rawValue) event is dated \(WholeSecondTime.string(event.at)) "
                        + "(a clock set wrong when it was recorded?): sent with the time of this sync")
            }
            let server = states[event.itemId.lowercased()]
            switch PlayStatePlanner.decide(event, at: time, server: server, routes: routes) {
            case .alreadyThere:
                settled.append((event.seq, .pushed, "already on the server"))
            case .gone:
                drop(event, note: "the item is no longer on the server")
            case .serverNewer(let date):
                let note =
                    "played elsewhere at \(WholeSecondTime.string(date)), after this \(event.kind.rawValue) event of "
                    + "\(WholeSecondTime.string(event.at)): the server's state is kept"
                settled.append((event.seq, .lost, note))
                outcome.lines.append("item \(event.itemId): \(note)")
            case .send(let change):
                do {
                    try await self.server.send(change, itemId: event.itemId, routes: routes)
                    settled.append((event.seq, .pushed, nil))
                    outcome.sent += 1
                    if let date = server?.lastPlayed, server?.played != (event.kind == .played) {
                        outcome.lines.append(
                            "item \(event.itemId): the offline \(event.kind.rawValue) state (\(WholeSecondTime.string(event.at))) "
                                + "is newer than the server's (\(WholeSecondTime.string(date))) and replaced it")
                    }
                } catch let error as JellyfinError where error.kind == .notFound {
                    drop(event, note: "the server answered 404: the item is gone")
                } catch let error as JellyfinError where error.kind == .transport || error.kind == .cancelled {
                    // The server went away: the rest would fail the same way.
                    outcome.failures.append(
                        "play state not sent (\(error.description)); kept for the next sync")
                    return outcome
                } catch {
                    outcome.failures.append(
                        "the server refused the \(event.kind.rawValue) state of item \(event.itemId) (\(error)); kept "
                            + "for the next sync")
                }
            }
        }
        return outcome
    }
}
