import MediaSyncHTTP

/// The API answers one sync's listing read, recorded so that the next sync can ask the same questions first and
/// know, from the answers alone, whether anything it would list changed (see `MirrorSync`'s listing memo).
///
/// A client made with ``JellyfinClient/recording(into:)`` records every `GET` it sends: its URL (the token is never
/// in one), the status and a SHA-256 of the body. Answers fetched ahead by ``JellyfinClient/replay(_:window:)``,
/// errors included, are handed to the first call for the same URL instead of asking again: a replay whose answers
/// differ costs no second request, and a call sees what the server answered it once.
public final class ListingLog: Sendable {
    /// One answered `GET`.
    public struct Exchange: Sendable, Equatable, Codable {
        public var url: String
        public var status: Int
        /// `SHA-256` of the body, in hex.
        public var digest: String

        public init(url: String, status: Int, digest: String) {
            self.url = url
            self.status = status
            self.digest = digest
        }
    }

    /// An answer with the SHA-256 of its body, hashed once, as it came.
    public struct Answer: Sendable {
        public var response: HTTPResponse
        /// `SHA-256` of the body, in hex.
        public var digest: String

        init(_ response: HTTPResponse) {
            self.response = response
            digest = SHA256.hex(response.body)
        }
    }

    private struct State {
        var exchanges: [Exchange] = []
        var prefetched: [String: Result<Answer, HTTPError>] = [:]
        /// A call failed, stalled or was not a `GET`: what was read cannot be told from its answers alone.
        var irregular = false
    }

    private let state = Locked(State())

    public init(prefetched: [String: Result<Answer, HTTPError>] = [:]) {
        state.withLock { $0.prefetched = prefetched }
    }

    /// The answers recorded so far, in the order they came.
    public var exchanges: [Exchange] { state.withLock { $0.exchanges } }

    /// Whether every call was an answered `GET`.
    public var isRegular: Bool { state.withLock { !$0.irregular } }

    func record(url: String, answer: Answer) {
        let exchange = Exchange(url: url, status: answer.response.status, digest: answer.digest)
        state.withLock { $0.exchanges.append(exchange) }
    }

    func markIrregular() {
        state.withLock { $0.irregular = true }
    }

    /// The answer (or error) fetched ahead for `url`, handed out once.
    func takePrefetched(_ url: String) -> Result<Answer, HTTPError>? {
        state.withLock { $0.prefetched.removeValue(forKey: url) }
    }
}
