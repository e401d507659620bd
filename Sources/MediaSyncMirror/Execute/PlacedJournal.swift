import MediaSyncCore

/// The line format of `.mediasync/placed.journal`: one placed file per line, its index record's fields separated by
/// tabs, between a version mark and an end mark, so a line cut short by a kill is recognised and ignored.
/// A missing value is an empty field; a present one starts with `=`; tab, newline, carriage return and backslash are
/// escaped.
enum PlacedJournal {
    private static let mark = "p1"
    private static let end = "end"

    static func line(for entry: IndexEntry) -> String {
        String(decoding: bytes(for: entry), as: UTF8.self)
    }

    /// ``line(for:)`` as the bytes written, made in one buffer (a placed file's line is written on every placement).
    static func bytes(for entry: IndexEntry) -> [UInt8] {
        let fields: [String?] = [
            entry.file.key.rawValue, entry.file.path, entry.file.kind.rawValue, String(entry.file.size),
            entry.file.signature,
            entry.file.itemId, entry.versionId, entry.mediaSourceId, entry.container, entry.downloadedAt, entry.taskId,
            entry.validator, entry.contentHash,
        ]
        var out: [UInt8] = []
        out.reserveCapacity(512)
        out += mark.utf8
        for field in fields {
            out.append(UInt8(ascii: "\t"))
            guard let field else { continue }
            out.append(UInt8(ascii: "="))
            for byte in field.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case UInt8(ascii: "\t"): out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case UInt8(ascii: "\n"): out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case UInt8(ascii: "\r"): out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\t"))
        out += end.utf8
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// Where the complete lines of a journal end: after its last newline (what follows is a line cut short, or the
    /// zeros of room taken ahead).
    static func endOfLines(in bytes: [UInt8]) -> Int {
        bytes.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
    }

    /// The complete lines' records, in order; damaged or cut lines are left out.
    static func entries(in bytes: [UInt8]) -> [IndexEntry] {
        bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            entry(String(decoding: line, as: UTF8.self))
        }
    }

    static func entry(_ line: String) -> IndexEntry? {
        let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 15, parts.first == mark, parts.last == end else { return nil }
        var values: [String?] = []
        for part in parts[1..<14] {
            if part.isEmpty {
                values.append(nil)
            } else if part.hasPrefix("=") {
                values.append(unescape(String(part.dropFirst())))
            } else {
                return nil
            }
        }
        guard let key = values[0], let path = values[1], let kind = values[2].flatMap(RemoteFile.Kind.init(rawValue:)),
            let size = values[3].flatMap({ Int64($0) }), let signature = values[4], let itemId = values[5],
            let downloadedAt = values[9], let taskId = values[10]
        else { return nil }
        return IndexEntry(
            file: LocalFile(
                key: FileKey(rawValue: key), path: path, kind: kind, size: size, signature: signature, itemId: itemId),
            versionId: values[6], mediaSourceId: values[7], container: values[8], downloadedAt: downloadedAt,
            taskId: taskId, validator: values[11], contentHash: values[12])
    }

    private static func unescape(_ text: String) -> String {
        var out = ""
        var escaping = false
        for character in text.unicodeScalars {
            if escaping {
                switch character {
                case "t": out += "\t"
                case "n": out += "\n"
                case "r": out += "\r"
                default: out.unicodeScalars.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
