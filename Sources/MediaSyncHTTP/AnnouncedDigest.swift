import Foundation

/// The SHA-256 a server announces for the whole representation, which a complete file must match.
///
/// Read from `Repr-Digest` (RFC 9530: a structured dictionary, `sha-256=:BASE64:`) and from the older `Digest`
/// (RFC 3230: `SHA-256=BASE64`, comma-separated). Other algorithms (md5, sha-512, unixsum…) and `Content-MD5`
/// are ignored: the file is then tied to its response by length and validator only. `Content-Digest` is not
/// read: it covers the bytes of this response (a range, for a 206), not the file.
enum AnnouncedDigest {
    /// The announced SHA-256 as lowercase hex, or nil.
    static func sha256(_ headers: HTTPHeaders) -> String? {
        sha256(in: headers["Repr-Digest"], colonWrapped: true) ?? sha256(in: headers["Digest"], colonWrapped: false)
    }

    /// The `sha-256` member of a comma-separated `name=value` list; its value is base64, between colons in the
    /// structured-field form of `Repr-Digest`.
    private static func sha256(in field: String?, colonWrapped: Bool) -> String? {
        guard let field else { return nil }
        for member in field.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "sha-256" else {
                continue
            }
            var value = parts[1].trimmingCharacters(in: .whitespaces)
            if colonWrapped {
                guard value.count > 2, value.hasPrefix(":"), value.hasSuffix(":") else { continue }
                value = String(value.dropFirst().dropLast())
            }
            if let hex = hex(base64: value) { return hex }
        }
        return nil
    }

    private static func hex(base64: String) -> String? {
        guard let data = Data(base64Encoded: base64), data.count == 32 else { return nil }
        return data.map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }
}
