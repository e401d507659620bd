import Foundation
import GRDB
import MediaSyncCore

/// The podcast account's state in the index: what both sides agreed on, the actions waiting to be sent, and the
/// keys of the actions applied here. Each change is one transaction, so a killed run leaves a state the next
/// exchange finishes from.
extension MirrorIndex {
    /// An outgoing action and where it stands.
    struct OutgoingAction: Sendable, Equatable {
        /// Where an outgoing action stands. `pending` → `sending` (written before the POST) → `sent` once the
        /// server answered; `sending` goes back to `pending` when reading the server's actions back does not find
        /// it (the POST's answer was lost before it arrived); `pending` → `lost` when a newer action from another
        /// device replaced it first.
        enum State: String, Sendable {
            case pending, sending, sent, lost
        }

        var seq: Int64
        var episodeId: String
        var action: EpisodeAction
        var state: State
        /// The server time actions were asked from when it was sent (for reading it back).
        var since: Int64?
    }

    static let accountSettingPrefix = "podcastAccount."

    func accountSetting(_ name: String) throws -> String? {
        try setting(MirrorIndex.accountSettingPrefix + name)
    }

    func setAccountSetting(_ name: String, _ value: String?) throws {
        try setSetting(MirrorIndex.accountSettingPrefix + name, value)
    }

