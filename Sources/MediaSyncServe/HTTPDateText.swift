#if canImport(Glibc)
    import Glibc
#endif

/// IMF-fixdate (`Last-Modified`): `Sun, 06 Nov 1994 08:49:37 GMT`.
enum HTTPDateText {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// The `Content-Type` of a file `serve` sends, by its extension (ASP.NET's `FileExtensionContentTypeProvider` as
/// Jellyfin's `MimeTypes` extends it).
enum ContentTypes {
    static func forExtension(_ ext: String) -> String {
        switch ext.lowercased() {
        case "mkv", "mk3d": return "video/x-matroska"
        case "mka": return "audio/x-matroska"
        case "mp4", "m4v": return "video/mp4"
        case "webm": return "video/webm"
        case "avi": return "video/x-msvideo"
        case "mov": return "video/quicktime"
        case "ts", "m2ts", "mts": return "video/mp2t"
        case "wmv": return "video/x-ms-wmv"
        case "mpg", "mpeg": return "video/mpeg"
        case "ogv": return "video/ogg"
        case "mp3": return "audio/mpeg"
        case "m4a", "m4b": return "audio/mp4"
        case "aac": return "audio/aac"
        case "ogg", "oga", "opus": return "audio/ogg"
        case "flac": return "audio/flac"
        case "wav": return "audio/wav"
        case "srt": return "application/x-subrip"
        case "vtt": return "text/vtt"
        case "ass", "ssa": return "text/x-ssa"
        case "sub": return "text/plain"
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "webp": return "image/webp"
        case "gif": return "image/gif"
        // Books as Jellyfin serves them (`MimeTypes.cs` L69–74, v10.10.7, and the MimeTypes package's table).
        case "epub": return "application/epub+zip"
        case "pdf": return "application/pdf"
        case "mobi": return "application/x-mobipocket-ebook"
        case "azw", "azw3": return "application/vnd.amazon.ebook"
        case "cbz": return "application/vnd.comicbook+zip"
        case "cbr": return "application/vnd.comicbook-rar"
        case "cb7": return "application/x-cb7"
        case "cbt": return "application/x-cbt"
        default: return "application/octet-stream"
        }
    }

    static func forPath(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        return forExtension(String(name[name.index(after: dot)...]))
    }
}
