import Foundation
import MediaSyncCore

/// The plain layout's naming rules: human names that are valid on FAT32, exFAT, NTFS and every Unix file system,
/// and the same for the same item every time. Pure functions, table-tested.
///
/// ```
/// Movies/Title (Year)/Title (Year).ext                      Movies/Title (Year)/Title (Year) - 720p.ext (several versions)
/// Movies/Title (Year)/Title (Year).eng.srt, ….eng.forced.srt, poster.jpg, backdrop.jpg
/// Shows/Series (Year)/Season 01/Series - S01E02 - Title.ext  Shows/Series (Year)/Specials/Series - S00E01 - Title.ext
/// Shows/Series (Year)/poster.jpg, backdrop.jpg               Shows/Series (Year)/Season 01/folder.jpg, …-thumb.jpg
/// Podcasts/Show/YYYY-MM-DD - Title.ext                       Podcasts/Show/Show.m3u8, Shows/…/Season 01/Season 01.m3u8
/// ```
public enum ExportNaming {
    /// The longest file or folder name, in UTF-8 bytes (ext4's limit; within the 255 UTF-16 units of FAT32's long
    /// names, exFAT and NTFS, since a UTF-16 unit never takes fewer UTF-8 bytes).
    public static let maximumNameBytes = 255

    /// The characters FAT32, exFAT and NTFS refuse in a name (besides the control characters).
    static let refused: Set<Character> = ["<", ">", ":", "\"", "/", "\\", "|", "?", "*"]

    /// A name for one path component: Unicode NFC; refused and control characters become `_`; runs of spaces
    /// become one; leading spaces and dots, trailing spaces and dots are removed (Windows drops them, and a leading
    /// dot hides a file on Unix); a device name Windows reserves (`CON`, `com1.mkv`, `AUX.Show`…) gets `_` where its stem ends;
    /// cut to 255 UTF-8 bytes on a character boundary, keeping `suffix` and `fileExtension` whole. `fallback`
    /// stands in for a name left empty.
    public static func component(
        _ raw: String, suffix: String = "", fileExtension: String? = nil, fallback: String = "Untitled"
    ) -> String {
        var stem = clean(raw)
        if stem.isEmpty { stem = clean(fallback) }
        if stem.isEmpty { stem = "_" }
        let tail = suffix + (fileExtension.map { "." + $0 } ?? "")
        let room = max(1, maximumNameBytes - tail.utf8.count)
        if stem.utf8.count > room {
            stem = trimEnd(truncate(stem, maxBytes: room))
            if stem.isEmpty { stem = "_" }
        }
        var name = stem + tail
        if SafeName.isWindowsReserved(name) {
            // `_` right where the stem ends (before the first dot): `AUX.Show` → `AUX_.Show`, `com1.mp3` →
            // `com1_.mp3`. After the whole name it would leave the stem, and so the device name, as it was.
            if name.utf8.count >= maximumNameBytes {
                name = trimEnd(truncate(stem, maxBytes: room - 1)) + tail
            }
            let bytes = Array(name.utf8)
            let dot = bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.count
            name = String(decoding: bytes[..<dot] + [UInt8(ascii: "_")] + bytes[dot...], as: UTF8.self)
        }
        return name
    }

    /// The name with refused characters replaced and its ends trimmed, not yet cut to length.
    static func clean(_ raw: String) -> String {
        raw.utf8.allSatisfy({ $0 < 0x80 }) ? cleanASCII(raw) : cleanCharacters(raw)
    }

    /// ``clean(_:)`` character by character, for any text.
    static func cleanCharacters(_ raw: String) -> String {
        var out = ""
        var lastWasSpace = false
        for character in nfc(raw) {
            var replacement = character
            if refused.contains(character) || character.unicodeScalars.contains(where: isControl) {
                replacement = "_"
            }
            if replacement.isWhitespace {
                if lastWasSpace { continue }
                lastWasSpace = true
                out.append(" ")
            } else {
                lastWasSpace = false
                out.append(replacement)
            }
        }
        while let first = out.first, first == " " || first == "." { out.removeFirst() }
        return trimEnd(out)
    }

