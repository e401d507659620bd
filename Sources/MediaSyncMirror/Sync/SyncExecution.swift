import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncServer

#if canImport(Glibc)
    import Glibc
#endif

/// A sync's third step, before and after the downloads: the space checked, then moves and repairs made through the
/// executor.
extension MirrorSync {
    func checkSpace(for plan: SyncPlan) throws {
        let needed = plan.bytesToDownload
        guard needed > 0 else { return }
        var info = statvfs()
        guard statvfs(root.path, &info) == 0 else { return }
        let available = Int64(info.f_bavail) * Int64(info.f_frsize)
        guard available >= needed + MirrorSync.spaceFloor else {
            throw SyncError.notEnoughSpace(
                "not enough free space in \(root.path): the sync needs \(ByteCount.format(needed)) plus a "
                    + "\(ByteCount.format(MirrorSync.spaceFloor)) margin, and \(ByteCount.format(available)) is free")
        }
    }

    func execute(
        moves plan: SyncPlan, entries: [FileKey: IndexEntry],
        events: (@Sendable (SyncEvent) -> Void)?,
        report: inout SyncReport
    ) throws {
        for action in plan.actions {
            if case .adopt(let file, let from) = action, let previous = entries[file.key],
                let found = SyncPlanner.expectedPath(of: file, heldAs: previous.file)
            {
                do {
                    try executor.record(
                        entry(
                            for: file, path: found, size: previous.file.size, container: previous.container,
                            previous: previous))
                    report.repaired.append(found)
                    events?(SyncEvent(action: "repaired", path: found, message: "the index had it at \(from)"))
                } catch {
                    report.failed.append(
                        SyncReport.Failure(path: file.path, message: "\(error)", essential: file.essential))
                }
                continue
            }
            guard case .move(let from, let file) = action else { continue }
            do {
                let previous = entries[file.key]
                try executor.move(
                    from,
                    as: entry(
                        for: file, path: file.path, size: previous?.file.size ?? 0, container: previous?.container,
                        previous: previous))
                report.moved.append(file.path)
                events?(SyncEvent(action: "moved", path: file.path, message: "from \(from)"))
            } catch {
                report.failed.append(
                    SyncReport.Failure(path: file.path, message: "\(error)", essential: file.essential))
                events?(SyncEvent(action: "failed", path: file.path, message: "\(error)", essential: file.essential))
            }
        }
    }
}
