import Foundation
import Testing

@testable import MediaSyncMirror

/// Where an exported mirror's audiobooks and books go: `Audiobooks/Author/Title/` (one file as the title, parts
/// numbered in play order, `cover.jpg`) and `Books/Author/Title.ext`.
@Suite struct ExportBookLayoutTests {
    func file(_ key: String, _ ext: String) -> ExportSource.File {
        ExportSource.File(key: key, path: "Downloads/x/\(key).\(ext)", size: 1, identity: "i")
    }

    func part(_ id: String, _ title: String) -> ExportSource.Track {
        ExportSource.Track(
            id: id, title: title, disc: nil, number: nil, runTimeSeconds: 60, media: file("media:\(id):\(id)", "m4b"),
            lyrics: nil)
    }

    @Test func audiobooksAndBooks() {
        var source = ExportSource()
        source.audiobooks = [
            ExportSource.Audiobook(
                id: "single", title: "Dune", author: "Frank Herbert", cover: file("image:single:Primary", "jpeg"),
                parts: [part("single", "Dune")]),
            // Twelve parts: numbered 01 to 12 in their order (not by title); no author, no cover.
            ExportSource.Audiobook(
                id: "parts", title: "The Long Book?", author: nil, cover: nil,
                parts: (1...12).map { part("p\($0)", $0 == 1 ? "Zero Hour" : "Part \($0)") }),
        ]
        source.books = [
            ExportSource.Book(id: "b1", title: "Dune", author: "Frank Herbert", file: file("media:b1:b1", "epub")),
            // The same title by the same author in another format is its own file; the same name twice is told apart.
            ExportSource.Book(id: "b2", title: "Dune", author: "Frank Herbert", file: file("media:b2:b2", "pdf")),
            ExportSource.Book(id: "b3", title: "Dune", author: "Frank Herbert", file: file("media:b3:b3", "pdf")),
            ExportSource.Book(id: "b4", title: "Watchmen", author: nil, file: file("media:b4:b4", "cbz")),
        ]
        let targets = ExportLayout.targets(source, scope: .books, playlists: false)
        let paths = Dictionary(targets.map { ($0.key, $0.path) }, uniquingKeysWith: { first, _ in first })
        #expect(paths["media:single:single"] == "Audiobooks/Frank Herbert/Dune/Dune.m4b")
        #expect(paths["image:single:Primary"] == "Audiobooks/Frank Herbert/Dune/cover.jpg")
        #expect(paths["media:p1:p1"] == "Audiobooks/Unknown Author/The Long Book_/01 - Zero Hour.m4b")
        #expect(paths["media:p12:p12"] == "Audiobooks/Unknown Author/The Long Book_/12 - Part 12.m4b")
        #expect(paths["media:b1:b1"] == "Books/Frank Herbert/Dune.epub")
        #expect(paths["media:b2:b2"] == "Books/Frank Herbert/Dune.pdf")
        #expect(paths["media:b3:b3"]?.hasPrefix("Books/Frank Herbert/Dune") == true)
        #expect(paths["media:b3:b3"] != paths["media:b2:b2"])
        #expect(paths["media:b4:b4"] == "Books/Unknown Author/Watchmen.cbz")
        #expect(targets.allSatisfy { $0.scope == "books" })
        // Another scope leaves them out; no scope keeps them.
        #expect(ExportLayout.targets(source, scope: .music, playlists: false).isEmpty)
        #expect(ExportLayout.targets(source, scope: nil, playlists: false).count == targets.count)
    }
}
