import Foundation
import MediaSyncJSON

/// One user's play state of an item, as the test server keeps it (`UserItemData`).
public struct TestUserData: Sendable, Equatable {
    public var played: Bool
    public var playCount: Int
    public var playbackPositionTicks: Int64
    public var lastPlayedDate: Date?

    public init(played: Bool, playCount: Int, playbackPositionTicks: Int64, lastPlayedDate: Date?) {
        self.played = played
        self.playCount = playCount
        self.playbackPositionTicks = playbackPositionTicks
        self.lastPlayedDate = lastPlayedDate
    }
}

/// The play-state routes (`PlaystateController`, `ItemsController`), modelled per version from Jellyfin's code at
/// v10.8.13, v10.9.11, v10.10.7 and v10.11.11 (see `../shared/jellyfin-api/SERVER-FACTS.md`, "User data").
extension TestServer {
    /// The user's play state of an item (nil for an unknown item).
    public func userData(of itemId: String) -> TestUserData? {
        library.item(withId: TestServer.normalizeID(itemId)).map {
            TestUserData(
                played: $0.played, playCount: $0.playCount, playbackPositionTicks: $0.playbackPositionTicks,
                lastPlayedDate: $0.lastPlayedDate)
        }
    }

    /// Changes an item's play state as another device of the same user would (a client on a television).
    public func setUserData(of itemId: String, _ data: TestUserData) {
        let id = TestServer.normalizeID(itemId)
        updateLibrary { library in
            guard let position = library.items.firstIndex(where: { $0.id == id }) else { return }
            library.items[position].played = data.played
            library.items[position].playCount = data.playCount
            library.items[position].playbackPositionTicks = data.playbackPositionTicks
            library.items[position].lastPlayedDate = data.lastPlayedDate
        }
    }

