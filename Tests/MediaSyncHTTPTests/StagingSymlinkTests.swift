import Foundation
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncHTTP

/// A symbolic link planted where the engine keeps a partial file must never be written through.
@Suite struct StagingSymlinkTests {
    @Test func aSymlinkAtThePartialFilesNameIsRemovedNotWrittenThrough() async throws {
        try await withServerAndFolder { server, folder in
            let outside = try TemporaryDirectory()
            defer { outside.remove() }
            let victim = outside.file("victim")
            #expect(FileManager.default.createFile(atPath: victim, contents: Data("must survive".utf8)))
            let bytes = testBytes(2 << 20, seed: 3)
            server.setFile("/big.bin", contents: bytes)
            let destination = folder.file("big.bin")
            let staging = StagingArea(directory: folder.file("staging"))
            try FileManager.default.createDirectory(atPath: staging.directory, withIntermediateDirectories: true)
            // A resume record that matches, so the engine would resume from the link's target.
            try staging.writeRecord(
                .init(url: server.baseURL + "/big.bin", validator: "Tue, 14 Nov 2023 22:13:20 GMT"), for: destination)
            try FileManager.default.createSymbolicLink(
                atPath: staging.partPath(for: destination), withDestinationPath: victim)

            let engine = makeEngine(staging: staging.directory)
            let result = await engine.download([
                TransferRequest(id: "big", url: server.baseURL + "/big.bin", destination: destination)
            ])
            #expect(result.allSucceeded)
            #expect(readBytes(destination) == bytes)
            #expect(FileManager.default.contents(atPath: victim) == Data("must survive".utf8))
            #expect(server.requests(to: "/big.bin").first?.headers["range"] == nil)
            var info = stat()
            #expect(lstat(destination, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
        }
    }

    /// The partial file's name is made by bytes now; it is the name Foundation's path and character-set methods made
    /// (a partial download of an earlier version is still found and resumed).
    @Test(arguments: [
        "/m/Downloads/abc/abc-def.mkv", "/m/Downloads/x/Amélie à Paris (2001).mp4", "/m/a b/c:d*e?.srt",
        "/m/" + String(repeating: "long-name_", count: 8) + ".mkv", "/m/Downloads/x/", "relative.bin", "/m/日本語.mkv",
    ])
    func thePartialFilesNameIsTheOneFoundationMade(destination: String) {
        let staging = StagingArea(directory: "/tmp/staging")
        #expect(
            staging.partPath(for: destination)
                == StagingNames.partPath(staging: "/tmp/staging", destination: destination))
    }
}
