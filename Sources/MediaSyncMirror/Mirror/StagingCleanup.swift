import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension MirrorRoot {
    /// What a killed run left in the staging area that no later run would use: the temporary files of
    /// metadata writes (`write-*.tmp`) and of resume records (written atomically through a temporary file), and
    /// resume records whose partial file is gone. Partial files (`*.part`) and their records stay, to be resumed.
    ///
    /// A running sync's temporaries look the same: remove them only under the root's lock (the mirror's executor
    /// does, when a mirror is opened).
    /// - Returns: the names to remove.
    func staleTemporaries() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: stagingDirectory) else { return [] }
        let present = Set(names)
        var removed: [String] = []
        for name in names {
            let keep: Bool
            if name.hasSuffix(".part") {
                keep = true
            } else if name.hasSuffix(".part.meta") {
                keep = present.contains(String(name.dropLast(".meta".count)))
            } else {
                keep = false
            }
            guard !keep else { continue }
            var info = stat()
            let path = stagingDirectory + "/" + name
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else { continue }
            removed.append(name)
        }
        return removed.sorted()
    }
}
