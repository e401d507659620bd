/// Language tags as BCP 47 writes them.
public enum LanguageTag {
    /// `en_US` → `en-US`, `EN-gb` → `en-GB`, `zh_hant_tw` → `zh-Hant-TW`: `_` becomes `-`, the language is
    /// lowercased, a four-letter script subtag titlecased, a two-letter (or three-digit) region uppercased, the
    /// rest lowercased. A list (`en-US, fr`, as `Content-Language` may send) gives its first tag. A value that is
    /// not a tag (spaces inside, characters other than ASCII letters and digits, subtags over 8 characters, a
    /// language that is not 2 to 8 letters) is kept as written, trimmed; `nil` when nothing is left.
    public static func normalized(_ text: String) -> String? {
        var value = Substring(text.trimmingCharacters())
        if let comma = value.firstIndex(of: ",") { value = value[..<comma] }
        let trimmed = String(value).trimmingCharacters()
        guard !trimmed.isEmpty else { return nil }
        let subtags = trimmed.split(separator: "-", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard let language = subtags.first, (2...8).contains(language.count),
            language.utf8.allSatisfy({ isLetter($0) }),
            subtags.allSatisfy({ (1...8).contains($0.count) && $0.utf8.allSatisfy { isLetter($0) || isDigit($0) } })
        else { return trimmed }
        var output = [language.lowercased()]
        var afterSingleton = false
        for subtag in subtags.dropFirst() {
            let lower = subtag.lowercased()
            if afterSingleton || subtag.count == 1 {
                // Extensions and private use (`x-…`) are lowercased as they are.
                afterSingleton = true
                output.append(lower)
            } else if subtag.count == 4, subtag.utf8.allSatisfy({ isLetter($0) }) {
                output.append(lower.prefix(1).uppercased() + lower.dropFirst())
            } else if (subtag.count == 2 && subtag.utf8.allSatisfy({ isLetter($0) }))
                || (subtag.count == 3 && subtag.utf8.allSatisfy({ isDigit($0) }))
            {
                output.append(subtag.uppercased())
            } else {
                output.append(lower)
            }
        }
        return output.joined(separator: "-")
    }

    /// A feed's language as ``Feed/language`` gives it: as the feed writes it (trimmed, the first tag of a
    /// list), since BCP 47 tags are compared without regard to case and feedparser keeps `en-us` as `en-us`; a
    /// tag written POSIX-style with `_` (`en_US`, which is no BCP 47 tag at all) becomes the BCP 47 tag
    /// (``normalized(_:)``).
    public static func asWritten(_ text: String) -> String? {
        guard let first = text.split(separator: ",", omittingEmptySubsequences: false).first else { return nil }
        let trimmed = String(first).trimmingCharacters()
        guard !trimmed.isEmpty else { return nil }
        return trimmed.contains("_") ? normalized(trimmed) : trimmed
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
