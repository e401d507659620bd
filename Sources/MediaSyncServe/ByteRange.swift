/// What a `Range` request header asks of a file of a known size, decided as ASP.NET Core's
/// `RangeHelper.ParseRange` does for `PhysicalFile(…, enableRangeProcessing: true)` (which Jellyfin's
/// `LibraryController.GetDownload` and the stream routes answer with).
public enum ByteRange: Sendable, Equatable {
    /// No usable range: the whole file, 200. A header that is absent, not `bytes=`, malformed, or asks for more
    /// than one range (ASP.NET serves no multipart ranges: it answers the whole file).
    case whole
    /// One satisfiable range: 206 with `Content-Range: bytes first-last/size`.
    case partial(first: Int64, last: Int64)
    /// A single range that lies wholly past the end, is inverted, or is a suffix of zero bytes: 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Parses `header` for a file of `size` bytes.
    public static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header else { return .whole }
        let text = header.trimmed
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst("bytes=".count)
        let ranges = spec.split(separator: ",", omittingEmptySubsequences: false)
        guard ranges.count == 1 else { return .whole }
        let range = String(ranges[0]).trimmed
        guard let dash = range.firstIndex(of: "-") else { return .whole }
        let startText = String(range[..<dash]).trimmed
        let endText = String(range[range.index(after: dash)...]).trimmed
        let digits = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
        if startText.isEmpty {
            // A suffix: the last N bytes.
            guard digits(endText), let count = Int64(endText) else { return .whole }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .partial(first: max(0, size - count), last: size - 1)
        }
        guard digits(startText), let first = Int64(startText) else { return .whole }
        if endText.isEmpty {
            return first < size ? .partial(first: first, last: size - 1) : .unsatisfiable
        }
        guard digits(endText), let last = Int64(endText) else { return .whole }
        // An inverted range (last before first): 416, as asked of `serve` (ASP.NET's parser rejects the header
        // instead and serves the whole file; a 416 tells a client its request was wrong).
        guard last >= first else { return .unsatisfiable }
        guard first < size else { return .unsatisfiable }
        return .partial(first: first, last: min(last, size - 1))
    }
}
