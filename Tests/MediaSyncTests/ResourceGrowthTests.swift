import Foundation
import MediaSyncHTTP
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

#if canImport(Glibc)
    import Glibc
#endif

/// Calls a sync (or a long-running `serve`) makes again and again must not grow the heap with each call. Measured in
/// a child process of its own (an exit test), where nothing else allocates meanwhile: its resident memory before and
/// after many calls.
@Suite struct ResourceGrowthTests {
    /// The placed-files journal is read each time a mirror opens and each time a sync surveys it. Read with
    /// Foundation's `contents(atPath:)`, every read of an empty journal (its usual state) kept a 4 KiB buffer.
    @Test func readingTheJournalAgainAndAgainKeepsNothing() async {
        await #expect(processExitsWith: .success) { () async throws in
            let folder = try TemporaryDirectory()
            defer { folder.remove() }
            let root = MirrorRoot(path: folder.file("mirror"))
            let mirror = try Mirror.open(root)
            for contents in ["", "not a journal line\n"] {
                #expect(
                    FileManager.default.createFile(atPath: mirror.executor.journalPath, contents: Data(contents.utf8)))
                for _ in 0..<100 { _ = mirror.executor.journaledFiles() }
                let before = residentBytes()
                for _ in 0..<10_000 { _ = mirror.executor.journaledFiles() }
                let grown = residentBytes() - before
                // A 4 KiB leak per read would be 40 MB here. Under AddressSanitizer, whose quarantine holds freed
                // memory, LeakSanitizer checks this child's leaks at its exit instead.
                if grown > 8 << 20 && !Sanitizers.addressSanitizerIsOn {
                    print("the heap grew by \(grown) bytes over 10,000 journal reads (\(contents.count)-byte journal)")
                    exit(1)
                }
            }
        }
    }

    @Test func readingASmallFileAgainAndAgainKeepsNothing() async {
        await #expect(processExitsWith: .success) { () async throws in
            let folder = try TemporaryDirectory()
            defer { folder.remove() }
            for size in [0, 1, 4096, 20_000] {
                let path = folder.file("file-\(size)")
                #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: size)))
                #expect(FileBytes.read(path) == [UInt8](repeating: 7, count: size))
                let before = residentBytes()
                for _ in 0..<10_000 { _ = FileBytes.read(path) }
                if residentBytes() - before > 8 << 20 && !Sanitizers.addressSanitizerIsOn { exit(1) }
            }
            #expect(FileBytes.read(folder.file("absent")) == nil)
            #expect(FileBytes.read(folder.path) == nil)
            #expect(FileBytes.read(folder.file("file-20000"), limit: 19_999) == nil)
            #expect(FileBytes.read(folder.file("file-20000"), limit: 20_000)?.count == 20_000)
            #expect(symlink(folder.file("file-1"), folder.file("link")) == 0)
            #expect(FileBytes.read(folder.file("link"), followLinks: false) == nil)
            #expect(FileBytes.read(folder.file("link"))?.count == 1)
        }
    }
}

/// The process's resident memory, from `/proc/self/statm` (in pages).
private func residentBytes() -> Int {
    guard let text = FileBytes.read("/proc/self/statm").map({ String(decoding: $0, as: UTF8.self) }) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
