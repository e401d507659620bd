import Foundation
import MediaSyncCore

/// `mediasync gc`: files under `Downloads/` that the index does not know, and partial files left in the
/// staging areas by killed runs. Run under the root lock, so a running sync's partial files are safe.
public struct GarbageCollector: Sendable {
    let root: MirrorRoot
    let index: MirrorIndex

    public init(root: MirrorRoot, index: MirrorIndex) {
        self.root = root
        self.index = index
    }

    /// The relative paths of orphans and stale partial files, sorted.
    public func garbage() throws -> [String] {
        let known = Set(try index.entries().map(\.file.path))
        var found: [String] = []
        for relative in files(under: LibraryLayout.downloads) where !known.contains(relative) {
            found.append(relative)
        }
        found += files(under: ".mediasync/staging")
        return found.sorted()
    }

    /// Removes what ``garbage()`` lists; returns it.
    public func collect() throws -> [String] {
        let garbage = try garbage()
        let placer = FilePlacer(root: root, durable: false)
        for relative in garbage {
            if relative.hasPrefix(".mediasync/") {
                unlink(root.path + "/" + relative)
            } else {
                try placer.remove(relative)
            }
        }
        return garbage
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