    /// The feeds agreed at the last exchange.
    func agreedFeeds() throws -> [AccountPlanner.AgreedFeed] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT url, podcastId FROM account_feed ORDER BY url").map {
                AccountPlanner.AgreedFeed(url: $0["url"], podcastId: $0["podcastId"])
            }
        }
    }

    /// Records feeds as agreed (replacing the podcast id of a URL recorded before).
    func agree(_ feeds: [AccountPlanner.AgreedFeed]) throws {
        guard !feeds.isEmpty else { return }
        try database.write { db in
            for feed in feeds {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO account_feed (url, podcastId) VALUES (?, ?)",
                    arguments: [feed.url, feed.podcastId])
            }
        }
    }

    /// Forgets agreed feeds, by URL and by podcast id.
    func disagree(urls: [String], podcastIds: [String] = []) throws {
        guard !urls.isEmpty || !podcastIds.isEmpty else { return }
        try database.write { db in
            for url in urls { try db.execute(sql: "DELETE FROM account_feed WHERE url = ?", arguments: [url]) }
            for id in podcastIds {
                try db.execute(sql: "DELETE FROM account_feed WHERE podcastId = ?", arguments: [id])
            }
        }
    }

    /// Outgoing actions, oldest first: all, or those in one state.
    func outgoingActions(state: OutgoingAction.State? = nil) throws -> [OutgoingAction] {
        try database.read { db in
            let rows =
                try state.map {
                    try Row.fetchAll(
                        db, sql: "SELECT * FROM account_outbox WHERE state = ? ORDER BY seq", arguments: [$0.rawValue])
                } ?? Row.fetchAll(db, sql: "SELECT * FROM account_outbox ORDER BY seq")
            return rows.compactMap { row -> OutgoingAction? in
                let body: Data = row["body"]
                guard let action = try? JSONDecoder().decode(EpisodeAction.self, from: body),
                    let state = OutgoingAction.State(rawValue: row["state"])
                else { return nil }
                return OutgoingAction(
                    seq: row["seq"], episodeId: row["episodeId"], action: action, state: state, since: row["since"])
            }
        }
    }

    /// Moves outgoing actions to a state (and, for `sending`, records the server time they are read back from).
    func setOutgoing(_ seqs: [Int64], to state: OutgoingAction.State, since: Int64? = nil) throws {
        guard !seqs.isEmpty else { return }
        try database.write { db in
            for seq in seqs {
                try db.execute(
                    sql: "UPDATE account_outbox SET state = ?, since = COALESCE(?, since) WHERE seq = ?",
                    arguments: [state.rawValue, since, seq])
            }
        }
    }

    /// What one exchange takes into the queue, in one transaction.
    struct Enqueued: Sendable {
        var actions: [(episodeId: String, action: EpisodeAction)] = []
        /// The last play event looked at.
        var playSeq: Int64?
        /// Episodes whose download is now announced (with the action that did), and those whose deletion is.
        var announced: [(episodeId: String, action: EpisodeAction)] = []
        var withdrawn: [String] = []
    }

    func enqueue(_ batch: Enqueued) throws {
        try database.write { db in
            for (episodeId, action) in batch.actions {
                try db.execute(
                    sql: """
                        INSERT INTO account_outbox (episodeId, action, body, key, state) VALUES (?, ?, ?, ?, 'pending')
                        """,
                    arguments: [episodeId, action.action, try JSONEncoder().encode(action), action.key])
            }
            if let playSeq = batch.playSeq {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)",
                    arguments: [MirrorIndex.accountSettingPrefix + "playSeq", String(playSeq)])
            }
            for (id, action) in batch.announced {
                try db.execute(
                    sql:
                        "INSERT OR REPLACE INTO account_episode (episodeId, podcast, episode, guid) VALUES (?, ?, ?, ?)",
                    arguments: [id, action.podcast, action.episode, action.guid])
            }
            for id in batch.withdrawn {
                try db.execute(sql: "DELETE FROM account_episode WHERE episodeId = ?", arguments: [id])
            }
        }
    }

    /// The episodes whose download was announced: the feed URL, enclosure URL and guid it was announced with.
    func announcedEpisodes() throws -> [String: (podcast: String, episode: String, guid: String?)] {
        try database.read { db in
            var announced: [String: (podcast: String, episode: String, guid: String?)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM account_episode") {
                announced[row["episodeId"]] = (row["podcast"], row["episode"], row["guid"])
            }
            return announced
        }
    }

    /// The keys of the actions applied (or set aside) here.
    func appliedKeys() throws -> Set<String> {
        try database.read { db in Set(try String.fetchAll(db, sql: "SELECT key FROM account_applied")) }
    }

    /// The play events recorded from the account (not sent back to it).
    func appliedPlaySeqs() throws -> Set<Int64> {
        try database.read { db in
            Set(try Int64.fetchAll(db, sql: "SELECT playSeq FROM account_applied WHERE playSeq IS NOT NULL"))
        }
    }

    /// Applies pulled actions in one transaction: their keys, the play events they set (recorded as an episode's
    /// local state, superseding the earlier one), the outgoing actions they beat, and the server time to ask from
    /// next (stored last, so a failure before it asks again and the keys keep anything from applying twice).
    func applyPulled(
        keys: [String], events: [(key: String, event: PlayEvent)], lost: [Int64], since: Int64?
    ) throws {
        try database.write { db in
            for key in keys {
                try db.execute(sql: "INSERT OR IGNORE INTO account_applied (key) VALUES (?)", arguments: [key])
            }
            for (key, event) in events {
                try db.execute(
                    sql: "UPDATE play_event SET state = ? WHERE itemId = ? AND state = ?",
                    arguments: [PlayEvent.State.superseded.rawValue, event.itemId, PlayEvent.State.local.rawValue])
                try db.execute(
                    sql:
                        "INSERT INTO play_event (itemId, kind, positionTicks, at, state, note) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        event.itemId, event.kind.rawValue, event.positionTicks, WholeSecondTime.string(event.at),
                        event.state.rawValue, event.note,
                    ])
                try db.execute(
                    sql: "INSERT OR REPLACE INTO account_applied (key, playSeq) VALUES (?, ?)",
                    arguments: [key, db.lastInsertedRowID])
            }
            for seq in lost {
                try db.execute(
                    sql: "UPDATE account_outbox SET state = 'lost' WHERE seq = ? AND state = 'pending'",
                    arguments: [seq])
            }
            if let since {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO setting (key, value) VALUES (?, ?)",
                    arguments: [MirrorIndex.accountSettingPrefix + "actionsSince", String(since)])
            }
        }
    }

    /// Forgets the account's whole state (`podcast account --remove`): nothing about podcasts or play state.
    func forgetAccount() throws {
        try database.write { db in
            try db.execute(
                sql: """
                    DELETE FROM account_feed; DELETE FROM account_outbox; DELETE FROM account_applied;
                    DELETE FROM account_episode; DELETE FROM episode_url WHERE origin = 'rewrite';
                    """)
            try db.execute(
                sql: "DELETE FROM setting WHERE key LIKE ?", arguments: [MirrorIndex.accountSettingPrefix + "%"])
        }
    }

    /// The media file of each podcast episode this mirror holds, by episode id (the path in the mirror root).
    func heldEpisodeFiles() throws -> [String: String] {
        try database.read { db in
            var held: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT key, path FROM file WHERE kind = 'media'") {
                let key = FileKey(rawValue: row["key"])
                if case .podcastEpisode(_, let episodeId)? = key.parts { held[episodeId] = row["path"] }
            }
            return held
        }
    }

    /// Where an episode URL alias came from.
    enum EpisodeURLOrigin: String, Sendable {
        /// The URL a download of the enclosure was redirected to.
        case redirect
        /// The URL the account's server rewrote the enclosure URL to (`update_urls`).
        case rewrite
    }

    /// Records another URL an episode answers to. A URL already recorded keeps its first episode (an alias is
    /// adopted once).
    /// - Returns: whether it was new.
    @discardableResult
    func recordEpisodeURL(_ url: String, episodeId: String, origin: EpisodeURLOrigin) throws -> Bool {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO episode_url (url, episodeId, origin) VALUES (?, ?, ?)",
                arguments: [url, episodeId, origin.rawValue])
            return db.changesCount > 0
        }
    }

    /// The other URLs of each episode, oldest first, by episode id.
    func episodeURLs() throws -> [String: [String]] {
        try database.read { db in
            var urls: [String: [String]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT url, episodeId FROM episode_url ORDER BY rowid") {
                urls[row["episodeId"], default: []].append(row["url"])
            }
            return urls
        }
    }
}
