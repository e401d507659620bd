/// Reads the file name from a `Content-Disposition` header (RFC 6266), preferring `filename*`.
enum ContentDisposition {
    static func filename(_ header: String?) -> String? {
        guard let header else { return nil }
        var plain: String?
        var extended: String?
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmed(of: " ").lowercased()
            var value = String(pair[1].trimmed(of: " "))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            if key == "filename" {
                plain = value
            } else if key == "filename*" {
                // charset'language'percent-encoded
                let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3 { extended = String(pieces[2]).removingPercentEncoding }
            }
        }
        return extended ?? plain
    }
}
