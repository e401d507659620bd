import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import Testing

/// What a `kill -9` leaves in the staging area (found by Scripts/torture-kill.sh): the next sync removes what
/// nothing would use again, and keeps the partial files it can resume.
@Suite struct KilledRunLeftoversTests {
    @Test func aSyncRemovesTheTemporariesAKilledRunLeftInStaging() async throws {
        let library = TestLibrary(movies: 1, series: 0, mediaSize: 20_000)
        let fixture = try await MirrorFixture(library: library)
        defer { fixture.tearDown() }
        try fixture.select(.movie, library.movies[0].id)
        let staging = fixture.root.stagingDirectory
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        let stale = [
            "write-6F1C1F0E-0000-4000-8000-000000000000.tmp",  // a metadata write killed before its rename
            ".dat.nosync1a2b.Xyz123",  // a resume record killed before its rename
            "0123abcd-gone.mkv.part.meta",  // a record whose partial file was already placed
        ]
        let kept = ["4567ef01-later.mkv.part", "4567ef01-later.mkv.part.meta"]
        for name in stale + kept {
            try Data("x".utf8).write(to: URL(fileURLWithPath: staging + "/" + name))
        }

        // A dry run changes nothing, not even there.
        _ = try await fixture.sync(SyncOptions(dryRun: true))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: staging)) == Set(stale + kept))

        let report = try await fixture.sync()
        #expect(report.failed.isEmpty)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: staging)) == Set(kept))
    }
}
