import Foundation
import MediaSyncHTTP

/// `mediasync podcast account`: links, shows and forgets the account.
public struct PodcastAccountLink: Sendable {
    let store: PodcastAccountStore
    let http: HTTPClient

    public init(config: ConfigDirectory, http: HTTPClient = HTTPClient()) {
        self.store = PodcastAccountStore(config: config)
        self.http = http
    }

    /// Checks the account on its server and stores it: signs in, registers the device (mygpo), and puts it in one
    /// sync group with `syncWith`, or keeps the group the user already made. Nothing is stored when any of it fails.
    /// - Returns: the devices this one shares subscriptions with.
    /// - Throws: ``SyncError`` (a refused password, not a gPodder server), ``HTTPError`` (server down).
    @discardableResult
    public func link(_ account: PodcastAccount) async throws -> [String] {
        guard account.origin != nil, account.server.lowercased().hasPrefix("http") else {
            throw SyncError.invalidInput("\(account.server) is not an http(s) URL")
        }
        let client = GPodderClient(account: account, http: http)
        try await client.login()
        var group: [String] = []
        if account.kind == .mygpo {
            try await client.registerDevice()
            try await client.synchronize(with: account.syncWith.filter { $0 != account.device })
            group = try await client.syncGroups().first { $0.contains(account.device) } ?? []
        }
        try store.save(account)
        return group.filter { $0 != account.device }
    }

    /// The linked account, nil when none is.
    public func account() throws -> PodcastAccount? {
        try store.load()
    }

    /// Forgets the account and its exchange state in `index` (nothing about podcasts or play state changes).
    /// - Returns: whether an account was linked.
    @discardableResult
    public func remove(index: MirrorIndex?) throws -> Bool {
        try index?.forgetAccount()
        return store.remove()
    }

    /// Where the exchange stands in a mirror: the last finished exchange, and actions waiting to be sent.
    public struct Status: Sendable, Equatable {
        public var lastExchange: String?
        public var waiting: Int
        public var sent: Int
        public var agreedFeeds: Int
    }

    public func status(index: MirrorIndex) throws -> Status {
        let outgoing = try index.outgoingActions()
        return Status(
            lastExchange: try index.accountSetting("lastExchange"),
            waiting: outgoing.filter { $0.state == .pending || $0.state == .sending }.count,
            sent: outgoing.filter { $0.state == .sent }.count, agreedFeeds: try index.agreedFeeds().count)
    }

    /// The devices this one shares subscriptions with, as the server says now (mygpo; empty for Nextcloud).
    public func group(of account: PodcastAccount) async throws -> [String] {
        guard account.kind == .mygpo else { return [] }
        let client = GPodderClient(account: account, http: http)
        try await client.login()
        return (try await client.syncGroups().first { $0.contains(account.device) } ?? []).filter {
            $0 != account.device
        }
    }
}
