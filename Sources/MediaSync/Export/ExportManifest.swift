import Foundation

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
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(JournalLine.self, from: Data($0)) }
    }
}
