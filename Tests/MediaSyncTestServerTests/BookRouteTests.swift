import Foundation
import MediaSyncJSON
import Testing

@testable import MediaSyncTestServer

/// A books library as each modelled Jellyfin version answers it: `AudioBook` items with media sources, a multi-part
/// book as a plain `Folder` of them, `Book` items without media sources, their files from `/Download` with their MIME
/// types, and the audiobook rule applied to a playback stop.
@Suite struct BookRouteTests {
    static func makeServer(_ profile: JellyfinProfile) throws -> (TestServer, TestLibrary, TestLibrary.BookIds) {
        var library = TestLibrary(movies: 1, series: 0)
        let ids = library.addBooks(TestLibrary.BooksSpec(audioSize: 3_000, bookSize: 2_000))
        let server = try TestSupport.makeServer(library)
        server.profile = profile
        return (server, library, ids)
    }

    static func items(_ response: RawResponse) -> [JSONValue] {
        guard case .array(let items)? = response.json?["Items"] else { return [] }
        return items
    }

    @Test(arguments: JellyfinProfile.allCases)
    func itemsAndFiles(profile: JellyfinProfile) throws {
        let (server, library, ids) = try Self.makeServer(profile)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        let user = library.userId
        // The view lists the author's folder; below it, recursively, every audiobook and book.
        let top = try TestSupport.request(server, "/Items?userId=\(user)&parentId=\(ids.booksViewId)", headers: [auth])
        #expect(Self.items(top).compactMap { $0["Type"]?.stringValue } == ["Folder"])
        let all = try TestSupport.request(
            server,
            "/Items?userId=\(user)&parentId=\(ids.booksViewId)&recursive=true&includeItemTypes=AudioBook,Book"
                + "&fields=MediaSources,CanDownload,Path,ParentId",
            headers: [auth])
        let listed = Self.items(all)
        #expect(listed.count == 1 + 3 + 3)
        for item in listed {
            let type = item["Type"]?.stringValue
            #expect(item["CanDownload"]?.boolValue == true)
            if type == "AudioBook" {
                #expect(item["MediaType"]?.stringValue == "Audio")
                #expect(item["Container"]?.stringValue == "m4b")
                guard case .array(let sources)? = item["MediaSources"] else {
                    Issue.record("an audiobook without media sources")
                    continue
                }
                #expect(sources.count == 1)
            } else {
                #expect(type == "Book")
                #expect(item["MediaType"]?.stringValue == "Book")
                #expect(item["MediaSources"] == nil)
                #expect(item["RunTimeTicks"]?.intValue == 10_000_000)
            }
        }
        // The parts' parent is the multi-part folder; the single book's is the author's folder.
        let parents = Dictionary(
            listed.compactMap { item in item["Id"]?.stringValue.map { ($0, item["ParentId"]?.stringValue ?? "") } },
            uniquingKeysWith: { first, _ in first })
        #expect(ids.partIds.allSatisfy { parents[$0] == ids.multiPartFolderId })
        #expect(parents[ids.singleAudiobookId] == ids.authorFolderId)
        // Play order is the parts' SortName order (an `Audio`'s: its number as `0000 - `, then its name), which puts
        // a part without a number after the numbered; by `IndexNumber` alone it comes first (SQLite's NULL).
        let parts = try TestSupport.request(
            server, "/Items?userId=\(user)&parentId=\(ids.multiPartFolderId)&sortBy=SortName", headers: [auth])
        #expect(Self.items(parts).compactMap { $0["Id"]?.stringValue } == ids.partIds)
        let byNumber = try TestSupport.request(
            server, "/Items?userId=\(user)&parentId=\(ids.multiPartFolderId)&sortBy=IndexNumber", headers: [auth])
        #expect(Self.items(byNumber).compactMap { $0["Id"]?.stringValue }.first == ids.partIds[2])
        // A book's author, with the People field (and on a single item, which has every field).
        let book = try TestSupport.request(
            server, "/Items?userId=\(user)&ids=\(ids.bookIds[0])&fields=People", headers: [auth])
        #expect(Self.items(book).first?["People"]?.arrayValue?.first?["Type"]?.stringValue == "Author")
        let plain = try TestSupport.request(server, "/Items?userId=\(user)&ids=\(ids.bookIds[0])", headers: [auth])
        #expect(Self.items(plain).first?["People"] == nil)
        // Download: each file byte for byte, with Jellyfin's MIME type and the file's name.
        let types = [
            ids.singleAudiobookId: "audio/mp4", ids.bookIds[0]: "application/epub+zip",
            ids.bookIds[1]: "application/vnd.comicbook+zip", ids.bookIds[2]: "application/pdf",
        ]
        for (id, type) in types {
            let file = try TestSupport.request(server, "/Items/\(id)/Download", headers: [auth])
            #expect(file.status == 200)
            #expect(file.headers["content-type"] == type, "\(id)")
            #expect(TestSupport.same(file.body, library.mediaBytes(forMediaSourceId: id) ?? []))
        }
        let ranged = try TestSupport.request(
            server, "/Items/\(ids.bookIds[0])/Download", headers: [auth, ("Range", "bytes=10-19")])
        #expect(ranged.status == 206 && ranged.body.count == 10)
    }

    /// A playback stop (`DELETE /Users/{userId}/PlayingItems/{itemId}?positionTicks=`, every version): an audiobook
    /// keeps its position unless in its first or last 5 minutes, a book keeps any position.
    @Test(
        arguments: [
            (4, false, 0), (30, false, 30), (56, true, 0),
        ] as [(Int64, Bool, Int64)])
    func aStopInAnAudiobook(minutes: Int64, played: Bool, kept: Int64) throws {
        let (server, library, ids) = try Self.makeServer(.v10_8)
        defer { server.shutdown() }
        let auth = TestSupport.authHeader(library.accessToken)
        let minute: Int64 = 600_000_000
        let part = ids.partIds[0]
        let stop = try TestSupport.request(
            server, "DELETE", "/Users/\(library.userId)/PlayingItems/\(part)?positionTicks=\(minutes * minute)",
            headers: [auth])
        #expect(stop.status == 204)
        #expect(server.userData(of: part)?.played == played)
        #expect(server.userData(of: part)?.playbackPositionTicks == kept * minute)
        let book = ids.bookIds[0]
        _ = try TestSupport.request(
            server, "DELETE", "/Users/\(library.userId)/PlayingItems/\(book)?positionTicks=\(minutes * minute)",
            headers: [auth])
        #expect(server.userData(of: book)?.playbackPositionTicks == minutes * minute)
        #expect(server.userData(of: book)?.played == false)
    }
}
