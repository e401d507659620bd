import Foundation
import MediaSyncCore

/// A books library, added on request (``TestLibrary/addBooks(_:)``) so a library without it keeps its views and ids.
///
/// Layout, as Jellyfin's resolvers make a library of `CollectionType` `books` (v10.8.13–v10.11.11):
/// - every audio file there is an `AudioBook` (`AudioResolver` L124–127, v10.10.7); a folder holding one book file
///   is that `AudioBook`, named after the folder (`FindAudioBook` L142–155);
/// - a folder of several parts is **not** one item: the stack is skipped ("until we sort out naming for multi-part
///   books", `ResolveMultipleAudio` L189–193), each file is resolved alone (`LibraryManager.ResolvePaths` L661–690),
///   so the folder is a plain `Folder` and each part an `AudioBook` child (`IsInMixedFolder`), numbered by its tag;
/// - `.azw .azw3 .cb7 .cbr .cbt .cbz .epub .mobi .pdf` files are `Book` items (`BookResolver` L19): `MediaType`
///   `Book`, `RunTimeTicks` one second (`Book` constructor, `Book.cs` L15–18), no `MediaSources` (a `Book` is not
///   `IHasMediaSources`), the file from `/Items/{id}/Download` only.
///
/// Here: a `books` CollectionFolder "Books" holding one author `Folder` ("Test Author 1") with a single-file
/// audiobook, a three-part audiobook folder, and one book per extension asked for.
extension TestLibrary {
    /// What ``TestLibrary/addBooks(_:)`` generates.
    public struct BooksSpec: Sendable, Equatable {
        /// Base size of an audiobook file; each gets a small extra.
        public var audioSize: Int
        /// Base size of a book file.
        public var bookSize: Int
        /// The length of each audiobook (part) in seconds.
        public var audioSeconds: Int
        /// One `Book` per extension, in this order.
        public var bookExtensions: [String]

        public init(
            audioSize: Int = 48 * 1024, bookSize: Int = 16 * 1024, audioSeconds: Int = 3_600,
            bookExtensions: [String] = ["epub", "cbz", "pdf"]
        ) {
            self.audioSize = audioSize
            self.bookSize = bookSize
            self.audioSeconds = audioSeconds
            self.bookExtensions = bookExtensions
        }
    }

    /// The ids ``TestLibrary/addBooks(_:)`` made.
    public struct BookIds: Sendable, Equatable {
        public var booksViewId: String
        /// The author's folder (a plain `Folder`).
        public var authorFolderId: String
        /// An audiobook of one `.m4b` file in its own folder.
        public var singleAudiobookId: String
        /// The folder of a book in three parts (a plain `Folder`).
        public var multiPartFolderId: String
        /// Its parts in the order Jellyfin plays them: by `IndexNumber`, then name (the last part has no number).
        public var partIds: [String]
        /// One `Book` per extension of the spec, in its order.
        public var bookIds: [String]
    }

    /// Id of the `books` CollectionFolder ("" without books).
    public var booksViewId: String { views.first(where: { $0.collectionType == "books" })?.id ?? "" }
    /// Every `AudioBook`, in library order.
    public var audiobooks: [TestItem] { items.filter { $0.type == "AudioBook" } }
    /// Every `Book`, in library order.
    public var books: [TestItem] { items.filter { $0.type == "Book" } }

    /// The MIME type `/Download` sends for a book file (`MimeTypes.cs` L69–74, v10.10.7, else the MimeTypes
    /// package's table that `MimeTypes.GetMimeType` falls back to).
    static func bookMimeType(_ fileExtension: String) -> String? {
        switch fileExtension.lowercased() {
        case "epub": return "application/epub+zip"
        case "pdf": return "application/pdf"
        case "mobi": return "application/x-mobipocket-ebook"
        case "azw", "azw3": return "application/vnd.amazon.ebook"
        case "cbz": return "application/vnd.comicbook+zip"
        case "cbr": return "application/vnd.comicbook-rar"
        case "cb7": return "application/x-cb7"
        case "cbt": return "application/x-cbt"
        default: return nil
        }
    }

