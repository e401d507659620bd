import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

/// Audiobooks and books as a user handles them, each command its own process, against the test server at every
/// version it models: select an audiobook, the folder of a book in parts and a book (by id and by name), sync, ls, du,
/// export, and a second sync with nothing to do.
@Suite struct BookCommandTests {
    @Test(arguments: JellyfinProfile.allCases)
    func theBooksStoryEndToEnd(_ profile: JellyfinProfile) async throws {
        var library = TestLibrary(movies: 1, series: 0, mediaSize: 2_000, seed: 13)
        let ids = library.addBooks(TestLibrary.BooksSpec(audioSize: 4_000, bookSize: 3_000))
        let sandbox = try MusicCommandTests.Sandbox(library: library, profile: profile)
        defer { sandbox.tearDown() }
        let login = try await sandbox.run(
            ["login", sandbox.server.baseURL, "--username", "demo", "--password-stdin"], input: "demo\n")
        #expect(login.status == 0, "\(login.stderr)")

        for arguments in [
            ["select", "audiobook", ids.singleAudiobookId], ["select", "audiobook", "Test Audiobook 2"],
            ["select", "book", "Test Book 1"], ["select", "book", ids.bookIds[1]], ["select", "book", ids.bookIds[2]],
        ] {
            let selected = try await sandbox.run(arguments)
            #expect(selected.status == 0, "\(arguments): \(selected.stderr)")
        }
        // A kind that is not the item's, and a quality for a book, are refused with one line.
        let wrongKind = try await sandbox.run(["select", "book", ids.singleAudiobookId])
        #expect(wrongKind.status != 0 && wrongKind.stderr.contains("AudioBook"), "\(wrongKind.stderr)")
        let quality = try await sandbox.run(["select", "audiobook", ids.singleAudiobookId, "--quality", "720p"])
        #expect(quality.status == 64, "\(quality.stderr)")
        let selections = try await sandbox.run(["selections", "--json"])
        #expect(selections.stdout.contains("\"audiobook\"") && selections.stdout.contains("\"book\""))
        // The book in parts was found by its folder's name.
        #expect(selections.stdout.contains(ids.multiPartFolderId), "\(selections.stdout)")

        // Older servers differ in nothing here: a sync says nothing more and exits 0.
        let sync = try await sandbox.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(!sync.stderr.contains("skipped") && !sync.stdout.contains("skipped"), "\(sync.stdout)\(sync.stderr)")
        let mirror = sandbox.files(under: "mirror/Downloads")
        #expect(mirror.contains("\(ids.singleAudiobookId)/\(ids.singleAudiobookId)-\(ids.singleAudiobookId).m4b"))
        for part in ids.partIds { #expect(mirror.contains("\(ids.multiPartFolderId)/\(part)-\(part).m4b")) }
        #expect(mirror.contains("\(ids.bookIds[0])/\(ids.bookIds[0])-\(ids.bookIds[0]).epub"))

        // ls and du name them.
        let ls = try await sandbox.run(["ls", "--json"])
        #expect(ls.status == 0, "\(ls.stderr)")
        let rows = (try JSONSerialization.jsonObject(with: Data(ls.stdout.utf8)) as? [[String: Any]]) ?? []
        let types = Dictionary(
            rows.compactMap { row in (row["id"] as? String).map { ($0, row["type"] as? String ?? "") } },
            uniquingKeysWith: { first, _ in first })
        #expect(types[ids.singleAudiobookId] == "audiobook")
        #expect(types[ids.multiPartFolderId] == "audiobook")
        for part in ids.partIds { #expect(types[part] == "audiobook-part") }
        for book in ids.bookIds { #expect(types[book] == "book") }
        let onlyBooks = try await sandbox.run(["ls", "--type", "book"])
        #expect(onlyBooks.status == 0 && onlyBooks.stdout.contains("Test Book 3"), "\(onlyBooks.stderr)")
        #expect(!onlyBooks.stdout.contains("Test Audiobook"))
        let parts = try await sandbox.run(["ls", "--type", "audiobook-part"])
        let partLines = parts.stdout.split(separator: "\n").filter { $0.contains("audiobook-part") }
        #expect(partLines.map { $0.contains("The Beginning") } == [true, false, false], "\(parts.stdout)")
        let du = try await sandbox.run(["du"])
        #expect(du.status == 0 && du.stdout.contains("Test Audiobook 2") && du.stdout.contains("Book"), "\(du.stdout)")

        // A second sync has nothing to do.
        let again = try await sandbox.run(["sync", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        #expect((report?["downloaded"] as? [Any])?.isEmpty ?? false, "\(again.stdout.prefix(400))")

        // The export: Audiobooks/<Author>/<Title>/, the parts numbered in play order, Books/<Author>/<Title>.<ext>.
        let export = try await sandbox.run(["export", sandbox.folder + "/usb", "--only", "books"])
        #expect(export.status == 0, "\(export.stderr)")
        let exported = sandbox.files(under: "usb").filter { !$0.hasPrefix(".") }
        let expected: Set<String> = [
            "Audiobooks/Test Author 1/Test Audiobook 1/Test Audiobook 1.m4b",
            "Audiobooks/Test Author 1/Test Audiobook 1/cover.jpg",
            "Audiobooks/Test Author 1/Test Audiobook 2/01 - The Beginning.m4b",
            "Audiobooks/Test Author 1/Test Audiobook 2/02 - A Middle.m4b",
            "Audiobooks/Test Author 1/Test Audiobook 2/03 - Closing.m4b",
            "Audiobooks/Test Author 1/Test Audiobook 2/cover.jpg",
            "Books/Test Author 1/Test Book 1.epub", "Books/Test Author 1/Test Book 2.cbz",
            "Books/Test Author 1/Test Book 3.pdf",
        ]
        #expect(Set(exported) == expected, "\(exported)")
        let epub = FileManager.default.contents(atPath: sandbox.folder + "/usb/Books/Test Author 1/Test Book 1.epub")
        let same = epub.map { [UInt8]($0) } == library.mediaBytes(forMediaSourceId: ids.bookIds[0])
        #expect(same, "the exported epub is the server's file")
        let second = try await sandbox.run(["export", sandbox.folder + "/usb", "--only", "books"])
        #expect(second.status == 0, "\(second.stderr)")
    }
}
