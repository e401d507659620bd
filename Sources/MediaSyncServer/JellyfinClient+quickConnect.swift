import Foundation
import MediaSyncJSON

extension JellyfinClient {
    /// Whether Quick Connect is turned on (`GET /QuickConnect/Enabled`, a bare JSON `true` or `false`).
    /// - Throws: ``JellyfinError``.
    public func quickConnectEnabled() async throws -> Bool {
        let call = Call(path: "/QuickConnect/Enabled", action: "check whether Quick Connect is on")
        let value = try await fetch(JSONValue.self, call)
        if let flag = value.boolValue { return flag }
        // Jellyfin 10.7 answered with a state name instead.
        if let state = value.stringValue { return state.lowercased() != "unavailable" }
        throw JellyfinError.invalidResponse("the server's answer to GET /QuickConnect/Enabled is not true or false")
    }

    /// Starts a Quick Connect request (`POST /QuickConnect/Initiate`); show its ``QuickConnectState/code``.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/quickConnectDisabled`` when the server refuses.
    public func quickConnectInitiate() async throws -> QuickConnectState {
        let call = Call(method: "POST", path: "/QuickConnect/Initiate", action: "start Quick Connect", signingIn: true)
        do {
            do {
                return try await fetch(QuickConnectState.self, call)
            } catch let error as JellyfinError where error.status == 405 || error.status == 404 {
                // Jellyfin 10.8 starts Quick Connect with GET only (`QuickConnectController`, v10.8.13 L53).
                let old = Call(path: "/QuickConnect/Initiate", action: "start Quick Connect", signingIn: true)
                return try await fetch(QuickConnectState.self, old)
            }
        } catch let error as JellyfinError where error.kind == .invalidCredentials || error.kind == .forbidden {
            throw JellyfinError.quickConnectOff
        }
    }

    /// The state of a Quick Connect request (`GET /QuickConnect/Connect?secret=`).
    /// - Throws: ``JellyfinError`` (``JellyfinError/Kind/notFound`` once the request expired).
    public func quickConnectState(secret: String) async throws -> QuickConnectState {
        let call = Call(
            path: "/QuickConnect/Connect", query: [("secret", secret)], action: "check the Quick Connect request",
            resource: "such Quick Connect request (it may have expired; start again)", signingIn: true)
        return try await fetch(QuickConnectState.self, call)
    }

    /// Signs in with an approved Quick Connect request (`POST /Users/AuthenticateWithQuickConnect`).
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidCredentials`` when it was not approved.
    public func authenticateWithQuickConnect(secret: String) async throws -> AuthenticationResult {
        let body = try JellyfinClient.jsonBody(["Secret": secret])
        let call = Call(
            method: "POST", path: "/Users/AuthenticateWithQuickConnect", body: body,
            action: "sign in with Quick Connect", resource: "such Quick Connect request (it may have expired)",
            signingIn: true)
        return try await fetch(AuthenticationResult.self, call)
    }

    /// The whole Quick Connect sign-in: starts a request, hands its code to `onCode` once, polls until a
    /// signed-in user approves it, then signs in.
    ///
    /// - Parameters:
    ///   - pollInterval: seconds between polls.
    ///   - timeout: seconds to wait for the approval.
    ///   - onCode: shows the code to the user.
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/quickConnectDisabled``,
    ///   ``JellyfinError/Kind/quickConnectTimedOut``, ``JellyfinError/Kind/cancelled`` or another kind.
    public func quickConnect(
        pollInterval: Double = 5, timeout: Double = 300, onCode: (String) -> Void
    ) async throws -> AuthenticationResult {
        guard try await quickConnectEnabled() else {
            throw JellyfinError.quickConnectOff
        }
        let request = try await quickConnectInitiate()
        guard let code = request.code, !code.isEmpty else {
            throw JellyfinError.invalidResponse("the server's answer to POST /QuickConnect/Initiate has no Code")
        }
        onCode(code)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(max(0, timeout) * 1000)))
        var state = request
        while !state.authenticated {
            guard clock.now < deadline else {
                throw JellyfinError(
                    .quickConnectTimedOut,
                    "nobody approved the Quick Connect code \(code) within \(JellyfinClient.seconds(timeout))")
            }
            do {
                try await Task.sleep(nanoseconds: UInt64(max(0.001, pollInterval) * 1e9))
            } catch {
                throw JellyfinError(.cancelled, "cancelled while waiting for Quick Connect approval")
            }
            state = try await quickConnectState(secret: request.secret)
        }
        return try await authenticateWithQuickConnect(secret: request.secret)
    }

    static func seconds(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value)) s" : "\(value) s"
    }
}