    /// Adds the books library (see ``BooksSpec``); deterministic from the seed. A library that already has books is
    /// left as it is.
    @discardableResult
    public mutating func addBooks(_ spec: BooksSpec = BooksSpec()) -> BookIds {
        let seed = self.seed
        func id(_ label: String) -> String { SplitMix64.hexID(seed: seed, label: label) }
        func size(_ base: Int, _ label: String) -> Int {
            let spread = UInt64(max(1, min(4096, base / 8)))
            return max(0, base) + Int(SplitMix64.hash("size-\(seed)-\(label)") % spread)
        }
        let view = id("view-books")
        let author = "Test Author 1"
        let authorFolder = id("books-author-0")
        let single = id("audiobook-single")
        let multi = id("audiobook-multi")
        let parts = [id("audiobook-multi-part-0"), id("audiobook-multi-part-1"), id("audiobook-multi-part-2")]
        let bookIds = spec.bookExtensions.indices.map { id("book-\($0)") }
        let ids = BookIds(
            booksViewId: view, authorFolderId: authorFolder, singleAudiobookId: single, multiPartFolderId: multi,
            partIds: parts, bookIds: bookIds)
        guard booksViewId.isEmpty else { return ids }
        let baseDate = 1_690_000_000.0 + 20_000_000
        var counter = 0
        func nextDate() -> Date {
            counter += 1
            return Date(timeIntervalSince1970: baseDate + Double(counter) * 60)
        }
        views.append(
            TestItem(
                id: view, name: "Books", type: "CollectionFolder", path: "/config/root/default/Books",
                collectionType: "books", imageTags: ["Primary": id("img-\(view)")],
                dateCreated: Date(timeIntervalSince1970: baseDate), etag: id("etag-\(view)"), isFolder: true))
        let authorPath = "/media/Books/\(author)"
        var added = [
            TestItem(
                id: authorFolder, name: author, type: "Folder", parentId: view, path: authorPath,
                dateCreated: nextDate(), etag: id("etag-\(authorFolder)"), isFolder: true)
        ]
        let ticks = Int64(max(1, spec.audioSeconds)) * 10_000_000
        func audiobook(_ itemId: String, name: String, path: String, parent: String, index: Int?, title: String)
            -> TestItem
        {
            let created = nextDate()
            var source = TestMediaSource(
                id: itemId, name: name, path: path, container: "m4b", size: size(spec.audioSize, itemId),
                etag: id("source-etag-\(itemId)"), runTimeTicks: ticks, lastModified: created)
            source.audio = TestAudioStream(codec: "aac", channels: 2, sampleRate: 44_100, bitRate: 64_000)
            var item = TestItem(
                id: itemId, name: name, type: "AudioBook", parentId: parent, indexNumber: index, path: path,
                mediaSources: [source], imageTags: ["Primary": id("img-\(itemId)")], dateCreated: created,
                etag: id("etag-\(itemId)"), runTimeTicks: ticks, isFolder: false)
            item.mediaType = "Audio"
            // The file's tags (`AudioFileProber`): the book's title as album, its author as artist and album artist.
            item.album = title
            item.artists = [author]
            item.albumArtists = [author]
            return item
        }
        let singleTitle = "Test Audiobook 1"
        added.append(
            audiobook(
                single, name: singleTitle, path: "\(authorPath)/\(singleTitle)/\(singleTitle).m4b",
                parent: authorFolder,
                index: nil, title: singleTitle))
        let multiTitle = "Test Audiobook 2"
        let multiPath = "\(authorPath)/\(multiTitle)"
        added.append(
            TestItem(
                id: multi, name: multiTitle, type: "Folder", parentId: authorFolder, path: multiPath,
                imageTags: ["Primary": id("img-\(multi)")], dateCreated: nextDate(), etag: id("etag-\(multi)"),
                isFolder: true))
        // Stored out of play order, and named so that name order is not play order either: part 1 "The Beginning",
        // part 2 "A Middle", and a last part whose file has no track number.
        let partSpecs: [(String, Int?, String)] = [
            ("A Middle", 2, "02 A Middle.m4b"), ("Closing", nil, "Closing.m4b"),
            ("The Beginning", 1, "01 The Beginning.m4b"),
        ]
        let partOrder = [1, 2, 0]
        for (position, spec) in partSpecs.enumerated() {
            added.append(
                audiobook(
                    parts[partOrder[position]], name: spec.0, path: "\(multiPath)/\(spec.2)", parent: multi,
                    index: spec.1, title: multiTitle))
        }
        for (n, fileExtension) in spec.bookExtensions.enumerated() {
            let bookId = bookIds[n]
            let title = "Test Book \(n + 1)"
            let path = "\(authorPath)/\(title).\(fileExtension)"
            let created = nextDate()
            // The file a Book has (not a media source on the wire: only Download serves it).
            let file = TestMediaSource(
                id: bookId, name: title, path: path, container: fileExtension, size: size(spec.bookSize, bookId),
                etag: id("source-etag-\(bookId)"), runTimeTicks: 10_000_000, lastModified: created)
            var book = TestItem(
                id: bookId, name: title, type: "Book", parentId: authorFolder, path: path, mediaSources: [file],
                imageTags: ["Primary": id("img-\(bookId)")], dateCreated: created, etag: id("etag-\(bookId)"),
                runTimeTicks: 10_000_000, isFolder: false)
            book.mediaType = "Book"
            book.artists = []
            book.people = [TestPerson(name: author, type: "Author")]
            added.append(book)
        }
        items += added
        return ids
    }
}

/// One entry of an item's `People` (`BaseItemPerson`): a book's author (`Book.SupportsPeople`, v10.10.7 L28).
public struct TestPerson: Sendable, Equatable {
    public var name: String
    /// `Author`, `Actor`, …
    public var type: String

    public init(name: String, type: String) {
        self.name = name
        self.type = type
    }
}
