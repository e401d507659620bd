import Crypto
import Foundation
import MediaSyncJSON
import MediaSyncMirror
import _CryptoExtras

/// The one user `serve` lets sign in: a name and a salted slow hash of the password (PBKDF2-SHA256, 210,000
/// rounds, 16 random bytes of salt), kept in the configuration folder as `serve-password.json`, mode 0600.
public struct ServePassword: Sendable, Equatable {
    public var user: String
    public var salt: [UInt8]
    public var rounds: Int
    public var hash: [UInt8]

    public static let fileName = "serve-password.json"
    /// OWASP's 2023 floor for PBKDF2-HMAC-SHA256 (and swift-crypto's checked minimum).
    public static let defaultRounds = 210_000

    /// The hash of `password` for `user`, with a new salt.
    public static func make(user: String, password: String, rounds: Int = defaultRounds) throws -> ServePassword {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return ServePassword(user: user, salt: salt, rounds: rounds, hash: try derive(password, salt, rounds))
    }

    private static func derive(_ password: String, _ salt: [UInt8], _ rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32,
            unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }

    /// Whether `user` (any case, as Jellyfin compares user names) and `password` are this user's.
    public func accepts(user: String, password: String) -> Bool {
        guard user.lowercased() == self.user.lowercased(), rounds >= 1,
            let derived = try? ServePassword.derive(password, salt, rounds)
        else { return false }
        // Compared in constant time.
        var difference: UInt8 = derived.count == hash.count ? 0 : 1
        for (a, b) in zip(derived, hash) { difference |= a ^ b }
        return difference == 0
    }

    /// Stores it in `config` (mode 0600, written atomically).
    public func save(to config: ConfigDirectory) throws {
        let document: JSONValue = .object([
            JSONMember("user", .string(user)), JSONMember("algorithm", .string("pbkdf2-sha256")),
            JSONMember("rounds", .number(Double(rounds))), JSONMember("salt", .string(ServeIds.hex(salt))),
            JSONMember("hash", .string(ServeIds.hex(hash))),
        ])
        try config.writePrivate(Data(JSONWriter.compactBytes(document) + [10]), to: config.path + "/" + Self.fileName)
    }

    /// The stored password, nil when none was set (or the file is not one).
    public static func load(from config: ConfigDirectory) -> ServePassword? {
        guard let data = FileManager.default.contents(atPath: config.path + "/" + fileName),
            let document = try? JSONValue(parsing: [UInt8](data)),
            document["algorithm"]?.stringValue == "pbkdf2-sha256",
            let user = document["user"]?.stringValue, let rounds = document["rounds"]?.intValue,
            let salt = document["salt"]?.stringValue.flatMap(unhex),
            let hash = document["hash"]?.stringValue.flatMap(unhex)
        else { return nil }
        return ServePassword(user: user, salt: salt, rounds: Int(rounds), hash: hash)
    }

    static func unhex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let value = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(value)
            index += 2
        }
        return bytes
    }
}
