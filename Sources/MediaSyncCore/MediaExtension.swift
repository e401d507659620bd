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
    ]

    /// Containers whose ffprobe names differ from the usual extension.
    private static let byContainer: [String: String] = ["matroska": "mkv", "mpegts": "ts", "mpeg": "mpg"]

    /// The extension for a download; `mimeType` wins when it names a known media type.
    public static func choose(mimeType: String?, container: String?) -> String {
        if let mimeType {
            let essence =
                mimeType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            if let known = byMIMEType[essence] { return known }
        }
        return fromContainer(container)
    }

    /// The extension from a container name or list: `mp4` when the list has it, else its first usable entry.
    public static func fromContainer(_ container: String?) -> String {
        let names = (container ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if names.contains("mp4") { return "mp4" }
        for name in names {
            if let mapped = byContainer[name] { return mapped }
            if let safe = SafeName.fileExtension(name) { return safe }
        }
        return "bin"
    }
}
