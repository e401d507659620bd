import MediaSyncCore

#if canImport(Glibc)
    import Glibc
#endif

/// The status of many files below one root, looked at folder by folder on every core: the root opened once, each
/// folder opened once and its files looked at by name in it (`fstatat`, symbolic links not followed). A mirror's
/// files are a few to a folder, and walking the root's components and `Downloads/<id>/` again for each file was most
/// of the time the kernel spent on them.
enum FolderLookup {
    /// What `fact` makes of each relative path's status, in the order given; nil where there is nothing, the path is
    /// not contained, or `fact` gives nil. (Only the facts are kept: a whole `stat` per file of a 40,000-file mirror
    /// would be 6 MB.)
    static func facts<Fact: Sendable>(
        of relatives: [String], under root: String, _ fact: @escaping @Sendable (stat) -> Fact?
    ) -> [Fact?] {
        var found: [Fact?] = Array(repeating: nil, count: relatives.count)
        let top = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if top >= 0 { close(top) } }
        guard top >= 0 else {
            for position in relatives.indices where SafeName.isContained(relatives[position]) {
                var info = stat()
                if lstat(root + "/" + relatives[position], &info) == 0 { found[position] = fact(info) }
            }
            return found
        }
        var byFolder: [Substring: [Int]] = [:]
        for position in relatives.indices {
            let relative = relatives[position]
            let slash = relative.utf8.lastIndex(of: UInt8(ascii: "/"))
            byFolder[slash.map { relative[..<$0] } ?? "", default: []].append(position)
        }
        let groups = Array(byFolder)
        let looked = Parallel.map(groups) { parent, positions -> [(Int, Fact)] in
            let inside = parent.isEmpty ? top : openat(top, String(parent), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard inside >= 0 else { return [] }
            defer { if inside != top { close(inside) } }
            var facts: [(Int, Fact)] = []
            facts.reserveCapacity(positions.count)
            for position in positions {
                let relative = relatives[position]
                guard SafeName.isContained(relative) else { continue }
                let name = parent.isEmpty ? relative : String(relative[relative.utf8.index(after: parent.endIndex)...])
                var info = stat()
                guard fstatat(inside, name, &info, AT_SYMLINK_NOFOLLOW) == 0, let made = fact(info) else { continue }
                facts.append((position, made))
            }
            return facts
        }
        for group in looked {
            for (position, made) in group { found[position] = made }
        }
        return found
    }
}
