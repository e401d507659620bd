import Foundation

extension ByteCount {
    /// Parses a size people write: `200G`, `1.5T`, `500MB`, `700 MiB`, `123` (bytes). K, M, G, T (with or without
    /// B) count in thousands, as disks are sold; KiB, MiB, GiB, TiB in 1024s. Nil for anything else or a negative.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let split = trimmed.firstIndex(where: { !($0.isNumber || $0 == ".") }) else {
            return Int64(trimmed).flatMap { $0 >= 0 ? $0 : nil }
        }
        guard let value = Double(trimmed[..<split]), value >= 0, value.isFinite else { return nil }
        let unit = trimmed[split...].trimmingCharacters(in: .whitespaces).uppercased()
        let decimal: [String: Double] = [
            "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
        ]
        let binary: [String: Double] = [
            "KIB": 1024, "MIB": 1_048_576, "GIB": 1_073_741_824, "TIB": 1_099_511_627_776,
        ]
        guard let factor = decimal[unit] ?? binary[unit] else { return nil }
        let bytes = (value * factor).rounded(.down)
        guard bytes < 9e18 else { return nil }
        return Int64(bytes)
    }
}

/// The mirror's stored storage budget (`mediasync config set budget 200G`), used when `sync` is given none.
public enum StoredBudget {
    static let key = "budget"

    /// The stored budget in bytes, nil when none is set.
    public static func read(_ index: MirrorIndex) throws -> Int64? {
        try index.setting(key).flatMap(ByteCount.parse)
    }

    /// Stores a budget (as written, e.g. `200G`); nil removes it.
    /// - Throws: ``SyncError`` when the size cannot be read.
    public static func write(_ text: String?, index: MirrorIndex) throws {
        if let text, ByteCount.parse(text) == nil {
            throw SyncError.invalidInput("\(text.debugDescription) is not a size (examples: 200G, 1.5T, 500MB)")
        }
        try index.setSetting(key, text)
    }
}
