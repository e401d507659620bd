import Foundation
import MediaSyncCore
import MediaSyncJSON

/// What an export wrote to a destination, kept there as `.mediasync-export.json`: each exported file by its path
/// relative to the destination. Only files listed here are ever replaced, moved or deleted by a later export.
public struct ExportManifest: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        /// The mirror's index key of the source, or `playlist:…` for a generated playlist.
        public var key: String
        /// The source's path relative to the mirror's root (nil for generated files).
        public var source: String?
        /// The source's identity when it was exported (size, mtime, inode), or the content hash of a generated file.
        public var identity: String
        /// The exported file's size.
        public var size: Int64
        /// `media` or `podcasts`: which `--only` scope the file belongs to.
        public var scope: String

        public init(key: String, source: String?, identity: String, size: Int64, scope: String) {
            self.key = key
            self.source = source
            self.identity = identity
            self.size = size
            self.scope = scope
        }
    }

    public var format = 1
    public var files: [String: Entry] = [:]

    public init(files: [String: Entry] = [:]) {
        self.files = files
    }

    /// Reads a manifest (through the byte-level parser: `JSONDecoder` on tens of thousands of entries was slow).
    public init(parsing bytes: [UInt8]) throws {
        let document = try JSONValue(parsing: bytes)
        guard document["format"]?.intValue == 1, let files = document["files"]?.objectValue else {
            throw JSONParseError.unexpectedEnd
        }
        for (path, value) in files {
            guard let key = value["key"]?.stringValue, let identity = value["identity"]?.stringValue,
                let size = value["size"]?.intValue, let scope = value["scope"]?.stringValue
            else { throw JSONParseError.unexpectedEnd }
            self.files[path] = Entry(
                key: key, source: value["source"]?.stringValue, identity: identity, size: size, scope: scope)
        }
    }

    /// The manifest as JSON text: sorted, one file per line.
    public func rendered() -> [UInt8] {
        var out = Array("{\"format\":1,\"files\":{".utf8)
        out.reserveCapacity(files.count * 200)
        var first = true
        for path in files.keys.sorted() {
            guard let entry = files[path] else { continue }
            out.append(contentsOf: (first ? "\n" : ",\n").utf8)
            first = false
            JSONWriter.writeString(path, into: &out)
            out.append(UInt8(ascii: ":"))
            ExportManifest.appendEntry(entry, into: &out)
        }
        out.append(contentsOf: "\n}}\n".utf8)
        return out
    }

    /// The manifest's file name in the destination.
    public static let fileName = ".mediasync-export.json"
    /// The journal of a run in progress: a line per file placed, removed or being written, folded into the manifest
    /// when the run ends (or by the next run after a kill).
    public static let journalName = ".mediasync-export.journal"

    /// One line of the journal.
    public struct JournalLine: Codable, Sendable, Equatable {
        /// `put` (a file is about to get its final name), `del` (a file was removed), `tmp` (a temporary file is
        /// about to be created).
        public var op: String
        public var path: String
        public var entry: Entry?

        public init(op: String, path: String, entry: Entry? = nil) {
            self.op = op
            self.path = path
            self.entry = entry
        }
    }

    /// One journal line as JSON text ending in a newline (written by hand: the journal gets two lines per file, and
    /// `JSONEncoder` per line was a measurable part of an export of many small files).
    public static func journalText(_ line: JournalLine) -> [UInt8] {
        var out = Array(#"{"op":"#.utf8)
        JSONWriter.writeString(line.op, into: &out)
        out.append(contentsOf: #","path":"#.utf8)
        JSONWriter.writeString(line.path, into: &out)
        if let entry = line.entry {
            out.append(contentsOf: #","entry":"#.utf8)
            appendEntry(entry, into: &out)
        }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    private static func appendEntry(_ entry: Entry, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"key":"#.utf8)
        JSONWriter.writeString(entry.key, into: &out)
        if let source = entry.source {
            out.append(contentsOf: #","source":"#.utf8)
            JSONWriter.writeString(source, into: &out)
        }
        out.append(contentsOf: #","identity":"#.utf8)
        JSONWriter.writeString(entry.identity, into: &out)
        out.append(contentsOf: #","size":\#(entry.size),"scope":"#.utf8)
        JSONWriter.writeString(entry.scope, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The manifest after a killed run's journal: `put` lines count only when the file is at its path with the
    /// recorded size (`sizeAt`); `del` lines drop entries. Returns the temporary files the journal names.
    public mutating func replay(_ lines: [JournalLine], sizeAt: (String) -> Int64?) -> [String] {
        var temporaries: [String] = []
        for line in lines {
            switch line.op {
            case "put":
                if let entry = line.entry, sizeAt(line.path) == entry.size { files[line.path] = entry }
            case "del":
                files[line.path] = nil
            case "tmp":
                temporaries.append(line.path)
            default:
                break
            }
        }
        return temporaries
    }

    /// Parses journal text; a torn last line (killed mid-write) is ignored.
    public static func journalLines(_ data: Data) -> [JournalLine] {
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap {
            try? decoder.decode(JournalLine.self, from: Data($0))
        }
    }
}
