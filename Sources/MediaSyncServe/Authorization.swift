/// The token and client fields a Jellyfin client sends, read from any of the places Jellyfin reads them
/// (`Jellyfin.Server.Implementations/Security/AuthorizationContext.cs`: `GetAuthorizationDictionary` reads
/// `Authorization` before `X-Emby-Authorization` at v10.11.11, the other way round at v10.10.7, L232-236; a client
/// sends one of them; the token also from `X-Emby-Token`, `X-MediaBrowser-Token`,
/// and the `ApiKey` / `api_key` query).
public struct ClientAuthorization: Sendable, Equatable {
    public var token: String?
    public var client: String?
    public var device: String?
    public var deviceId: String?
    public var version: String?

    public init(
        token: String? = nil, client: String? = nil, device: String? = nil, deviceId: String? = nil,
        version: String? = nil
    ) {
        self.token = token
        self.client = client
        self.device = device
        self.deviceId = deviceId
        self.version = version
    }

    /// Reads the request's headers (by lowercased name) and query.
    public static func read(headers: [String: String], query: RequestQuery) -> ClientAuthorization {
        var fields: [String: String] = [:]
        for name in ["authorization", "x-emby-authorization"] {
            guard let value = headers[name], let parsed = parseMediaBrowser(value) else { continue }
            fields = parsed
            break
        }
        var result = ClientAuthorization(
            token: fields["token"], client: fields["client"], device: fields["device"],
            deviceId: fields["deviceid"], version: fields["version"])
        let candidates = [
            result.token, headers["x-emby-token"], headers["x-mediabrowser-token"], query.nonEmpty("ApiKey"),
            query.nonEmpty("api_key"),
        ]
        result.token = candidates.compactMap { $0?.trimmed }.first { !$0.isEmpty }
        return result
    }

    /// The fields of `MediaBrowser Client="…", Device="…", DeviceId="…", Version="…", Token="…"` (also
    /// `Emby …`), keys lowercased, values unquoted and percent-decoded; nil for another scheme.
    public static func parseMediaBrowser(_ header: String) -> [String: String]? {
        let text = header.trimmed
        guard let space = text.firstIndex(of: " ") else { return nil }
        let scheme = text[..<space].lowercased()
        guard scheme == "mediabrowser" || scheme == "emby" else { return nil }
        var fields: [String: String] = [:]
        var rest = Substring(text[text.index(after: space)...])
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals]).trimmed.lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " }
            var value: String
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let close = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = String(rest[..<close])
                rest = close < rest.endIndex ? rest[rest.index(after: close)...] : rest[rest.endIndex...]
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = String(rest[..<comma]).trimmed
                rest = rest[comma...]
            }
            value = PercentDecoding.decode(value, plusIsSpace: false)
            if !key.isEmpty { fields[key] = value }
        }
        return fields
    }
}
