/// Checks names that come from a server before they become parts of a path.
///
/// A hostile or broken server must never steer a write outside the mirror: ids with `/`, `..`, NUL,
/// control characters or absurd lengths are rejected, not "cleaned" into something that might collide.
public enum SafeName {
    /// The longest id accepted (Jellyfin ids are 32 hex digits).
    public static let maximumIDLength = 128

    /// `raw` if it is a usable id for a file or folder name: ASCII letters, digits, `-` and `_`, 1...128 long,
    /// and not a device name Windows reserves.
    public static func id(_ raw: String) -> String? {
        guard !raw.isEmpty, raw.utf8.count <= maximumIDLength else { return nil }
        let allowed = raw.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
        return allowed && !isWindowsReserved(raw) ? raw : nil
    }

    /// Whether Windows reserves a file name for a device, so that no such file can be made on the SMB shares, NTFS
    /// and exFAT disks mirrors often live on. The rule Windows applies: the name's stem before its first `.`, with
    /// trailing spaces ignored, in any case, is `CON`, `PRN`, `AUX`, `NUL`, `COM0`…`COM9`, `COM¹`…`COM³`,
    /// `LPT0`…`LPT9`, `LPT¹`…`LPT³`, `CONIN$` or `CONOUT$`; so `aux.mp3`, `AUX.Show`, `nul .txt` and `LPT9.m3u8`
    /// are reserved as `AUX` is.
    ///
    /// Read byte by byte, with no copy (it runs for every id of every listing): only ASCII letters make these names in
    /// any case, so a name with any other byte in its stem (but the superscript digits) is never one of them.
    public static func isWindowsReserved(_ name: String) -> Bool {
        let utf8 = name.utf8
        var stem = utf8[..<(utf8.firstIndex(of: UInt8(ascii: ".")) ?? utf8.endIndex)]
        while stem.last == UInt8(ascii: " ") { stem = stem.dropLast() }
        guard stem.count >= 3 && stem.count <= 7 else { return false }
        var upper: [UInt8] = []
        upper.reserveCapacity(7)
        for byte in stem { upper.append(byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte) }
        func equals(_ word: StaticString) -> Bool {
            upper.count == word.utf8CodeUnitCount
                && upper.elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
        }
        switch upper.count {
        case 3:
            return equals("CON") || equals("PRN") || equals("AUX") || equals("NUL")
        case 4, 5:
            guard upper.starts(with: "COM".utf8) || upper.starts(with: "LPT".utf8) else { return false }
            if upper.count == 4 { return upper[3] >= UInt8(ascii: "0") && upper[3] <= UInt8(ascii: "9") }
            // ¹ ² ³: U+00B9, U+00B2, U+00B3, two bytes each in UTF-8.
            return upper[3] == 0xC2 && (upper[4] == 0xB9 || upper[4] == 0xB2 || upper[4] == 0xB3)
        default:
            return equals("CONIN$") || equals("CONOUT$")
        }
    }

    /// A file extension: 1...8 lowercase ASCII letters or digits, or nil.
    public static func fileExtension(_ raw: String) -> String? {
        let lowered = raw.lowercased()
        guard !lowered.isEmpty, lowered.utf8.count <= 8,
            lowered.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) })
        else { return nil }
        return lowered
    }

    /// Whether a relative path stays inside its root: no absolute path, no empty, `.` or `..` component, no NUL.
    public static func isContained(_ relativePath: String) -> Bool {
        // One pass over the bytes (this runs for every file of every sync).
        var componentLength = 0
        var dots = 0
        func componentIsFine() -> Bool {
            componentLength > 0 && componentLength <= 255 && !(dots == componentLength && dots <= 2)
        }
        for byte in relativePath.utf8 {
            switch byte {
            case 0: return false
            case UInt8(ascii: "/"):
                guard componentIsFine() else { return false }
                componentLength = 0
                dots = 0
            default:
                componentLength += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return componentIsFine()
    }
}
