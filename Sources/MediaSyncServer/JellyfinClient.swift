import Foundation
import MediaSyncHTTP
import MediaSyncJSON

/// Talks to one Jellyfin server as one user: sign-in, browsing, and the URLs of media, images and subtitles.
///
/// Every request carries `Authorization: MediaBrowser Client="…", Device="…", DeviceId="…", Version="…",
/// Token="…"` (see ``authorizationHeader``). The token never goes into a URL (no `api_key=`), nor into
/// an error message or a `description`. A client is immutable; ``signedIn(accessToken:userId:)`` returns a
/// new one after a sign-in.
public final class JellyfinClient: Sendable, CustomStringConvertible {
    /// The normalised server address (no trailing slash; a base path such as `/jellyfin` kept).
    public let serverURL: String
    /// How the client names itself to the server.
    public let identity: ClientIdentity
    /// The access token or API key sent as `Token=`; nil before sign-in. Never print it.
    public let accessToken: String?
    /// The user the client browses as (`userId=` on listings); nil before sign-in.
    public let userId: String?
    /// The HTTP client that sends the API calls.
    public let http: HTTPClient
    /// How long a listing page may take, and how small pages get when one does not come.
    public let patience: ListingPatience
    /// Where the calls' answers are recorded, for a client made by ``recording(into:)``.
    let listingLog: ListingLog?

    /// The most pages one listing may take before it is considered broken (a server whose paging never ends).
    public static let maxPages = 10_000

    /// Creates a client.
    /// - Parameters:
    ///   - serverURL: `http` or `https` address of the server, optionally with a base path.
    ///   - identity: how the client names itself.
    ///   - accessToken: the token of an earlier sign-in, or an API key; nil to sign in first.
    ///   - userId: the user to browse as.
    ///   - http: the HTTP client to use.
    ///   - patience: the stall limit of listing pages and how small they get.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidServerURL`` for an unusable address.
    public convenience init(
        serverURL: String, identity: ClientIdentity, accessToken: String? = nil, userId: String? = nil,
        http: HTTPClient = HTTPClient(), patience: ListingPatience = ListingPatience()
    ) throws {
        self.init(
            normalizedURL: try ServerAddress.normalize(serverURL), identity: identity, accessToken: accessToken,
            userId: userId, http: http, patience: patience)
    }

    private init(
        normalizedURL: String, identity: ClientIdentity, accessToken: String?, userId: String?, http: HTTPClient,
        patience: ListingPatience, listingLog: ListingLog? = nil
    ) {
        self.listingLog = listingLog
        self.serverURL = normalizedURL
        self.identity = identity
        self.accessToken = accessToken.flatMap { $0.isEmpty ? nil : $0 }
        self.userId = userId.flatMap { $0.isEmpty ? nil : $0 }
        self.http = http
        self.patience = patience
    }

    /// A client for the same server and identity that uses this token and user.
    /// - Parameters:
    ///   - accessToken: the token from ``AuthenticationResult/accessToken``, or an API key.
    ///   - userId: the user to browse as.
    public func signedIn(accessToken: String, userId: String?) -> JellyfinClient {
        JellyfinClient(
            normalizedURL: serverURL, identity: identity, accessToken: accessToken, userId: userId, http: http,
            patience: patience)
    }

    /// The same client, recording every call's answer in `log` (see ``ListingLog``).
    public func recording(into log: ListingLog) -> JellyfinClient {
        JellyfinClient(
            normalizedURL: serverURL, identity: identity, accessToken: accessToken, userId: userId, http: http,
            patience: patience, listingLog: log)
    }

    /// Asks these `GET`s again as the listing asks its pages: the first alone, then `window` at a time, with the same
    /// retries, stall limit and timeout. Each URL's answer or error; after an error nothing more is asked (a server
    /// that cannot be reached is not asked everything), so URLs past it have no entry.
    public func replay(_ urls: [String], window: Int = JellyfinClient.pageWindow) async -> [String: Result<
        ListingLog.Answer, HTTPError
    >] {
        let http = self.http
        @Sendable func ask(_ url: String) async -> (String, Result<ListingLog.Answer, HTTPError>) {
            do {
                // Hashed here, while the other answers are still on their way.
                return (url, .success(ListingLog.Answer(try await http.send(request(url, listingPage: true)))))
            } catch let error as HTTPError {
                return (url, .failure(error))
            } catch {
                return (url, .failure(HTTPError.cancelled(url: url)))
            }
        }
        var answers: [String: Result<ListingLog.Answer, HTTPError>] = [:]
        guard let first = urls.first else { return answers }
        // The first alone, as a listing asks its first page: a library scan between the first answer and the next
        // ones shows in the answers as it would in the listing's.
        let (_, firstAnswer) = await ask(first)
        answers[first] = firstAnswer
        guard case .success = firstAnswer else { return answers }
        // Then `window` in flight at a time, the next asked as soon as one is answered; none after an error.
        await withTaskGroup(of: (String, Result<ListingLog.Answer, HTTPError>).self) { group in
            var next = urls.dropFirst().makeIterator()
            for _ in 0..<max(1, window) {
                guard let url = next.next() else { break }
                group.addTask { await ask(url) }
            }
            var failed = false
            for await (url, answer) in group {
                answers[url] = answer
                if case .failure = answer { failed = true }
                if !failed, let url = next.next() { group.addTask { await ask(url) } }
            }
        }
        return answers
    }

    /// A client signed in with the result of ``authenticate(username:password:)`` or Quick Connect.
    public func signedIn(_ result: AuthenticationResult) -> JellyfinClient {
        signedIn(accessToken: result.accessToken, userId: result.user.id)
    }