    /// Answers the play-state routes; nil when the request is not one of them.
    func userDataResponse(_ request: RecordedRequest) -> HTTPResponse? {
        let path = RoutePath(request.path)
        func match(_ pattern: [String]) -> [String]? { path.match(pattern) }
        let method = request.method
        let profile = self.profile
        // (userId in the path or nil, itemId, what)
        enum Route { case played, unplayed, userData, stopped }
        var route: (user: String?, item: String, what: Route)?
        if let c = match(["users", "*", "playeditems", "*"]) {
            // PlaystateController: `Users/{userId}/PlayedItems/{itemId}` in every version (10.8.13 L73/L99; an
            // obsolete alias from 10.9, 10.10.7 L119/L183).
            if method == "POST" { route = (c[0], c[1], .played) }
            if method == "DELETE" { route = (c[0], c[1], .unplayed) }
        } else if let c = match(["userplayeditems", "*"]), profile.hasUnifiedRoutes {
            // `UserPlayedItems/{itemId}?userId=`: added in 10.9 (10.10.7 L72/L138).
            if method == "POST" { route = (request.queryValue("userId"), c[0], .played) }
            if method == "DELETE" { route = (request.queryValue("userId"), c[0], .unplayed) }
        } else if let c = match(["useritems", "*", "userdata"]), profile.hasUnifiedRoutes {
            // `POST UserItems/{itemId}/UserData`: added in 10.9 (ItemsController 10.10.7 L1022).
            if method == "POST" { route = (request.queryValue("userId"), c[0], .userData) }
        } else if let c = match(["users", "*", "items", "*", "userdata"]), profile.hasUnifiedRoutes {
            // Its legacy alias (ItemsController 10.10.7 L1062).
            if method == "POST" { route = (c[0], c[1], .userData) }
        } else if let c = match(["users", "*", "playingitems", "*"]) {
            // A playback-stop report (PlaystateController 10.8.13 L299; 10.10.7 L482).
            if method == "DELETE" { route = (c[0], c[1], .stopped) }
        } else if let c = match(["playingitems", "*"]), profile.hasUnifiedRoutes {
            // Its 10.9 form (10.10.7 L439).
            if method == "DELETE" { route = (nil, c[0], .stopped) }
        } else {
            return nil
        }
        guard let route else { return .empty(405) }
        let library = self.library
        let who = caller(request, library: library)
        guard who != .anonymous else { return .empty(401) }
        // `RequestHelpers.GetUserId`: a non-administrator naming another user is refused (10.10.7 L66–84).
        if let named = route.user, !named.isEmpty, TestServer.normalizeID(named) != library.userId {
            return who == .apiKey ? .empty(404) : .empty(403)
        }
        let id = TestServer.normalizeID(route.item)
        guard let item = library.item(withId: id), !library.isInaccessible(item) else {
            // 10.8 looks the item up without a null check before `UpdatePlayedStatus` (10.8.13 L341–355): a
            // NullReferenceException, answered 500. 10.9+ answers 404 (10.10.7 L86).
            if profile == .v10_8, route.what == .played || route.what == .unplayed { return .empty(500) }
            return .empty(404)
        }
        var data = TestUserData(
            played: item.played, playCount: item.playCount, playbackPositionTicks: item.playbackPositionTicks,
            lastPlayedDate: item.lastPlayedDate)
        switch route.what {
        case .played:
            // `BaseItem.MarkPlayed` (10.10.7 L1819–1846): the count grows only when a date is given, is at least
            // one, the position resets, `LastPlayedDate = datePlayed ?? old ?? now`.
            var datePlayed: Date?
            if let text = request.queryValue("datePlayed") {
                guard let parsed = TestServer.legacyDate(text) else { return .empty(400) }
                datePlayed = parsed
            }
            if datePlayed != nil { data.playCount += 1 }
            data.playCount = max(data.playCount, 1)
            data.playbackPositionTicks = 0
            data.lastPlayedDate = datePlayed ?? data.lastPlayedDate ?? Date()
            data.played = true
        case .unplayed:
            // `BaseItem.MarkUnplayed` (10.10.7 L1853–1868).
            data = TestUserData(played: false, playCount: 0, playbackPositionTicks: 0, lastPlayedDate: nil)
        case .userData:
            // `UserDataManager.SaveUserData(user, item, UpdateUserItemDataDto)` (10.10.7 L83–128): every field
            // present is stored as sent, no resume rules. Model binding wants a JSON body (*inferred*: 415).
            guard (request.header("content-type") ?? "").lowercased().contains("json") else { return .empty(415) }
            guard case .object(let members)? = JSONValue.parse(request.body) else { return .empty(400) }
            for member in members {
                switch (member.key.lowercased(), member.value) {
                case ("played", .bool(let value)): data.played = value
                case ("playcount", .number(let value)) where value.rounded() == value && abs(value) < 2e9:
                    data.playCount = Int(value)
                case ("playbackpositionticks", .number(let value)) where value.rounded() == value && abs(value) < 9e18:
                    data.playbackPositionTicks = Int64(value)
                case ("playbackpositionticks", .string(let value)):
                    guard let ticks = Int64(value) else { return .empty(400) }
                    data.playbackPositionTicks = ticks
                case ("lastplayeddate", .string(let value)):
                    guard let date = TestServer.legacyDate(value) else { return .empty(400) }
                    data.lastPlayedDate = date
                case ("lastplayeddate", .null): data.lastPlayedDate = nil
                default: break
                }
            }
        case .stopped:
            // `SessionManager.OnPlaybackStopped` → `UserDataManager.UpdatePlayState` (10.8.13 L216–286): under
            // `MinResumePct` 5 the position is dropped, over `MaxResumePct` 90 the item is played, and a runtime
            // under `MinResumeDurationSeconds` 300 counts as played. The date is not touched (playback start
            // stamps it); a report without a position counts one play.
            if let text = request.queryValue("positionTicks") {
                guard let ticks = Int64(text) else { return .empty(400) }
                let runtime = item.runTimeTicks ?? 0
                var position = ticks
                if ticks > 0, runtime > 0, item.type == "Book" {
                    // A book keeps the position reported: neither rule applies to it (L222, v10.10.7).
                } else if ticks > 0, runtime > 0, item.type == "AudioBook" {
                    // An audiobook: under `MinAudiobookResume` minutes in, the position is dropped; with fewer than
                    // `MaxAudiobookResume` left (or at the end), it is played (L248–263, v10.10.7; 5 and 5 in
                    // `ServerConfiguration` of every tag, L151/L157 at v10.11.11, L152/L158 at v10.8.13).
                    if Double(ticks) / 600_000_000 < 5 {
                        position = 0
                    } else if Double(runtime - ticks) / 600_000_000 < 5 || ticks >= runtime {
                        position = 0
                        data.played = true
                    }
                } else if ticks > 0, runtime > 0 {
                    let percent = Double(ticks) / Double(runtime) * 100
                    if percent < 5 {
                        position = 0
                    } else if percent > 90 || ticks >= runtime || Double(runtime) / 10_000_000 < 300 {
                        position = 0
                        data.played = true
                    }
                } else if runtime <= 0 {
                    position = 0
                    data.played = true
                }
                data.playbackPositionTicks = position
            } else {
                data.playCount += 1
                data.played = true
                data.playbackPositionTicks = 0
            }
            setUserData(of: id, data)
            return .empty(204)
        }
        setUserData(of: id, data)
        // `UserItemDataDto`: 10.10.7 answers `ItemId` as all zeros; 10.11 fills it.
        var members: [JSONMember] = [
            JSONMember("PlaybackPositionTicks", .int(data.playbackPositionTicks)),
            JSONMember("PlayCount", .integer(data.playCount)),
            JSONMember("IsFavorite", .bool(false)),
        ]
        if let last = data.lastPlayedDate {
            members.append(JSONMember("LastPlayedDate", .string(JellyfinDTO.date(last))))
        }
        members.append(JSONMember("Played", .bool(data.played)))
        members.append(JSONMember("Key", .string(id)))
        members.append(
            JSONMember("ItemId", .string(profile == .v10_11 ? id : "00000000000000000000000000000000")))
        return .json(.members(members))
    }

    /// `LegacyDateTimeModelBinder`: `yyyyMMddHHmmss` (UTC) or ISO 8601.
    static func legacyDate(_ text: String) -> Date? {
        if text.count == 14, text.allSatisfy(\.isNumber) {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMddHHmmss"
            return formatter.date(from: text)
        }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = iso.date(from: text) { return date }
        iso.formatOptions = [.withInternetDateTime]
        if let date = iso.date(from: text) { return date }
        // .NET's round-trip form has seven fractional digits; ISO8601DateFormatter takes at most three.
        if let dot = text.firstIndex(of: "."), let zone = text[dot...].firstIndex(where: { $0 == "Z" || $0 == "+" }) {
            return iso.date(from: String(text[..<dot]) + String(text[zone...]))
        }
        return nil
    }
}
