import Foundation
import GRDB
import MediaSyncCore

/// The play events and the stored settings in the index. An event is one row, written in one transaction: it
/// survives a killed process and weeks offline, and a sync sends it once (see ``PlayStateSync``).
extension MirrorIndex {
    /// Records an event; earlier pending events of the same item are superseded by it (only the latest state of
    /// an item is sent). Returns the event as recorded.
    @discardableResult
    public func record(_ event: PlayEvent) throws -> PlayEvent {
        try database.write { db in
            if event.state == .pending || event.state == .local {
                try db.execute(
                    sql: "UPDATE play_event SET state = ? WHERE itemId = ? AND state = ?",
                    arguments: [PlayEvent.State.superseded.rawValue, event.itemId, event.state.rawValue])
            }
            try db.execute(
                sql: "INSERT INTO play_event (itemId, kind, positionTicks, at, state, note) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    event.itemId, event.kind.rawValue, event.positionTicks, WholeSecondTime.string(event.at),
                    event.state.rawValue, event.note,
                ])
            var recorded = event
            recorded.seq = db.lastInsertedRowID
            return recorded
        }
    }

    /// Events, oldest first: all of them, or those in one state.
    public func playEvents(state: PlayEvent.State? = nil) throws -> [PlayEvent] {
        try database.read { db in
            let rows: [Row]
            if let state {
                rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM play_event WHERE state = ? ORDER BY seq", arguments: [state.rawValue])
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT * FROM play_event ORDER BY seq")
            }
            return rows.compactMap { row -> PlayEvent? in
                guard let kind = PlayEvent.Kind(rawValue: row["kind"]),
                    let state = PlayEvent.State(rawValue: row["state"]),
                    let at = WholeSecondTime.date(row["at"])
                else { return nil }
                return PlayEvent(
                    seq: row["seq"], itemId: row["itemId"], kind: kind, positionTicks: row["positionTicks"], at: at,
                    state: state, note: row["note"])
            }
        }
    }

    /// Settles events (after a sync sent them, found them there, or lost a conflict), in one transaction.
    public func settle(_ outcomes: [(seq: Int64, state: PlayEvent.State, note: String?)]) throws {
        guard !outcomes.isEmpty else { return }
        try database.write { db in
            for outcome in outcomes {
                try db.execute(
                    sql: "UPDATE play_event SET state = ?, note = ? WHERE seq = ?",
                    arguments: [outcome.state.rawValue, outcome.note, outcome.seq])
            }
        }
    }

    // MARK: Settings

    /// A stored setting of this mirror (`mediasync config`), nil when unset.
    public func setting(_ key: String) throws -> String? {
        try database.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key])
        }
    }

    /// Stores a setting; nil removes it.
    public func setSetting(_ key: String, _ value: String?) throws {
        try database.write { db in
            if let value {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)", arguments: [key, value])
            } else {
                try db.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [key])
            }
        }
    }
}
