import Foundation
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@testable import MediaSyncHTTP

/// The engine hands each complete, verified file to its caller's placing, which names it; the engine itself names
/// nothing it was not told to.
@Suite struct DownloadPlacingTests {
    private struct Refused: Error, CustomStringConvertible {
        var description: String { "refused by the caller" }
    }

    /// Leaves the first bytes of `destination`'s file in staging with a resume record, as an earlier run would.
    private static func plantPartial(
        _ staging: StagingArea, for destination: String, bytes: ArraySlice<UInt8>, url: String
    ) throws {
        try FileManager.default.createDirectory(atPath: staging.directory, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: staging.partPath(for: destination), contents: Data(bytes)))
        try staging.writeRecord(.init(url: url, validator: "Tue, 14 Nov 2023 22:13:20 GMT"), for: destination)
    }

    @Test(arguments: [false, true])
    func theCallerNamesTheFileWhereItChooses(resumed: Bool) async throws {
        try await withServerAndFolder { server, folder in
            let bytes = testBytes(300_000, seed: 11)
            server.setFile("/a.bin", contents: bytes, contentType: "video/mp4")
            let destination = folder.file("item/a.mkv")
            let staging = StagingArea(directory: folder.file("staging"))
            if resumed {
                // Half of it in staging from an earlier run: the file placed is the named partial one, completed.
                try Self.plantPartial(
                    staging, for: destination, bytes: bytes[0..<150_000], url: server.baseURL + "/a.bin")
            }
            let handed = Locked<[String?]>([])
            let chosen = folder.file("item/a.mp4")
            let result = await makeEngine(staging: staging.directory).download(
                [TransferRequest(id: "a", url: server.baseURL + "/a.bin", destination: destination)],
                placing: { completed in
                    handed.withLock { $0.append(completed.contentType) }
                    #expect(completed.size == Int64(bytes.count))
                    try completed.place(at: chosen)
                    return chosen
                })
            #expect(result.allSucceeded)
            #expect((try? result.outcomes.first?.result.get())?.path == chosen)
            #expect(handed.withLock { $0 } == ["video/mp4"])
            #expect(readBytes(chosen) == bytes)
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(server.requests(to: "/a.bin").last?.headers["range"] == (resumed ? "bytes=150000-" : nil))
            let left = (try? FileManager.default.contentsOfDirectory(atPath: staging.directory)) ?? []
            #expect(left.isEmpty, "staging keeps \(left)")
        }
    }

    /// Where the caller's placing runs: a small file on the libcurl loop's thread, where the batch's workers run (no
    /// thread hand-off per file); a file of 64 KiB or more, or any file in durable mode, on another thread (the loop
    /// must not wait on the disk). `finished` runs on the loop's thread.
    @Test(arguments: [(2_000, false, true), (300_000, false, false), (2_000, true, false)])
    func placingRunsOnTheLoopsThreadForSmallFilesOnly(size: Int, durable: Bool, onTheLoop: Bool) async throws {
        try await withServerAndFolder { server, folder in
            server.setFile("/s.bin", contents: testBytes(size, seed: 3), contentType: "application/octet-stream")
            let onLoop = Locked<[Bool]>([])
            let destination = folder.file("item/s.bin")
            let result = await makeEngine(durable: durable).download(
                [TransferRequest(id: "s", url: server.baseURL + "/s.bin", destination: destination)],
                placing: { completed in
                    onLoop.withLock { $0.append(CurlMultiLoop.shared.isLoopThread) }
                    return try completed.placeAtDestination()
                },
                finished: { _ in onLoop.withLock { $0.append(CurlMultiLoop.shared.isLoopThread) } })
            #expect(result.allSucceeded)
            // Placing first, then finished.
            #expect(onLoop.withLock { $0 } == [onTheLoop, true])
            #expect(readBytes(destination)?.count == size)
        }
    }

    /// Refused fresh (an unnamed file) or resumed (a named partial file, complete now): nothing is kept.
    @Test(arguments: [false, true])
    func aFileTheCallerRefusesIsNamedNowhereAndLeavesNothing(resumed: Bool) async throws {
        try await withServerAndFolder { server, folder in
            let bytes = testBytes(50_000, seed: 12)
            server.setFile("/b.bin", contents: bytes)
            let destination = folder.file("item/b.bin")
            let staging = folder.file("staging")
            if resumed {
                try Self.plantPartial(
                    StagingArea(directory: staging), for: destination, bytes: bytes[0..<20_000],
                    url: server.baseURL + "/b.bin")
            }
            let calls = Locked(0)
            let result = await makeEngine(staging: staging).download(
                [TransferRequest(id: "b", url: server.baseURL + "/b.bin", destination: destination)],
                placing: { _ in
                    calls.withLock { $0 += 1 }
                    throw Refused()
                })
            let error = result.outcomes.first?.error
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains("refused by the caller") == true)
            #expect(calls.withLock { $0 } == 1, "a refusal is final, not retried")
            #expect(!FileManager.default.fileExists(atPath: destination))
            let inItem = (try? FileManager.default.contentsOfDirectory(atPath: folder.file("item"))) ?? []
            #expect(inItem.isEmpty, "the item's folder holds \(inItem)")
            let inStaging = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
            #expect(inStaging.isEmpty, "staging holds \(inStaging)")
        }
    }

    /// A folder made for the batch and removed before the file is named (an emptied folder goes with the file a
    /// newer version replaced) is made again.
    @Test func aFolderRemovedDuringTheBatchIsMadeAgain() async throws {
        try await withServerAndFolder { server, folder in
            let bytes = testBytes(40_000, seed: 13)
            server.setFile("/c.bin", contents: bytes)
            let destination = folder.file("item/c.bin")
            let result = await makeEngine(staging: folder.file("staging")).download(
                [TransferRequest(id: "c", url: server.baseURL + "/c.bin", destination: destination)],
                placing: { completed in
                    #expect(rmdir(folder.file("item")) == 0)
                    return try completed.placeAtDestination()
                })
            #expect(result.allSucceeded, "\(result.outcomes.map(\.error))")
            #expect(readBytes(destination) == bytes)
        }
    }
}
