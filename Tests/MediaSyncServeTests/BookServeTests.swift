import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import Testing

/// Audiobooks and books answered by `serve` from the mirror alone, the home server stopped: the books view, an
/// audiobook of one file, the folder of a book in parts and its parts in play order, books with no media sources and
/// their files from `/Download` byte for byte.
@Suite struct BookServeTests {
    static func library() -> (TestLibrary, TestLibrary.BookIds) {
        var library = TestLibrary(movies: 1, series: 0, mediaSize: 2_000, seed: 5)
        let ids = library.addBooks(TestLibrary.BooksSpec(audioSize: 6_000, bookSize: 4_000))
        return (library, ids)
    }

    /// A served mirror of the whole books library, the home server stopped.
    static func serving(
        profile: JellyfinProfile = .newest,
        _ body: (ServeHTTP, String, TestLibrary, TestLibrary.BookIds) async throws -> Void
    ) async throws {
        let (library, ids) = Self.library()
        try await ServeFixture.with(library, profile: profile) { fixture in
            try fixture.index.select(Selection(id: ids.booksViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
            let report = try await fixture.sync()
            #expect(report.failed.isEmpty, "\(report.failed)")
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            fixture.upstream.shutdown()
            try await fixture.serving { http in
                let auth = try await http.signIn()
                let token = auth.object["AccessToken"] as? String ?? ""
                try await body(http, token, library, ids)
            }
        }
    }

    @Test(arguments: JellyfinProfile.allCases)
    func theBooksViewItsAudiobooksAndBooks(_ profile: JellyfinProfile) async throws {
        try await Self.serving(profile: profile) { http, token, library, ids in
            let views = try await http.send("GET", "/Users/\(library.userId)/Views", token: token)
            let books = try #require(views.items.first { $0["CollectionType"] as? String == "books" })
            #expect(books["Name"] as? String == "Books")
            let viewId = try #require(books["Id"] as? String)
            // The view holds the audiobook of one file, the folder of the book in parts and the books.
            let top = try await http.send("GET", "/Items?ParentId=\(viewId)&SortBy=SortName", token: token)
            #expect(top.status == 200)
            let byId = Dictionary(
                top.items.compactMap { item in (item["Id"] as? String).map { ($0, item) } },
                uniquingKeysWith: { first, _ in first })
            #expect(byId.count == 2 + ids.bookIds.count, "\(top.items.map { $0["Name"] ?? "" })")
            #expect(byId[ids.singleAudiobookId]?["Type"] as? String == "AudioBook")
            #expect(byId[ids.multiPartFolderId]?["Type"] as? String == "Folder")
            #expect(byId[ids.multiPartFolderId]?["IsFolder"] as? Bool == true)
            for id in ids.bookIds { #expect(byId[id]?["Type"] as? String == "Book") }
            // The parts, in play order whether a sort is asked or not.
            for query in ["", "&SortBy=SortName", "&SortBy=SortName&SortOrder=Ascending"] {
                let parts = try await http.send(
                    "GET", "/Items?ParentId=\(ids.multiPartFolderId)\(query)", token: token)
                #expect(parts.items.compactMap { $0["Id"] as? String } == ids.partIds, "\(query)")
                #expect(parts.items.allSatisfy { $0["Type"] as? String == "AudioBook" })
            }
            // Recursive: every audiobook of the view.
            let recursive = try await http.send(
                "GET", "/Items?ParentId=\(viewId)&Recursive=true&IncludeItemTypes=AudioBook", token: token)
            #expect(
                Set(recursive.items.compactMap { $0["Id"] as? String }) == Set([ids.singleAudiobookId] + ids.partIds))

            // An audiobook: its media source, an m4b served as audio/mp4, byte for byte.
            let single = try await http.send("GET", "/Items/\(ids.singleAudiobookId)", token: token)
            #expect(single.object["Type"] as? String == "AudioBook")
            #expect(single.object["MediaType"] as? String == "Audio")
            let sources = try #require(single.object["MediaSources"] as? [[String: Any]])
            #expect(sources.map { $0["Container"] as? String } == ["m4b"])
            let file = try await http.send("GET", "/Items/\(ids.singleAudiobookId)/Download", token: token)
            #expect(file.status == 200)
            #expect(file.headers["content-type"] == "audio/mp4")
            #expect(file.body == library.mediaBytes(forMediaSourceId: ids.singleAudiobookId))
            #expect(file.headers["content-disposition"]?.contains("Test Audiobook 1.m4b") == true)
            for part in ids.partIds {
                let stream = try await http.send("GET", "/Audio/\(part)/stream?static=true", token: token)
                #expect(stream.status == 200)
                #expect(stream.body == library.mediaBytes(forMediaSourceId: part))
            }

            // A book: no media sources, MediaType Book, its file from /Download byte for byte with its type and name.
            for (id, (type, name)) in zip(
                ids.bookIds,
                [
                    ("application/epub+zip", "Test Book 1.epub"), ("application/vnd.comicbook+zip", "Test Book 2.cbz"),
                    ("application/pdf", "Test Book 3.pdf"),
                ])
            {
                let book = try await http.send("GET", "/Users/\(library.userId)/Items/\(id)", token: token)
                #expect(book.object["Type"] as? String == "Book")
                #expect(book.object["MediaType"] as? String == "Book")
                #expect(book.object["MediaSources"] == nil)
                #expect(book.object["CanDownload"] as? Bool == true)
                let download = try await http.send("GET", "/Items/\(id)/Download", token: token)
                #expect(download.status == 200)
                #expect(download.headers["content-type"] == type)
                #expect(download.headers["content-disposition"]?.contains(name) == true)
                #expect(download.body == library.mediaBytes(forMediaSourceId: id))
            }
            // A reader resumes a book by ranges.
            let bytes = try #require(library.mediaBytes(forMediaSourceId: ids.bookIds[0]))
            let ranged = try await http.send(
                "GET", "/Items/\(ids.bookIds[0])/Download", token: token, headers: ["Range": "bytes=100-199"])
            #expect(ranged.status == 206)
            #expect(ranged.body == Array(bytes[100..<200]))
        }
    }

    /// A client's stop reports on an audiobook follow Jellyfin's audiobook rule (first and last 5 minutes, whatever
    /// the percentage), and wait in the index for the next sync.
    @Test func stopsInAnAudiobookFollowTheAudiobookRule() async throws {
        let (library, ids) = Self.library()
        try await ServeFixture.with(library) { fixture in
            try fixture.index.select(Selection(id: ids.booksViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
            try await fixture.sync()
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            fixture.upstream.shutdown()
            let minute = 600_000_000
            try await fixture.serving { http in
                let token = try await http.signIn().object["AccessToken"] as? String ?? ""
                // 4 of 60 minutes (7 %: a video would keep it): nothing. 30 minutes: kept. 54.5 minutes (91 %: a
                // video would be played) with 5.5 left: kept.
                for (part, position) in zip(ids.partIds, [4 * minute, 30 * minute, 545 * minute / 10]) {
                    _ = try await http.send("POST", "/Sessions/Playing", token: token, json: ["ItemId": part])
                    let stop: [String: Any] = ["ItemId": part, "PositionTicks": position]
                    #expect(
                        try await http.send("POST", "/Sessions/Playing/Stopped", token: token, json: stop).status
                            == 204)
                }
                let data = try await http.send("GET", "/UserItems/\(ids.partIds[1])/UserData", token: token)
                #expect(data.object["PlaybackPositionTicks"] as? Int == 30 * minute)
                #expect(data.object["Played"] as? Bool == false)
            }
            let pending = try fixture.index.playEvents(state: .pending)
            #expect(pending.map(\.itemId) == [ids.partIds[1], ids.partIds[2]])
            #expect(pending.map(\.kind) == [.position, .position])
            #expect(pending.map(\.positionTicks) == [Int64(30 * minute), Int64(545 * minute / 10)])
        }
    }

    /// The page's mirror bar counts audiobooks and books as books.
    @Test func thePagesMirrorBarHasTheBooks() async throws {
        let (library, ids) = Self.library()
        try await ServeFixture.with(library) { fixture in
            try fixture.index.select(Selection(id: ids.booksViewId, kind: .library, addedAt: "2026-01-01T00:00:00Z"))
            try await fixture.sync()
            fixture.upstream.shutdown()
            // No password, loopback: the page asks for none.
            try await fixture.serving { http in
                let mirror = try await WebClient(base: http.base).send("GET", "/mediasync/")
                #expect(mirror.status == 200)
                #expect(mirror.text.contains("class=\"k-books\""))
                #expect(mirror.text.contains("Books <strong>"))
                #expect(!mirror.text.contains("Other <strong>"))
            }
        }
    }
}
