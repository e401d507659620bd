import Foundation
import MediaSyncHTTP
import MediaSyncJSON

extension JellyfinClient {
    /// The anonymous facts about the server (`GET /System/Info/Public`), checking that it is Jellyfin.
    ///
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/notJellyfin`` when the address answers with a web
    ///   page, something that is not JSON, JSON without `Id` and `Version`, another product, or a 4xx;
    ///   otherwise the usual mapping (server starting, transport…).
    public func publicSystemInfo() async throws -> PublicSystemInfo {
        let call = Call(path: "/System/Info/Public", action: "read the server's public information")
        func notJellyfin(_ reason: String) -> JellyfinError {
            JellyfinError(.notJellyfin, "\(serverURL) does not look like a Jellyfin server (\(reason))")
        }
        let response: HTTPResponse
        do {
            response = try await send(call)
        } catch let error as JellyfinError {
            if let status = error.status, status >= 400, status < 500 {
                throw notJellyfin("it answered \(status) at /System/Info/Public")
            }
            throw error
        }
        let contentType = response.headers["Content-Type"]?.lowercased() ?? ""
        let firstByte = response.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) })
        if contentType.contains("html") || firstByte == UInt8(ascii: "<") {
            throw notJellyfin("it answered with a web page")
        }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body)) else {
            throw notJellyfin("its answer at /System/Info/Public is not JSON")
        }
        guard value.objectValue != nil,
            let info = try? JSONDecoder().decode(PublicSystemInfo.self, from: Data(response.body))
        else {
            throw notJellyfin("its answer at /System/Info/Public is not a JSON object")
        }
        guard let id = info.id, !id.isEmpty, let version = info.version, !version.isEmpty else {
            throw notJellyfin("its answer at /System/Info/Public has no server Id and Version")
        }
        if let product = info.productName, !product.lowercased().contains("jellyfin") {
            throw notJellyfin("it says it is \(product)")
        }
        return info
    }

    /// Signs in with a user name and password (`POST /Users/AuthenticateByName`, body `{"Username", "Pw"}`).
    ///
    /// The client itself is unchanged; use ``signedIn(_:)`` with the result.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidCredentials`` for a wrong name or
    ///   password, or another kind for other failures.
    public func authenticate(username: String, password: String) async throws -> AuthenticationResult {
        let body = try JellyfinClient.jsonBody(["Username": username, "Pw": password])
        let call = Call(
            method: "POST", path: "/Users/AuthenticateByName", body: body, action: "sign in", signingIn: true)
        do {
            return try await fetch(AuthenticationResult.self, call)
        } catch let error as JellyfinError where error.kind == .invalidCredentials {
            throw JellyfinError(
                .invalidCredentials,
                "the server did not accept this user name and password (401 Unauthorized)", status: error.status)
        }
    }

    /// The user this client's token belongs to (`GET /Users/Me`; not for API keys).
    /// - Throws: ``JellyfinError``.
    public func currentUser() async throws -> User {
        try await fetch(User.self, Call(path: "/Users/Me", action: "read the signed-in user"))
    }

    /// Every user of the server (`GET /Users`; needs an administrator's token or an API key).
    /// - Throws: ``JellyfinError``.
    public func users() async throws -> [User] {
        try await fetch([User].self, Call(path: "/Users", action: "list the users"))
    }

    /// Checks that the token works as an API key (`GET /System/Info`, which needs a valid token).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidCredentials`` when the key is refused.
    public func validateAPIKey() async throws -> PublicSystemInfo {
        guard accessToken != nil else {
            throw JellyfinError(.notSignedIn, "no API key given")
        }
        do {
            return try await fetch(PublicSystemInfo.self, Call(path: "/System/Info", action: "check the API key"))
        } catch let error as JellyfinError where error.kind == .authenticationNeeded || error.kind == .forbidden {
            throw JellyfinError(
                .invalidCredentials, "the server did not accept this API key (\(error.status ?? 401))",
                status: error.status)
        }
    }

    /// Picks the user to browse as with an API key: the user named `userName` (case-insensitive), or the only
    /// user when no name is given.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/userNotFound`` when no user (or more than one,
    ///   without a name) matches.
    public func selectUser(named userName: String?) async throws -> User {
        let all = try await users()
        if let userName {
            let wanted = userName.lowercased()
            guard let user = all.first(where: { $0.name?.lowercased() == wanted }) else {
                let names = all.compactMap(\.name).sorted().joined(separator: ", ")
                throw JellyfinError(.userNotFound, "the server has no user named \"\(userName)\" (users: \(names))")
            }
            return user
        }
        guard all.count == 1, let only = all.first else {
            let names = all.compactMap(\.name).sorted().joined(separator: ", ")
            throw JellyfinError(
                .userNotFound, "the server has \(all.count) users (\(names)): name the one to browse as")
        }
        return only
    }

    /// Signs in with an administrator's API key: checks the key, then picks the user to browse as.
    ///
    /// The client must have been created with the key as its `accessToken`. Use
    /// `signedIn(accessToken: key, userId: user.id)` afterwards.
    /// - Throws: ``JellyfinError``.
    public func signInWithAPIKey(userName: String?) async throws -> User {
        _ = try await validateAPIKey()
        return try await selectUser(named: userName)
    }

    /// A JSON object body with string values.
    static func jsonBody(_ members: [String: String]) throws -> [UInt8] {
        do {
            return [UInt8](try JSONEncoder().encode(members))
        } catch {
            throw JellyfinError.invalidResponse("could not encode the request: \(error)")
        }
    }
}