    /// ``clean(_:)`` for ASCII text, byte by byte (most names; the same result as the character walk: CR LF is one
    /// character there, so one `_` here too, and after replacement the only ASCII whitespace left is the space).
    static func cleanASCII(_ raw: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.utf8.count)
        var lastWasSpace = false
        var previous: UInt8 = 0
        for byte in raw.utf8 {
            defer { previous = byte }
            if byte == 0x0A && previous == 0x0D { continue }
            var replacement = byte
            if byte < 0x20 || byte == 0x7F || refusedBytes.contains(byte) { replacement = UInt8(ascii: "_") }
            if replacement == 0x20 {
                if lastWasSpace { continue }
                lastWasSpace = true
            } else {
                lastWasSpace = false
            }
            out.append(replacement)
        }
        var start = 0
        while start < out.count && (out[start] == 0x20 || out[start] == 0x2E) { start += 1 }
        var end = out.count
        while end > start && (out[end - 1] == 0x20 || out[end - 1] == 0x2E) { end -= 1 }
        return String(decoding: out[start..<end], as: UTF8.self)
    }

    /// ``refused`` as bytes.
    private static let refusedBytes: Set<UInt8> = Set(refused.compactMap { $0.asciiValue })

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || (scalar.value >= 0x80 && scalar.value < 0xA0)
    }

    private static func trimEnd(_ text: String) -> String {
        var text = text
        while let last = text.last, last == " " || last == "." { text.removeLast() }
        return text
    }

    /// The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes, cut between characters.
    public static func truncate(_ text: String, maxBytes: Int) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var out = ""
        var bytes = 0
        for character in text {
            let size = character.utf8.count
            if bytes + size > maxBytes { break }
            out.append(character)
            bytes += size
        }
        return out
    }

    /// How two names compare on a case-insensitive file system (FAT32, exFAT, NTFS): NFC, then lowercased.
    public static func foldKey(_ name: String) -> String {
        nfc(name).lowercased()
    }

    /// Unicode NFC; ASCII text (most names) is returned as is without the costly Foundation conversion.
    static func nfc(_ text: String) -> String {
        text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCanonicalMapping
    }

    /// ` [a1b2c3]`: six hex digits of the SHA-1 of an id, the suffix that tells colliding names apart.
    public static func disambiguator(_ id: String) -> String {
        " [\(SHA1.hex(Array(id.utf8)).prefix(6))]"
    }

    // MARK: Parts of names

    /// `Title (Year)`, or `Title` when the year is unknown.
    public static func titled(_ title: String, year: Int?) -> String {
        guard let year, year > 0 else { return title }
        return "\(title) (\(year))"
    }

    /// `Season 01` (two digits at least), `Specials` for season 0.
    public static func seasonFolder(_ number: Int) -> String {
        number <= 0 ? "Specials" : "Season " + twoDigits(number)
    }

    /// `Series - S01E02 - Title`; `S01E02-E03` for a double episode; `Series - S01 - Title` without a number.
    public static func episodeStem(series: String, season: Int, episode: Int?, episodeEnd: Int? = nil, title: String?)
        -> String
    {
        var code = "S" + twoDigits(max(0, season))
        if let episode {
            code += "E" + twoDigits(episode)
            if let episodeEnd, episodeEnd > episode { code += "-E" + twoDigits(episodeEnd) }
        }
        let title = title.map(clean) ?? ""
        return title.isEmpty ? "\(series) - \(code)" : "\(series) - \(code) - \(title)"
    }

    /// `03 - Title`, or `1-03 - Title` on an album of several discs; the title alone without a track number.
    public static func trackStem(disc: Int?, number: Int?, title: String, severalDiscs: Bool) -> String {
        let title = clean(title)
        guard let number else { return title }
        let code = severalDiscs ? "\(max(0, disc ?? 1))-\(twoDigits(number))" : twoDigits(number)
        return title.isEmpty ? code : "\(code) - \(title)"
    }

    /// `YYYY-MM-DD - Title` from an ISO 8601 publication date (its first ten characters), or the title alone.
    public static func podcastEpisodeStem(published: String?, title: String) -> String {
        guard let published, published.utf8.count >= 10 else { return title }
        let day = String(published.prefix(10))
        let shape = day.enumerated().allSatisfy { offset, character in
            offset == 4 || offset == 7 ? character == "-" : character.isASCII && character.isNumber
        }
        return shape ? "\(day) - \(title)" : title
    }

    /// A version's label for a file name: the version's name without the item's own name as a prefix (Jellyfin
    /// names versions after their files: `Title (Year) - 720p` gives `720p`); empty when nothing is left. `itemName`
    /// and `otherNames` (such as an episode's `Series - S01E02 - Title`) are the prefixes tried, longest first.
    public static func versionLabel(_ name: String?, itemName: String, otherNames: [String] = []) -> String {
        guard let label = name.map(clean), !label.isEmpty else { return "" }
        for base in ([itemName] + otherNames).map(clean).filter({ !$0.isEmpty }).sorted(by: { $0.count > $1.count }) {
            if foldKey(label) == foldKey(base) { return "" }
            if foldKey(label).hasPrefix(foldKey(base)) {
                var rest = String(label.dropFirst(base.count))
                while let first = rest.first, first == " " || first == "-" || first == "_" { rest.removeFirst() }
                if !rest.isEmpty { return rest }
            }
        }
        return label
    }

    /// Subtitle name parts (`eng`, `eng.forced`) from a mirror subtitle path `<media base>.<index>.<lang>[.forced].<fmt>`.
    public static func subtitleParts(mirrorPath: String, mediaPath: String) -> (
        index: Int, language: String, forced: Bool, format: String
    )? {
        let base = mediaPath.lastIndex(of: ".").map { String(mediaPath[..<$0]) } ?? mediaPath
        guard mirrorPath.hasPrefix(base + ".") else { return nil }
        let parts = mirrorPath.dropFirst(base.count + 1).split(separator: ".").map(String.init)
        guard parts.count == 3 || (parts.count == 4 && parts[2] == "forced"), let index = Int(parts[0]) else {
            return nil
        }
        return (index, parts[1], parts.count == 4, parts[parts.count - 1])
    }

    private static func twoDigits(_ number: Int) -> String {
        number < 10 && number >= 0 ? "0\(number)" : "\(number)"
    }

    // MARK: Collisions

    /// Suffixes that tell siblings apart, keyed by a stable id: `""` for every member whose name (its stem and
    /// `fileExtension`) folds like no other's and like nothing in `taken`; when several fold alike, the member with the
    /// smallest id keeps its name and the others get ``disambiguator(_:)`` of their id. The same members give the same
    /// names every time, whatever their order. Callers build names with ``component(_:suffix:fileExtension:fallback:)``.
    public static func resolve(
        _ members: [(id: String, stem: String)], fileExtension: String? = nil, taken: Set<String> = []
    ) -> [String: String] {
        var result: [String: String] = [:]
        var groups: [String: [(id: String, stem: String)]] = [:]
        for member in members {
            groups[foldKey(component(member.stem, fileExtension: fileExtension)), default: []].append(member)
        }
        var used = taken.union(groups.keys)
        for key in groups.keys.sorted() {
            guard let group = groups[key]?.sorted(by: { $0.id < $1.id }) else { continue }
            for (position, member) in group.enumerated() {
                if position == 0 && !taken.contains(key) {
                    result[member.id] = ""
                    continue
                }
                var suffix = disambiguator(member.id)
                var extra = 1
                while used.contains(foldKey(component(member.stem, suffix: suffix, fileExtension: fileExtension))) {
                    suffix = disambiguator(member.id + "#\(extra)")
                    extra += 1
                }
                used.insert(foldKey(component(member.stem, suffix: suffix, fileExtension: fileExtension)))
                result[member.id] = suffix
            }
        }
        return result
    }
}
