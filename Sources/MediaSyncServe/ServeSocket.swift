import Foundation
import HTTPTypes
import HummingbirdWebSocket
import MediaSyncJSON

/// `/socket`: Jellyfin's WebSocket (`WebSocketManager`, `SessionWebSocketListener`, v10.10.7). `serve` sends no
/// events; it keeps clients connected: `ForceKeepAlive` (with the 60 s timeout Jellyfin uses) on connect, and a
/// `KeepAlive` answer to each of theirs.
enum ServeSocket {
    static func shouldUpgrade(_ head: HTTPRequest, state: ServeState) -> ShouldUpgradeResult<
        WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
    > {
        let target = head.path ?? ""
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
        guard RouteTable.segments(path).map({ $0.lowercased() }) == ["socket"] else { return .dontUpgrade }
        var headers: [String: String] = [:]
        for field in head.headerFields { headers[field.name.canonicalName] = field.value }
        let authorization = ClientAuthorization.read(headers: headers, query: RequestQuery(query))
        guard state.client(forToken: authorization.token) != nil else { return .dontUpgrade }
        return .upgrade([:]) { inbound, outbound, _ in
            try await outbound.write(.text(message("ForceKeepAlive", data: .number(60))))
            for try await frame in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = frame,
                    let value = try? JSONValue(parsing: Array(text.utf8)),
                    value["MessageType"]?.stringValue == "KeepAlive"
                else { continue }
                try await outbound.write(.text(message("KeepAlive", data: nil)))
            }
        }
    }

    static func message(_ type: String, data: JSONValue?) -> String {
        var members = [JSONMember("MessageType", .string(type))]
        if let data { members.append(JSONMember("Data", data)) }
        members.append(JSONMember("MessageId", .string(UUID().uuidString.lowercased())))
        return String(decoding: JSONWriter.compactBytes(.object(JSONObject(members))), as: UTF8.self)
    }
}
