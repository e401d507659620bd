import Foundation
import MediaSync
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// `mediasync get` through the library: names, refusals, and a real transfer from the test server.
struct URLDownloadTests {
    @Test(
        arguments: [
            ("a.bin", "a.bin"), ("dir/b.bin", "dir/b.bin"), ("/etc/passwd", nil), ("../up", nil), ("a/./b", nil),
            ("", nil),
            ("a//b", nil),
        ] as [(String, String?)])
    func aRelativePathStaysInsideTheFolder(_ text: String, _ expected: String?) {
        #expect(URLDownload.relativePath(text) == expected)
    }

    @Test(
        arguments: [
            ("http://h/x/file%20name.mp3", "file name.mp3"), ("https://h/a/b.txt?x=1", "b.txt"), ("http://h/", nil),
            ("ftp://h/file", nil), ("http://h/..", nil), ("http://h/a/b%0Ac", "b_c"),
        ] as [(String, String?)])
    func aURLsLastSegmentIsASafeFileName(_ url: String, _ expected: String?) {
        #expect(URLDownload.fileName(for: url) == expected)
    }

    @Test func twoURLsSavedAsOneFileAreRefusedBeforeAnythingIsFetched() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.setFile("/a/same.bin", contents: [1, 2, 3])
        server.setFile("/b/same.bin", contents: [4, 5, 6])
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let entries = [
            URLDownload.Entry(url: server.baseURL + "/a/same.bin"), .init(url: server.baseURL + "/b/same.bin"),
        ]
        await #expect(throws: URLDownload.ListError.self) {
            _ = try await URLDownload.run(
                entries, into: folder.path, headers: [], configuration: HTTPClientConfiguration(),
                options: TransferOptions())
        }
        #expect(server.requests(to: "/a/same.bin").isEmpty && folder.allFiles().isEmpty)

        let result = try await URLDownload.run(
            [entries[0], .init(url: entries[1].url, path: "other/same.bin")], into: folder.path,
            headers: [("X-Test", "1")], configuration: HTTPClientConfiguration(), options: TransferOptions())
        #expect(result.allSucceeded && result.bytesSucceeded == 6 && result.failureLines.isEmpty)
        #expect(folder.allFiles() == ["other/same.bin", "same.bin"])
        #expect(server.requests(to: "/a/same.bin").first?.headers["x-test"] == "1")
    }
}
