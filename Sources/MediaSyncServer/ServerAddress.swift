import Foundation

/// Checks and normalises the server address a user gives.
public enum ServerAddress {
    /// The address without trailing slashes, query or fragment, with a lowercase scheme and host; a base
    /// path (`https://host/jellyfin`) is kept.
    ///
    /// - Throws: ``JellyfinError`` of kind ``JellyfinError/Kind/invalidServerURL`` for anything but an
    ///   `http` or `https` URL with a host, or one carrying a user name or password.
    public static func normalize(_ text: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        func invalid(_ reason: String) -> JellyfinError {
            JellyfinError(.invalidServerURL, "\"\(trimmed)\" is not a usable server address: \(reason)")
        }
        guard !trimmed.isEmpty else { throw invalid("it is empty") }
        guard let components = URLComponents(string: trimmed) else { throw invalid("it is not a URL") }
        guard let scheme = components.scheme?.lowercased() else {
            throw invalid("give the scheme, such as https://\(trimmed)")
        }
        guard scheme == "http" || scheme == "https" else {
            throw invalid("only http and https are supported")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("it has no host") }
        guard components.user == nil, components.password == nil else {
            throw invalid("it must not contain a user name or password; sign in with `mediasync login` instead")
        }
        guard components.query == nil, components.fragment == nil else {
            throw invalid("it must not have a query or fragment")
        }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") {
            path.removeLast()
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host.lowercased())]" : host.lowercased()
        let portPart = components.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(hostPart)\(portPart)\(path)"
    }
}
