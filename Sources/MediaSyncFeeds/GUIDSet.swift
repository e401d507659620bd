#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Counts episode guids to find the duplicates (``Feed/duplicateGUIDs``), comparing them as `String` does
/// (canonical equivalence), in a few dozen bytes per guid: a 50,000-episode feed held a `String` and a dictionary
/// entry per guid before, about 13 MB.
///
/// A guid that is ASCII, or ASCII but for the three scalars whose canonical decomposition is ASCII (U+037E → `;`,
/// U+1FEF → `` ` ``, U+212A → `K`), is kept as those ASCII bytes in one buffer, found through an open-addressing
/// table (hashed with the process's seeded `Hasher`, so a hostile feed cannot aim collisions at it). Such a
/// string equals exactly the strings with the same ASCII form. Any other guid is kept as a `String`.
struct GUIDSet {
    /// An ASCII-form guid: where its key starts in `keys`, its length, how often it occurred.
    private struct Entry {
        var start: Int
        var count: Int32
        var occurrences: Int32
    }

    private var keys: [UInt8] = []
    private var entries: [Entry] = []
    /// `entries` index + 1 in the low 32 bits (0: empty), the key's hash in the high 32 bits.
    private var slots = [UInt64](repeating: 0, count: 1024)
    /// The guid first seen for an entry when it differs from its ASCII form.
    private var firstSeen: [Int: String] = [:]
    /// Guids with other non-ASCII scalars, compared as strings.
    private var others: [String: Int] = [:]

    /// Counts one occurrence of a guid (UTF-8 bytes, as the arena holds them).
    mutating func insert(_ guid: UnsafeBufferPointer<UInt8>) {
        var isASCII = true
        for byte in guid where byte >= 0x80 {
            isASCII = false
            break
        }
        if isASCII {
            insertASCII(guid, original: nil)
            return
        }
        let string = String(decoding: guid, as: UTF8.self)
        var ascii: [UInt8] = []
        ascii.reserveCapacity(guid.count)
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0..<0x80: ascii.append(UInt8(scalar.value))
            case 0x037E: ascii.append(UInt8(ascii: ";"))
            case 0x1FEF: ascii.append(UInt8(ascii: "`"))
            case 0x212A: ascii.append(UInt8(ascii: "K"))
            default:
                others[string, default: 0] += 1
                return
            }
        }
        ascii.withUnsafeBufferPointer { insertASCII($0, original: string) }
    }

    private mutating func insertASCII(_ key: UnsafeBufferPointer<UInt8>, original: String?) {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(key))
        let hash = UInt64(truncatingIfNeeded: hasher.finalize()) >> 32
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let slot = slots[index]
            if slot == 0 { break }
            if slot >> 32 == hash {
                let entry = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                if equals(entries[entry], key) {
                    entries[entry].occurrences += 1
                    return
                }
            }
            index = (index + 1) & mask
        }
        entries.append(Entry(start: keys.count, count: Int32(key.count), occurrences: 1))
        keys.append(contentsOf: key)
        if let original { firstSeen[entries.count - 1] = original }
        slots[index] = hash << 32 | UInt64(entries.count)
        if entries.count * 2 > slots.count { grow() }
    }

    private func equals(_ entry: Entry, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(entry.count) == key.count else { return false }
        return keys.withUnsafeBufferPointer { stored in
            guard let base = stored.baseAddress, let other = key.baseAddress else { return key.isEmpty }
            return memcmp(base + entry.start, other, key.count) == 0
        }
    }

    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for slot in slots where slot != 0 {
            var index = Int(truncatingIfNeeded: slot >> 32) & mask
            while larger[index] != 0 { index = (index + 1) & mask }
            larger[index] = slot
        }
        slots = larger
    }

    /// Every guid that occurred more than once (as first seen), sorted as strings.
    func duplicates() -> [String] {
        var result = others.filter { $0.value > 1 }.map(\.key)
        for (index, entry) in entries.enumerated() where entry.occurrences > 1 {
            result.append(
                firstSeen[index]
                    ?? String(decoding: keys[entry.start..<(entry.start + Int(entry.count))], as: UTF8.self))
        }
        return result.sorted()
    }
}
