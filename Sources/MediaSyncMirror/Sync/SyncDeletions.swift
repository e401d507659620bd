import Foundation
import MediaSyncCore

/// A sync's last step: what nothing wants any more, deleted through the executor's one destructive gate.
extension MirrorSync {
    /// Deletes the files both phases' `actions` let go and reports those kept as extraneous: no deletion at all
    /// without `--delete`, or when more than `--max-delete` would go.
    /// - Parameter released: the play-state ids whose files played cleanup lets go.
    func deleteLeftovers(
        _ actions: [SyncAction], options: SyncOptions, released: Set<String>,
        events: (@Sendable (SyncEvent) -> Void)?, report: inout SyncReport
    ) throws {
        var deletions: [MirrorExecutor.Deletion] = []
        for action in actions {
            switch action {
            case .delete(let file):
                deletions.append(
                    .init(path: file.path, key: file.key, playedCleanup: released.contains(file.playStateId)))
            case .keepExtraneous(let file): report.extraneous.append(file.path)
            default: break
            }
        }
        let outcome = try executor.delete(
            deletions, gate: .init(allowed: options.delete, maxCount: options.maxDelete),
            deleted: { events?(SyncEvent(action: "deleted", path: $0)) })
        if let refused = outcome.refused {
            if !refused.isEmpty { report.deletionAborted = refused }
            report.extraneous += deletions.map(\.path)
        }
        report.deleted += outcome.deleted
        for failure in outcome.failed {
            // Refused (a folder on the way leads out of the root) or failed: reported, kept in the index.
            report.failed.append(SyncReport.Failure(path: failure.path, message: failure.message, essential: true))
            events?(SyncEvent(action: "failed", path: failure.path, message: failure.message))
        }
    }
}
