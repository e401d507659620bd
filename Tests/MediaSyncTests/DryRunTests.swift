import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

@Suite struct DryRunAndMaxDeleteTests {
    @Test func aDryRunPlansAndLeavesTheTreeByteForByte() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.movie, library.movies[0].id, allVersions: true)
            let snapshot = { fixture.tree().map { ($0, fixture.bytes($0)) } }
            let before = snapshot()
            let plan = try await fixture.sync(SyncOptions(dryRun: true))
            #expect(plan.dryRun)
            #expect(plan.planned.filter { $0.action == "download" }.count == 6)
            #expect(plan.planned.allSatisfy { $0.reason == "new" })
            #expect(fixture.tree().isEmpty && before.isEmpty)
            #expect(try fixture.index.entries().isEmpty)
            #expect(fixture.server.allRequests.filter { $0.path.hasSuffix("/Download") }.isEmpty)

            _ = try await fixture.sync()
            try fixture.index.unselect(id: library.movies[0].id)
            let held = snapshot()
            let deletions = try await fixture.sync(SyncOptions(delete: true, dryRun: true))
            #expect(deletions.planned.filter { $0.action == "delete" }.count == held.count)
            let after = snapshot()
            #expect(after.map(\.0) == held.map(\.0))
            #expect(zip(after, held).allSatisfy { $0.1 == $1.1 })
        }
    }

    @Test func maxDeleteAbortsTheDeletionsWhenMoreWouldGo() async throws {
        try await MirrorFixture.with { fixture, library in
            try fixture.select(.movie, library.movies[0].id, allVersions: true)
            _ = try await fixture.sync()
            let held = fixture.tree()
            try fixture.index.unselect(id: library.movies[0].id)
            let report = try await fixture.sync(SyncOptions(delete: true, maxDelete: 2))
            #expect(report.deleted.isEmpty)
            #expect(report.deletionAborted?.contains("more than --max-delete 2") == true)
            #expect(report.hasEssentialFailures)
            #expect(fixture.tree() == held)
        }
    }
}
