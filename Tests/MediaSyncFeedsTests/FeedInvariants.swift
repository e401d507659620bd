import Foundation

@testable import MediaSyncFeeds

/// What every parse result must satisfy, whatever the input: the checks the fuzz tests apply to each document.
enum FeedInvariants {
    /// Text of XML 1.0 characters only: no NUL, no other C0 control (tab, line feed and carriage return aside), no
    /// U+FFFE/U+FFFF. What a title or description may hold.
    static func isCleanText(_ text: String) -> Bool {
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: continue
            case 0x00...0x1F, 0xFFFE, 0xFFFF: return false
            default: continue
            }
        }
        return true
    }

    /// A URL as the parser hands it on: not empty, printable ASCII only (spaces and other bytes percent-encoded).
    static func isCleanURL(_ url: String) -> Bool {
        !url.isEmpty && url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// The problems with a parsed feed (empty when it is fine).
    static func problems(in feed: Feed) -> [String] {
        var problems: [String] = []
        func text(_ name: String, _ value: String?) {
            guard let value else { return }
            if value.isEmpty { problems.append("\(name) is empty (absent values are nil)") }
            if !isCleanText(value) {
                problems.append("\(name) holds a control character: \(value.debugDescription.prefix(200))")
            }
        }
        func url(_ name: String, _ value: String?) {
            guard let value else { return }
            if !isCleanURL(value) {
                problems.append("\(name) is not a clean URL: \(value.debugDescription.prefix(200))")
            }
        }
        text("feed.title", feed.title)
        text("feed.description", feed.description)
        text("feed.author", feed.author)
        text("feed.language", feed.language)
        text("feed.podcastGUID", feed.podcastGUID)
        url("feed.link", feed.link)
        url("feed.imageURL", feed.imageURL)
        url("feed.newFeedURL", feed.newFeedURL)
        for funding in feed.funding {
            url("funding.url", funding.url)
            text("funding.title", funding.title)
        }
        var guidCounts: [String: Int] = [:]
        for (index, episode) in feed.episodes.enumerated() {
            let name = "episodes[\(index)]"
            text("\(name).guid", episode.guid)
            text("\(name).title", episode.title)
            text("\(name).description", episode.description)
            text("\(name).episodeType", episode.episodeType)
            url("\(name).link", episode.link)
            url("\(name).imageURL", episode.imageURL)
            url("\(name).chaptersURL", episode.chaptersURL)
            if let enclosure = episode.enclosure {
                url("\(name).enclosure.url", enclosure.url)
                text("\(name).enclosure.type", enclosure.type)
                if let length = enclosure.length, length < 0 {
                    problems.append("\(name).enclosure.length is \(length)")
                }
            }
            for transcript in episode.transcripts {
                url("\(name).transcript.url", transcript.url)
                text("\(name).transcript.type", transcript.type)
            }
            if let duration = episode.durationSeconds, duration < 0 {
                problems.append("\(name).durationSeconds is \(duration)")
            }
            if let published = episode.published, !published.timeIntervalSince1970.isFinite {
                problems.append("\(name).published is not finite")
            }
            if episode.guidIsFallback, episode.guid == nil { problems.append("\(name): fallback guid but no guid") }
            if let guid = episode.guid { guidCounts[guid, default: 0] += 1 }
        }
        let duplicates = guidCounts.filter { $0.value > 1 }.map(\.key).sorted()
        if feed.duplicateGUIDs != duplicates {
            problems.append(
                "duplicateGUIDs \(feed.duplicateGUIDs.prefix(5)) but the episodes repeat \(duplicates.prefix(5))")
        }
        if let note = feed.recoveredError, note.isEmpty || note.contains("\n") {
            problems.append("recoveredError is not one line: \(note.debugDescription.prefix(200))")
        }
        return problems
    }

    /// The problems with ``FeedJSON``'s output for a feed: it must be JSON, with ISO 8601 UTC dates.
    static func problems(inJSON json: String) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return ["FeedJSON output is not a JSON object: \(json.prefix(200))"]
        }
        var problems: [String] = []
        for episode in (object["episodes"] as? [[String: Any]]) ?? [] {
            guard let published = episode["published"] else { continue }
            let ok = (published as? String).map { value in
                value.utf8.count == 20 && value.hasSuffix("Z")
                    && value.utf8.enumerated().allSatisfy { index, byte in
                        switch index {
                        case 4, 7: byte == UInt8(ascii: "-")
                        case 10: byte == UInt8(ascii: "T")
                        case 13, 16: byte == UInt8(ascii: ":")
                        case 19: true
                        default: byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                        }
                    }
            }
            if ok != true { problems.append("published is not ISO 8601 UTC: \(published)") }
        }
        return problems
    }

    /// The problems with OPML outlines.
    static func problems(in outlines: [OPMLOutline]) -> [String] {
        var problems: [String] = []
        for (index, outline) in outlines.enumerated() {
            if !isCleanURL(outline.xmlURL) {
                problems.append(
                    "outline[\(index)].xmlURL is not a clean URL: \(outline.xmlURL.debugDescription.prefix(200))")
            }
            if let html = outline.htmlURL, !isCleanURL(html) {
                problems.append("outline[\(index)].htmlURL is not a clean URL: \(html.debugDescription.prefix(200))")
            }
            if let title = outline.title, title.isEmpty || !isCleanText(title) {
                problems.append("outline[\(index)].title: \(title.debugDescription.prefix(200))")
            }
        }
        return problems
    }
}
