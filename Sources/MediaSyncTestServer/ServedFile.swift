import Foundation

/// A static representation served with ASP.NET Core–like conditional and Range semantics.
struct ServedFile: Sendable {
    var contents: [UInt8]
    var lastModified: Date
    var contentType: String
    /// Full ETag header value including quotes (e.g. `"abc"`), or nil for none.
    var etag: String?
    var contentDispositionFilename: String?
    var extraHeaders: [(String, String)] = []

    /// Builds the response for `method` given the request headers.
    /// - Parameter ignoreRange: answer 200 with the whole body even if Range is sent (fault injection).
    func response(method: String, headers: [String: String], ignoreRange: Bool = false) -> HTTPResponse {
        let size = contents.count
        var base: [(String, String)] = [
            ("Content-Type", contentType),
            ("Last-Modified", HTTPDate.format(lastModified)),
            ("Accept-Ranges", "bytes"),
        ]
        if let etag { base.append(("ETag", etag)) }
        if let name = contentDispositionFilename {
            base.append(("Content-Disposition", "attachment; filename=\"\(name)\""))
        }
        base.append(contentsOf: extraHeaders)

        guard method == "GET" || method == "HEAD" else {
            var r = HTTPResponse.empty(405)
            r.headers = [("Allow", "GET, HEAD")]
            return r
        }

        // Conditional GET: If-None-Match takes precedence over If-Modified-Since.
        if let inm = headers["if-none-match"] {
            if ServedFile.noneMatchHits(inm, etag: etag) {
                var notModified = HTTPResponse(status: 304, headers: base.filter { $0.0 != "Content-Type" })
                notModified.representationSize = size
                return notModified
            }
        } else if let ims = headers["if-modified-since"], let since = HTTPDate.parse(ims),
            HTTPDate.seconds(lastModified) <= HTTPDate.seconds(since)
        {
            var notModified = HTTPResponse(status: 304, headers: base.filter { $0.0 != "Content-Type" })
            notModified.representationSize = size
            return notModified
        }

        var full = HTTPResponse(status: 200, headers: base, body: contents, representationSize: size)
        guard !ignoreRange, let rangeHeader = headers["range"] else { return full }
        guard ifRangeAllowsRange(headers["if-range"]) else { return full }

        switch ServedFile.parseRange(rangeHeader, size: size) {
        case .ignore:
            return full
        case .unsatisfiable:
            var r = HTTPResponse(status: 416, headers: base + [("Content-Range", "bytes */\(size)")])
            r.representationSize = size
            return r
        case .range(let range):
            full.status = 206
            full.headers.append(("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"))
            full.bodyRange = range
            return full
        }
    }

    /// If-Range evaluation matching ASP.NET Core's RangeHelper/StaticFileContext behaviour.
    func ifRangeAllowsRange(_ value: String?) -> Bool {
        guard let raw = value?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return true }
        if raw.hasPrefix("\"") || raw.hasPrefix("W/") {
            // Entity tag. ASP.NET quirk: when the resource has NO ETag the check is skipped → 206 anyway.
            guard let etag else { return true }
            if raw.hasPrefix("W/") || etag.hasPrefix("W/") { return false }
            return raw == etag
        }
        guard let date = HTTPDate.parse(raw) else { return false }
        return HTTPDate.seconds(date) == HTTPDate.seconds(lastModified)
    }

    static func noneMatchHits(_ header: String, etag: String?) -> Bool {
        let candidates = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if candidates.contains("*") { return true }
        guard let etag else { return false }
        let strip: (String) -> String = { $0.hasPrefix("W/") ? String($0.dropFirst(2)) : $0 }
        return candidates.contains { strip($0) == strip(etag) }
    }

    enum RangeResult: Equatable {
        case ignore
        case unsatisfiable
        case range(Range<Int>)
    }

    /// Parses a single `bytes=` range. Multi-range and malformed headers are ignored (→ 200 full).
    static func parseRange(_ header: String, size: Int) -> RangeResult {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .ignore }
        let spec = trimmed.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .ignore }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else { return .ignore }
            if suffix == 0 || size == 0 { return .unsatisfiable }
            return .range(max(0, size - suffix)..<size)
        }
        guard let start = Int(first), start >= 0 else { return .ignore }
        var end = size - 1
        if !last.isEmpty {
            guard let e = Int(last), e >= start else { return .ignore }
            end = min(e, size - 1)
        }
        if start >= size { return .unsatisfiable }
        return .range(start..<(end + 1))
    }
}
