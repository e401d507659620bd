import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncServer

/// What a Jellyfin mirror needs from the server. ``JellyfinClient`` provides it.
public protocol MediaServer: Sendable {
    func item(id: String) async throws -> BaseItem
    func items(_ query: ItemsQuery) async throws -> [BaseItem]
    func seasons(seriesId: String) async throws -> [BaseItem]
    func episodes(seriesId: String, seasonId: String?) async throws -> [BaseItem]
    func playbackInfo(itemId: String) async throws -> [MediaSource]
    /// Which of these items the server still has (below `parentId` when given), asked by id in batches.
    func existingItems(ids: [String], below parentId: String?) async throws -> [BaseItem]
    func downloadURL(mediaSourceId: String) throws -> String
    func imageURL(itemId: String, type: String, index: Int?, tag: String?, maxWidth: Int?) throws -> String
    func subtitleURL(itemId: String, mediaSourceId: String, streamIndex: Int, format: String) throws -> String
    /// The URL of one trickplay tile of a version at a width.
    func trickplayTileURL(mediaSourceId: String, width: Int, index: Int) throws -> String
    /// The URL of an item's media segments (10.10 and later).
    func mediaSegmentsURL(itemId: String) throws -> String
    /// Whether the stored sign-in still holds (`GET /Users/Me` answers 200): asked after a 401, which Jellyfin also
    /// answers for a library the user may no longer access.
    func signInIsValid() async -> Bool
    /// Whether the signed-in user may download (`Policy.EnableContentDownloading`); nil when unknown (an API key).
    func userMayDownload() async -> Bool?
    /// The header that authenticates downloads, as for API calls.
    var authorizationHeader: (name: String, value: String) { get }
    /// Which play-state routes the server has (from its version; the newer ones when it cannot be read).
    func playStateRoutes() async -> PlayStateRoutes
    /// Sends one change of the user's play state of an item.
    func send(_ change: PlayStateChange, itemId: String, routes: PlayStateRoutes) async throws
    /// What the server would send of a version under a `DeviceProfile`: the original, or an HLS transcode.
    func playbackOffer(itemId: String, mediaSourceId: String, profile: JSONValue, maxBitrate: Int) async throws
        -> TranscodeOffer
    /// Reads a small answer (a playlist) at an absolute URL on the server.
    func read(url: String, what: String) async throws -> [UInt8]
    /// Stops the server's encoding of a play session.
    func stopEncoding(playSessionId: String) async throws
    /// Whether the user may have video transcoded (`Policy.EnableVideoPlaybackTranscoding`); nil when unknown.
    func userMayTranscode() async -> Bool?
    /// These items with every listing field (media sources and streams included), asked by id in batches.
    func fullItems(ids: [String]) async throws -> [BaseItem]
    /// The server's address (no trailing slash): every URL of its API begins with it.
    var baseURL: String { get }
    /// The same server, recording every answer in `log`.
    func recording(into log: ListingLog) -> any MediaServer
    /// Asks these `GET`s again, a few at a time: each one's answer or error, by URL (none past a failed window).
    func replay(_ urls: [String]) async -> [String: Result<ListingLog.Answer, HTTPError>]
    /// A playlist's entries in order, an item listed twice included, with the listing fields.
    func playlistEntries(playlistId: String) async throws -> [BaseItem]
    /// Every entry id of a playlist, those this user may not see included; nil where the server cannot say (10.8, 10.9).
    func playlistItemIds(playlistId: String) async throws -> [String]?
    /// The URL of a track's lyrics (a `LyricDto`).
    func lyricsURL(itemId: String) throws -> String
    /// The URL of a track's transcode at this quality (the server's universal audio endpoint).
    func universalAudioURL(itemId: String, mediaSourceId: String, quality: AudioQuality) throws -> String
}

extension JellyfinClient: MediaServer {
    public func recording(into log: ListingLog) -> any MediaServer {
        let client: JellyfinClient = recording(into: log)
        return client
    }

    public var baseURL: String { serverURL }

    public func replay(_ urls: [String]) async -> [String: Result<ListingLog.Answer, HTTPError>] {
        await replay(urls, window: JellyfinClient.pageWindow)
    }

    public func item(id: String) async throws -> BaseItem {
        try await item(id: id, fields: SelectionExpander.fields)
    }

    public func universalAudioURL(itemId: String, mediaSourceId: String, quality: AudioQuality) throws -> String {
        try universalAudioURL(
            itemId: itemId, mediaSourceId: mediaSourceId, codec: quality.codec, container: quality.container,
            maxBitrate: quality.maxBitrate)
    }

    public func playlistEntries(playlistId: String) async throws -> [BaseItem] {
        try await playlistEntries(playlistId: playlistId, fields: SelectionExpander.fields)
    }

    public func signInIsValid() async -> Bool {
        (try? await currentUser()) != nil
    }

    /// Asked in batches of ``JellyfinClient/idsPerRequest`` ids, ``JellyfinClient/pageWindow`` batches in flight (a
    /// first sync of a 20,000-track library asks 200), answers kept in the batches' order.
    public func fullItems(ids: [String]) async throws -> [BaseItem] {
        let batches = stride(from: 0, to: ids.count, by: JellyfinClient.idsPerRequest).map {
            Array(ids[$0..<min(ids.count, $0 + JellyfinClient.idsPerRequest)])
        }
        var answers = [[BaseItem]](repeating: [], count: batches.count)
        try await Parallel.inFlight(batches.count, width: JellyfinClient.pageWindow) { position in
            try await self.items(
                ItemsQuery(
                    ids: batches[position], fields: SelectionExpander.fields, limit: JellyfinClient.idsPerRequest))
        } each: { position, found in
            answers[position] = found
        }
        return answers.flatMap { $0 }
    }

    public func playStateRoutes() async -> PlayStateRoutes {
        PlayStateRoutes.forVersion(try? await publicSystemInfo().version)
    }

    public func userMayDownload() async -> Bool? {
        try? await currentUser().policy?.enableContentDownloading
    }
}
