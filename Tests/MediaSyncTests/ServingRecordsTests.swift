import Foundation
import MediaSyncCore
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// The index's records as `serve` reads them: one at a time, and the metadata files' in runs, each the same as the
/// whole list gives.
struct ServingRecordsTests {
    static func entry(_ key: FileKey, _ path: String, kind: RemoteFile.Kind, itemId: String) -> IndexEntry {
        IndexEntry(
            file: LocalFile(key: key, path: path, kind: kind, size: 1, signature: "s", itemId: itemId),
            versionId: kind == .media ? itemId : nil, mediaSourceId: nil, container: kind == .media ? "mkv" : nil,
            downloadedAt: "2026-12-01T00:00:00Z", taskId: "t")
    }

    static func recorded(_ index: MirrorIndex) throws {
        var entries: [IndexEntry] = []
        for number in 0..<7 {
            let id = String(format: "%032x", number)
            entries.append(
                entry(.media(itemId: id, versionId: id), "Downloads/\(id)/\(id).mkv", kind: .media, itemId: id))
            entries.append(entry(.metadata(itemId: id), "Downloads/\(id)/metadata.json", kind: .metadata, itemId: id))
        }
        entries.append(
            entry(
                FileKey(rawValue: "podcast-metadata:feed"), "Podcasts/feed/metadata.json", kind: .metadata,
                itemId: "feed"))
        try index.record(entries)
    }

    @Test func recordsOneAtATimeAreTheWholeList() async throws {
        try await TemporaryDirectory.with { folder in
            let index = try MirrorIndex(path: folder.file("index.sqlite"))
            try Self.recorded(index)
            var seen: [IndexEntry] = []
            try index.forEachEntryForServing { seen.append($0) }
            #expect(seen == (try index.entries(forServing: true)))
            #expect(seen.count == 15)
        }
    }

    /// Runs of any length, read after the last path of the one before, give every metadata record once, in path
    /// order; the last run is short (or empty).
    @Test(arguments: [1, 2, 7, 8, 100]) func metadataRecordsInRunsAreAllOfThem(limit: Int) async throws {
        try await TemporaryDirectory.with { folder in
            let index = try MirrorIndex(path: folder.file("index.sqlite"))
            try Self.recorded(index)
            let expected = try index.entries(forServing: true).filter { $0.file.kind == .metadata }
            var read: [IndexEntry] = []
            var after: String?
            var run: [IndexEntry]
            repeat {
                run = try index.metadataEntriesForServing(after: after, limit: limit)
                #expect(run.count <= limit)
                read += run
                after = run.last?.file.path
            } while run.count == limit
            #expect(read == expected)
            #expect(read.count == 8)
        }
    }
}
