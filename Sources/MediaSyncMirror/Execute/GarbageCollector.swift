import Foundation
import MediaSyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// `mediasync gc`: files under `Downloads/` that the index does not know, and partial files left in the
/// staging areas by killed runs. Run under the root lock, so a running sync's partial files are safe. The list is
/// the plan (a dry run prints it); the mirror's executor applies it.
public struct GarbageCollector: Sendable {
    let executor: MirrorExecutor
    var root: MirrorRoot { executor.root }

    init(executor: MirrorExecutor) {
        self.executor = executor
    }

    /// The relative paths of orphans and stale partial files, sorted.
    public func garbage() throws -> [String] {
        try executor.flush()
        // The journal's files are known too: the next opening records them.
        let known = Set(try executor.index.entries().map(\.file.path) + executor.journaledFiles().map(\.file.path))
        var found: [String] = []
        for relative in files(under: LibraryLayout.downloads) where !known.contains(relative) {
            found.append(relative)
        }
        found += files(under: ".mediasync/staging")
        return found.sorted()
    }

    /// Removes what ``garbage()`` lists; returns what was removed.
    public func collect() throws -> [String] {
        let outcome = try executor.delete(
            try garbage().map { .init(path: $0, key: nil) }, gate: .init(allowed: true))
        if let failure = outcome.failed.first {
            throw SyncError.fileSystem("\(failure.path): \(failure.message)")
        }
        return outcome.deleted
    }

    /// Regular files below a folder of the root (symlinks are reported as files, never followed).
    private func files(under folder: String) -> [String] {
        let base = root.path + "/" + folder
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        var result: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var info = stat()
            guard lstat(base + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else { continue }
            result.append(folder + "/" + relative)
        }
        return result
    }
}
