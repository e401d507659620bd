import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// Audiobooks (one file, or a folder of parts) and books mirrored from the test server at every Jellyfin version it
/// models.
@Suite struct BookSyncTests {
    /// One movie and the books library (a single-file audiobook, a three-part one, an epub, a cbz and a pdf).
    static func library() -> (TestLibrary, TestLibrary.BookIds) {
        var library = TestLibrary(movies: 1, series: 0, mediaSize: 2_000, seed: 11)
        let ids = library.addBooks(TestLibrary.BooksSpec(audioSize: 5_000, bookSize: 3_000))
        return (library, ids)
    }

    static func metadata(_ fixture: MirrorFixture, _ path: String) throws -> DownloadMetadata {
        let bytes = try #require(fixture.bytes(path), "no \(path)")
        return try JSONDecoder().decode(DownloadMetadata.self, from: Data(bytes))
    }

    static func file(_ library: TestLibrary, _ id: String) throws -> TestMediaSource {
        try #require(library.item(withId: id)?.mediaSources.first)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func anAudiobookOfOneFileIsItsM4B(_ profile: JellyfinProfile) async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.audiobook, ids.singleAudiobookId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        let id = ids.singleAudiobookId
        let path = "Downloads/\(id)/\(id)-\(id).m4b"
        #expect(fixture.bytes(path) == library.mediaBytes(forMediaSourceId: id))
        #expect(fixture.tree().contains("Downloads/\(id)/Images/Primary.jpeg"))
        let metadata = try Self.metadata(fixture, "Downloads/\(id)/metadata.json")
        #expect(metadata.itemType == "AudioBook")
        #expect(metadata.displayTitle == "Test Audiobook 1")
        #expect(metadata.versions.map(\.container) == ["m4b"])
        #expect((metadata.tracks ?? []).compactMap { $0["Id"]?.stringValue } == [id])
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty && again.written.isEmpty && again.failed.isEmpty)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func aBookInPartsKeepsEveryPartInPlayOrder(_ profile: JellyfinProfile) async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.audiobook, ids.multiPartFolderId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        let folder = "Downloads/\(ids.multiPartFolderId)"
        for part in ids.partIds {
            #expect(fixture.bytes("\(folder)/\(part)-\(part).m4b") == library.mediaBytes(forMediaSourceId: part))
        }
        #expect(fixture.tree().contains("\(folder)/Images/Primary.jpeg"))
        let metadata = try Self.metadata(fixture, "\(folder)/metadata.json")
        #expect(metadata.itemType == "AudioBook")
        #expect(metadata.displayTitle == "Test Audiobook 2")
        #expect(metadata.item?["Type"]?.stringValue == "Folder")
        // IndexNumber first (1 "The Beginning", 2 "A Middle"), the part without a number last.
        #expect((metadata.tracks ?? []).compactMap { $0["Id"]?.stringValue } == ids.partIds)
        #expect(metadata.versions.compactMap(\.itemId) == ids.partIds)
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty && again.written.isEmpty && again.failed.isEmpty)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func booksAreTheirFilesFromDownloadByteForByte(_ profile: JellyfinProfile) async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        for id in ids.bookIds { try fixture.select(.book, id) }
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        for (id, fileExtension) in zip(ids.bookIds, ["epub", "cbz", "pdf"]) {
            let path = "Downloads/\(id)/\(id)-\(id).\(fileExtension)"
            #expect(fixture.bytes(path) == library.mediaBytes(forMediaSourceId: id), "\(path)")
            let metadata = try Self.metadata(fixture, "Downloads/\(id)/metadata.json")
            #expect(metadata.itemType == "Book")
            #expect(metadata.versions.map(\.container) == [fileExtension])
        }
        // A book has no media sources: nothing asks the server for any.
        #expect(!fixture.server.allRequests.contains { $0.path.lowercased().contains("playbackinfo") })
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty && again.written.isEmpty && again.failed.isEmpty)
    }

    @Test(arguments: JellyfinProfile.allCases)
    func aBooksLibraryIsEveryAudiobookAndBookListedByName(_ profile: JellyfinProfile) async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.library, ids.booksViewId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        let media = fixture.tree().filter {
            $0.hasSuffix(".m4b") || $0.hasSuffix(".epub") || $0.hasSuffix(".cbz") || $0.hasSuffix(".pdf")
        }
        #expect(media.count == 1 + 3 + 3, "\(media)")
        #expect(
            fixture.tree().contains {
                $0 == "Downloads/\(ids.multiPartFolderId)/\(ids.partIds[0])-\(ids.partIds[0]).m4b"
            })
        // ls: the audiobooks, the parts of the one in parts, the books with their author.
        let items = try LocalLibrary(root: fixture.root, index: fixture.index).items()
        func row(_ id: String) -> LocalLibrary.Item? { items.first { $0.id == id } }
        #expect(row(ids.singleAudiobookId)?.type == "audiobook")
        #expect(row(ids.singleAudiobookId)?.title == "Test Audiobook 1")
        #expect(row(ids.singleAudiobookId)?.parent == "Test Author 1")
        #expect(items.filter { $0.id == ids.singleAudiobookId }.count == 1)
        #expect(row(ids.multiPartFolderId)?.type == "audiobook")
        #expect(row(ids.multiPartFolderId)?.title == "Test Audiobook 2")
        #expect(row(ids.multiPartFolderId)?.downloaded == true)
        let parts = items.filter { $0.type == "audiobook-part" }
        #expect(parts.map(\.id) == ids.partIds)
        #expect(parts.map(\.title) == ["The Beginning", "A Middle", "Closing"])
        #expect(parts.allSatisfy { $0.parent == "Test Audiobook 2" && $0.downloaded })
        for (n, id) in ids.bookIds.enumerated() {
            #expect(row(id)?.type == "book")
            #expect(row(id)?.title == "Test Book \(n + 1)")
            #expect(row(id)?.downloaded == true)
            // Its author from its `People`, asked for by id.
            #expect(row(id)?.parent == "Test Author 1")
            #expect(row(id)?.bytes == Int64(try Self.file(library, id).size))
        }
        // du: each by its title and type.
        let usage = try Mirror.using(root: fixture.root, index: fixture.index).storage.usage()
        func entry(_ id: String) -> StorageQueries.Usage.Entry? { usage.entries.first { $0.id == id } }
        #expect(entry(ids.singleAudiobookId)?.type == "AudioBook")
        #expect(entry(ids.multiPartFolderId)?.type == "AudioBook")
        #expect(entry(ids.multiPartFolderId)?.title == "Test Audiobook 2")
        #expect(entry(ids.bookIds[0])?.type == "Book")
        #expect(entry(ids.bookIds[0])?.title == "Test Book 1")
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty && again.written.isEmpty && again.failed.isEmpty)
    }

    @Test func reindexAndVerifyDeepKnowTheBooksFiles() async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.library, ids.booksViewId)
        _ = try await fixture.sync()
        let before = fixture.tree()
        let check = try Mirror.using(root: fixture.root, index: fixture.index).storage.verifyDeep(
            fix: false, deep: true)
        #expect(check.problems.isEmpty)
        #expect(check.hashed >= 7)
        // A damaged part is found by its bytes.
        let part = "Downloads/\(ids.multiPartFolderId)/\(ids.partIds[1])-\(ids.partIds[1]).m4b"
        var bytes = try #require(fixture.bytes(part))
        bytes[0] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.root.path + "/" + part))
        let damaged = try Mirror.using(root: fixture.root, index: fixture.index).storage.verifyDeep(
            fix: false, deep: true)
        #expect(damaged.problems.map(\.path) == [part])
        bytes[0] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.root.path + "/" + part))
        // A fresh index, rebuilt from the tree: every file recorded, an audiobook or book selection for each.
        let fresh = try Reindexer.rebuildFresh(root: fixture.root)
        #expect(fresh.skipped.isEmpty, "\(fresh.skipped)")
        let rebuilt = try MirrorIndex(path: fixture.root.indexPath)
        let kinds = Set(try rebuilt.selections().map { "\($0.kind.rawValue):\($0.id)" })
        #expect(kinds.contains("audiobook:\(ids.singleAudiobookId)"))
        #expect(kinds.contains("audiobook:\(ids.multiPartFolderId)"))
        for id in ids.bookIds { #expect(kinds.contains("book:\(id)")) }
        #expect(kinds.count == 2 + ids.bookIds.count, "\(kinds)")
        let rebuiltFixture = MirrorFixture(reusing: fixture, index: rebuilt)
        let next = try await rebuiltFixture.sync()
        #expect(next.downloaded.isEmpty, "\(next.downloaded)")
        #expect(next.failed.isEmpty, "\(next.failed)")
        #expect(fixture.tree() == before)
        #expect(try Mirror.using(root: fixture.root, index: rebuilt).storage.verify(fix: false).isEmpty)
    }

    @Test func anAudiobookSelectionOfTheAuthorsFolderKeepsEachBookApart() async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.audiobook, ids.authorFolderId)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        let single = try Self.metadata(fixture, "Downloads/\(ids.singleAudiobookId)/metadata.json")
        #expect((single.tracks ?? []).count == 1)
        let parts = try Self.metadata(fixture, "Downloads/\(ids.multiPartFolderId)/metadata.json")
        #expect((parts.tracks ?? []).compactMap { $0["Id"]?.stringValue } == ids.partIds)
        #expect(!fixture.tree().contains { $0.hasPrefix("Downloads/\(ids.authorFolderId)/") })
    }

    @Test func groupsArePartsOfOneFolderInPlayOrder() {
        func item(_ id: String, parent: String?, path: String?, index: Int? = nil, name: String) -> BaseItem {
            var members: [JSONMember] = [
                JSONMember("Id", .string(id)), JSONMember("Name", .string(name)),
                JSONMember("Type", .string("AudioBook")),
            ]
            if let parent { members.append(JSONMember("ParentId", .string(parent))) }
            if let path { members.append(JSONMember("Path", .string(path))) }
            if let index { members.append(JSONMember("IndexNumber", .number(Double(index)))) }
            return BaseItem(unchecked: .object(JSONObject(members)), id: id)
        }
        let items = [
            item("a", parent: "author", path: "/b/Author/One/One.m4b", name: "One"),
            item("p2", parent: "multi", path: "/b/Author/Two/b.m4b", index: 2, name: "A"),
            item("p3", parent: "multi", path: "/b/Author/Two/c.m4b", name: "B"),
            item("p1", parent: "multi", path: "/b/Author/Two/a.m4b", index: 1, name: "Z"),
            item("c", parent: "author", path: "/b/Author/Three/Three.m4b", name: "Three"),
            item("loose", parent: nil, path: nil, name: "Loose"),
            // Without paths (as `serve` lists them): by parent alone.
            item("s2", parent: "served", path: nil, index: 2, name: "Two"),
            item("s1", parent: "served", path: nil, index: 1, name: "One"),
        ]
        let groups = SelectionExpander.audiobookGroups(items)
        #expect(groups.map(\.folderId) == ["a", "multi", "c", "loose", "served"])
        #expect(groups.map { $0.parts.map(\.id) } == [["a"], ["p1", "p2", "p3"], ["c"], ["loose"], ["s1", "s2"]])
    }

    /// Where the user stopped in an audiobook goes home like any played state: the audiobook rule decides what is
    /// recorded here, and each version's way sends it (10.8: a playback stop the server judges by the same rule;
    /// 10.9+: the user data as recorded). A book keeps its position.
    @Test(arguments: JellyfinProfile.allCases)
    func theListeningPositionGoesHome(_ profile: JellyfinProfile) async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.audiobook, ids.multiPartFolderId)
        try fixture.select(.book, ids.bookIds[0])
        _ = try await fixture.sync()
        let book = Mirror.using(root: fixture.root, index: fixture.index).playState
        let minute: Int64 = 600_000_000
        let hour = 60 * minute
        // Part 1 at 30 minutes: kept. Part 2 with 2 minutes left: played. Part 3 at 3 minutes: nothing recorded.
        let first = try book.target(ids.partIds[0], root: fixture.root)
        #expect(first.media == .audiobook)
        #expect(try book.stopped(first, position: 30 * minute, runtime: hour)?.kind == .position)
        let second = try book.target(ids.partIds[1], root: fixture.root)
        #expect(try book.stopped(second, position: 58 * minute, runtime: hour)?.kind == .played)
        let third = try book.target(ids.partIds[2], root: fixture.root)
        #expect(try book.stopped(third, position: 3 * minute, runtime: hour) == nil)
        let epub = try book.target(ids.bookIds[0], root: fixture.root)
        #expect(epub.media == .book)
        #expect(try book.stopped(epub, position: 42 * minute, runtime: 10_000_000)?.kind == .position)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.sourceErrors.isEmpty, "\(report.failed) \(report.sourceErrors)")
        #expect(report.playStateSent == 3)
        #expect(fixture.server.userData(of: ids.partIds[0])?.playbackPositionTicks == 30 * minute)
        #expect(fixture.server.userData(of: ids.partIds[0])?.played == false)
        #expect(fixture.server.userData(of: ids.partIds[1])?.played == true)
        #expect((fixture.server.userData(of: ids.partIds[2])?.playbackPositionTicks ?? 0) == 0)
        #expect(fixture.server.userData(of: ids.bookIds[0])?.playbackPositionTicks == 42 * minute)
        #expect(try fixture.index.playEvents(state: .pending).isEmpty)
    }

    /// A book has no media source to say its file changed: its item's `Etag` does (the server saves the item again
    /// when it finds the new file), and the next sync fetches the new bytes, once.
    @Test func aBookReplacedOnTheServerIsFetchedAgain() async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        let id = ids.bookIds[0]
        try fixture.select(.book, id)
        _ = try await fixture.sync()
        let replaced = [UInt8](repeating: 0x42, count: 1_234)
        fixture.server.updateLibrary { library in
            library.setMediaBytes(replaced, forMediaSourceId: id)
            if let index = library.items.firstIndex(where: { $0.id == id }) { library.items[index].etag += "-saved" }
        }
        let next = try await fixture.sync()
        #expect(next.failed.isEmpty, "\(next.failed)")
        #expect(next.downloaded.count == 1, "\(next.downloaded)")
        #expect(fixture.bytes("Downloads/\(id)/\(id)-\(id).epub") == replaced)
        let again = try await fixture.sync()
        #expect(again.downloaded.isEmpty && again.written.isEmpty)
    }

    /// A collection holding a book and the folder of a book in parts keeps them as their own selections would.
    @Test func aCollectionOfBooksKeepsThem() async throws {
        var (library, ids) = Self.library()
        let view = "b0c0111ec7100000000000000000000a"
        let collection = "b0c0111ec7100000000000000000000b"
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        library.views.append(
            TestItem(
                id: view, name: "Collections", type: "CollectionFolder", path: "/config/root/default/Collections",
                collectionType: "boxsets", dateCreated: created, etag: "etag-view", isFolder: true))
        var box = TestItem(
            id: collection, name: "Reading List", type: "BoxSet", parentId: view, path: "/config/data/collections/r",
            dateCreated: created, etag: "etag-box", isFolder: true)
        box.linkedChildren = [
            TestLinkedChild(itemId: ids.bookIds[1], serial: 0), TestLinkedChild(itemId: ids.partIds[0], serial: 1),
            TestLinkedChild(itemId: ids.partIds[1], serial: 2), TestLinkedChild(itemId: ids.partIds[2], serial: 3),
        ]
        box.displayOrder = "Default"
        library.items.append(box)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.collection, collection)
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        let book = ids.bookIds[1]
        #expect(fixture.bytes("Downloads/\(book)/\(book)-\(book).cbz") == library.mediaBytes(forMediaSourceId: book))
        let parts = try Self.metadata(fixture, "Downloads/\(ids.multiPartFolderId)/metadata.json")
        #expect((parts.tracks ?? []).compactMap { $0["Id"]?.stringValue } == ids.partIds)
        let list = try Self.metadata(fixture, "Downloads/\(collection)/metadata.json")
        #expect(list.entries?.map(\.itemId) == [book] + ids.partIds)
    }

    /// A whole library kept at a video quality keeps its books as their files: a quality is for videos.
    @Test func aLibraryAtAQualityKeepsItsBooksAsTheyAre() async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.index.select(
            Selection(
                id: ids.booksViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z",
                quality: Quality.presets["720p"]))
        let report = try await fixture.sync()
        #expect(report.failed.isEmpty && report.rejected.isEmpty, "\(report.failed) \(report.rejected)")
        for id in ids.bookIds {
            let held = fixture.tree().first { $0.hasPrefix("Downloads/\(id)/\(id)-\(id).") }
            let original = held.flatMap { fixture.bytes($0) } == library.mediaBytes(forMediaSourceId: id)
            #expect(original, "\(id) is held as \(held ?? "nothing")")
        }
        #expect(!fixture.server.allRequests.contains { $0.path.lowercased().contains("playbackinfo") })
    }

    /// A books library's listing is light like any library's: the first sync has the server build the audiobooks'
    /// media sources once (a book has none), a no-op builds none and changes nothing.
    @Test(arguments: [JellyfinProfile.v10_8, .v10_11])
    func aNoOpSyncOfABooksLibraryBuildsNoMediaSources(_ profile: JellyfinProfile) async throws {
        let (library, ids) = Self.library()
        let fixture = try await MirrorFixture(library: library, profile: profile)
        defer { fixture.tearDown() }
        try fixture.select(.library, ids.booksViewId)
        let first = try await fixture.sync()
        #expect(first.failed.isEmpty, "\(first.failed)")
        #expect(fixture.server.counters.mediaSourcesBuilt == 1 + ids.partIds.count)
        fixture.server.counters.reset()
        let quiet = try await fixture.sync()
        #expect(quiet.changedNothing)
        #expect(fixture.server.counters.mediaSourcesBuilt == 0)
    }
}
