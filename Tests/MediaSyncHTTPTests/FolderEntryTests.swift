import Foundation
import MediaSyncTestSupport
import Testing

@testable import MediaSyncHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// Entry names read from `readdir`'s records: whole, and never past their terminating zero. A folder of thousands of
/// names of every length fills `readdir`'s buffer to its end, where reading a record's whole declared 256-byte name
/// ran past the buffer (a crash when that was the end of the mapped memory; an AddressSanitizer report in
/// `Scripts/sanitizers.sh`).
@Suite struct FolderEntryTests {
    @Test func everyNameOfAFolderOfNamesOfEveryLengthIsReadWhole() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var made = Set<String>()
        for number in 0..<3000 {
            // Up to 245 bytes: one in three names has two-byte characters.
            let name = "\(number)-" + String(repeating: number % 3 == 0 ? "é" : "x", count: 1 + number % 120)
            made.insert(name)
            #expect(FileManager.default.createFile(atPath: folder.file(name), contents: nil))
        }
        let listing = try #require(opendir(folder.path))
        defer { closedir(listing) }
        var read = Set<String>()
        while let entry = readdir(listing) {
            let name = Folders.entryName(entry)
            if name != "." && name != ".." { read.insert(name) }
        }
        #expect(read == made)
        #expect(!Folders.isEmpty(folder.path))
    }

    @Test func aFolderWithNothingInItIsEmpty() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        #expect(Folders.isEmpty(folder.path))
        #expect(!Folders.isEmpty(folder.file("missing")))
    }
}
