import Foundation

/// Chooses a media file's extension: from the response's MIME type, else from the container
/// (which Jellyfin may give as an ffprobe list such as `mov,mp4,m4a,3gp,3g2,mj2`).
public enum MediaExtension {
    private static let byMIMEType: [String: String] = [
        "video/x-matroska": "mkv", "video/matroska": "mkv", "video/webm": "webm", "video/mp4": "mp4",
        "video/quicktime": "mov", "video/x-msvideo": "avi", "video/avi": "avi", "video/mp2t": "ts",
        "video/mpeg": "mpg", "video/x-flv": "flv", "video/3gpp": "3gp", "video/ogg": "ogv", "video/x-ms-wmv": "wmv",
        "audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "audio/aac": "aac",
        "audio/flac": "flac", "audio/x-flac": "flac", "audio/ogg": "ogg", "audio/opus": "opus", "audio/wav": "wav",
        "audio/x-wav": "wav", "audio/webm": "weba",
        // Books, as Jellyfin serves them (`MimeTypes.cs` L69–74, v10.10.7, and the MimeTypes package's table).
        "application/epub+zip": "epub", "application/pdf": "pdf", "application/x-mobipocket-ebook": "mobi",
        "application/vnd.amazon.ebook": "azw3", "application/vnd.comicbook+zip": "cbz",
        "application/vnd.comicbook-rar": "cbr", "application/x-cb7": "cb7", "application/x-cbt": "cbt",
    ]

    /// Other extensions a MIME type is served for, kept when the planned name has one: an audiobook's `.m4b` is
    /// served as `audio/mp4` (`MimeTypes.cs` L96, v10.10.7), a Kindle `.azw` as `application/vnd.amazon.ebook`.
    private static let alsoFor: [String: Set<String>] = [
        "audio/mp4": ["m4b"], "application/vnd.amazon.ebook": ["azw"],
    ]

    /// Containers whose ffprobe names differ from the usual extension.
    private static let byContainer: [String: String] = ["matroska": "mkv", "mpegts": "ts", "mpeg": "mpg"]

    /// The extension for a download; `mimeType` wins when it names a known media type.
    public static func choose(mimeType: String?, container: String?) -> String {
        if let mimeType {
            let essence = mimeType.split(separator: ";").first.map { trimmed($0).lowercased() } ?? ""
            if let planned = container?.lowercased(), alsoFor[essence]?.contains(planned) == true { return planned }
            if let known = byMIMEType[essence] { return known }
        }
        return fromContainer(container)
    }

    /// The extension from a container name or list: `mp4` when the list has it, else its first usable entry.
    public static func fromContainer(_ container: String?) -> String {
        let names = (container ?? "").split(separator: ",").map { trimmed($0).lowercased() }
        if names.contains("mp4") { return "mp4" }
        for name in names {
            if let mapped = byContainer[name] { return mapped }
            if let safe = SafeName.fileExtension(name) { return safe }
        }
        return "bin"
    }

    /// `text` without the spaces and tabs at its ends, as Foundation's `CharacterSet.whitespaces` trims them (tab,
    /// space, no-break space, U+1680, U+2000–U+200B, U+202F, U+205F, U+3000), without CharacterSet, which cost more
    /// than the rest of placing a downloaded file.
    static func trimmed(_ text: Substring) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x20, 0x09, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: return true
            default: return false
            }
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
