import Crypto
import Foundation
import MediaSyncHTTP

/// Ids `serve` makes: random tokens and session ids, and stable ids derived from a text.
enum ServeIds {
    /// 32 lowercase hex digits from the system's random source (a token, a play session id).
    static func random32() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// 32 lowercase hex digits that `text` always gives (a view's id).
    static func hex32(_ text: String) -> String {
        hex(Array(Crypto.SHA256.hash(data: Array(text.utf8)).prefix(16)))
    }

    /// An id as Jellyfin compares ids (a `Guid` in any of its forms): without dashes, lowercased.
    static func plain(_ id: String) -> String {
        id.replacingOccurrences(of: "-", with: "").lowercased()
    }

    static func hex(_ bytes: [UInt8]) -> String {
        HexText.lowercase(bytes)
    }

    /// Whether `id` can name an item: what a request names is looked up, never used as a path, but an id with `/`,
    /// `..`, NUL or control characters, or longer than 128 characters, is refused before that (400).
    static func isAcceptable(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 128, id != ".", !id.contains("..") else { return false }
        return id.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7f && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\")
        }
    }
}
