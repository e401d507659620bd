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

    /// Whether a file name is one of the device names Windows reserves (`CON`, `PRN`, `AUX`, `NUL`, `COM1`…`COM9`,
    /// `LPT1`…`LPT9`, in any case, with or without an extension: `aux.mp3` too). Such a file cannot be made on
    /// the SMB shares, NTFS and exFAT disks mirrors often live on.
    ///
    /// Read byte by byte, with no copy (it runs for every id of every listing): only ASCII letters make these names in
    /// any case, so a name with any other byte before its first `.` is never one of them.
    public static func isWindowsReserved(_ name: String) -> Bool {
        let utf8 = name.utf8
        let base = utf8[..<(utf8.firstIndex(of: UInt8(ascii: ".")) ?? utf8.endIndex)]
        guard base.count == 3 || base.count == 4 else { return false }
        var upper: [UInt8] = []
        upper.reserveCapacity(4)
        for byte in base { upper.append(byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte) }
        if upper.count == 3 { return ["CON", "PRN", "AUX", "NUL"].contains { upper.elementsEqual($0.utf8) } }
        guard upper.starts(with: "COM".utf8) || upper.starts(with: "LPT".utf8) else { return false }
        return upper[3] >= UInt8(ascii: "1") && upper[3] <= UInt8(ascii: "9")
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