    /// The header to send with every request to this server, downloads included.
    public var authorizationHeader: (name: String, value: String) {
        (name: "Authorization", value: identity.authorizationValue(token: accessToken))
    }

    /// The server, user and whether a token is set; never the token itself.
    public var description: String {
        "JellyfinClient(server: \(serverURL), user: \(userId ?? "none"), signedIn: \(accessToken != nil))"
    }

    // MARK: Requests

    /// What one API call is, for sending it and for its error messages.
    struct Call {
        var method = "GET"
        /// The path below the server address, ids already encoded.
        var path: String
        var query: [(name: String, value: String)] = []
        var body: [UInt8]?
        /// What is being done, a verb phrase: "list the items".
        var action: String
        /// What a 404 means is missing; nil when a 404 means a wrong address.
        var resource: String?
        /// A sign-in: 401 means wrong credentials, and the answer holds a token, so it is never quoted.
        var signingIn = false
        /// A listing page: the listing's stall limit and timeout, and a stall is not sent again as it is (the
        /// listing asks for a smaller page).
        var listingPage = false
    }

    /// The full URL of a path below the server address.
    func url(_ path: String, query: [(name: String, value: String)] = []) -> String {
        serverURL + path + PercentEncoding.query(query)
    }

    /// A request to `url` with the auth header; a listing page's with the listing's stall limit and timeout, and a
    /// stall not sent again as it is (the listing asks for a smaller page).
    func request(
        _ url: String, method: String = "GET", body: [UInt8]? = nil, listingPage: Bool = false
    ) -> HTTPRequest {
        var headers = HTTPHeaders()
        let auth = authorizationHeader
        headers.add(name: auth.name, value: auth.value)
        if body != nil {
            headers.add(name: "Content-Type", value: "application/json")
        }
        var request = HTTPRequest(method: method, url: url, headers: headers, body: body)
        if listingPage {
            request.stallTime = patience.stallSeconds
            request.timeout = patience.pageTimeout
            request.retriesStalls = false
        }
        return request
    }

    /// Sends a call with the auth header.
    /// - Throws: ``JellyfinError``.
    func send(_ call: Call) async throws -> HTTPResponse {
        let request = request(
            url(call.path, query: call.query), method: call.method, body: call.body, listingPage: call.listingPage)
        do {
            guard let log = listingLog else { return try await http.send(request) }
            guard call.method == "GET" else {
                log.markIrregular()
                return try await http.send(request)
            }
            let answer: ListingLog.Answer
            if let fetched = log.takePrefetched(request.url) {
                switch fetched {
                case .success(let replayed): answer = replayed
                case .failure(let error):
                    // The answer the replay got is this call's: the same error, not a second request.
                    log.markIrregular()
                    throw error
                }
            } else {
                do {
                    answer = ListingLog.Answer(try await http.send(request))
                } catch {
                    log.markIrregular()
                    throw error
                }
            }
            log.record(url: request.url, answer: answer)
            return answer.response
        } catch let error as HTTPError {
            throw JellyfinError.from(error, action: call.action, resource: call.resource, signingIn: call.signingIn)
                .redacting(accessToken)
        } catch is CancellationError {
            throw JellyfinError(.cancelled, "cancelled while trying to \(call.action)")
        }
    }

    /// Sends a call and decodes its JSON answer.
    /// - Throws: ``JellyfinError``.
    func fetch<T: Decodable>(_ type: T.Type, _ call: Call) async throws -> T {
        let response = try await send(call)
        return try decode(type, from: response, call: call)
    }

    /// Decodes a JSON answer, with a clear message naming the endpoint when it is not the expected JSON.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidResponse``.
    func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse, call: Call) throws -> T {
        let endpoint = "\(call.method) \(JellyfinClient.template(call.path))"
        guard let parsed = try? JSONValue(parsing: response.body) else {
            var message = "the server's answer to \(endpoint) is not valid JSON"
            if response.body.isEmpty {
                message += " (it is empty)"
            } else if !call.signingIn {
                message += " (it may have been cut short; it starts with: \(JellyfinClient.excerpt(response.body)))"
            }
            throw JellyfinError.invalidResponse(message).redacting(accessToken)
        }
        do {
            if let wire = type as? any WireDecodable.Type, let value = try wire.init(wire: parsed, codingPath: []) as? T
            {
                return value
            }
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            throw JellyfinError.invalidResponse(
                "the server's answer to \(endpoint) is not the expected JSON (\(JellyfinClient.describe(error)))")
        }
    }

    /// The user id for calls that need one.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/notSignedIn``.
    func requireUserId() throws -> String {
        guard let userId else {
            throw JellyfinError(.notSignedIn, "not signed in to \(serverURL): sign in with `mediasync login` first")
        }
        return userId
    }

    /// The path with its id segments replaced by `{id}`, for messages.
    static func template(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.count >= 16 && segment.allSatisfy({ $0.isHexDigit || $0 == "-" || $0 == "%" })
                ? "{id}" : String(segment)
        }.joined(separator: "/")
    }

    /// The start of a body as one printable line.
    static func excerpt(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(60), as: UTF8.self)
        return text.split(whereSeparator: { $0.isNewline || $0 == "\t" }).joined(separator: " ")
    }

    /// A decoding error in a few words.
    static func describe(_ error: Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            let place = context.codingPath.isEmpty ? "" : " in \(path(context))"
            return "missing field \(key.stringValue)\(place)"
        case DecodingError.typeMismatch(_, let context): return "wrong type at \(path(context))"
        case DecodingError.valueNotFound(_, let context): return "null at \(path(context))"
        case DecodingError.dataCorrupted(let context): return "bad value at \(path(context))"
        default: return "\(error)"
        }
    }
}
