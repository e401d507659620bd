import MediaSyncCore
import MediaSyncMirror

/// A version's trickplay tiles and media segments, gathered from the index as the catalog is built.
struct VersionExtras {
    /// item id → version id → width → tile index → file.
    var tiles: [String: [String: [Int: [Int: HeldFile]]]] = [:]
    /// item id → version id → file.
    var segments: [String: [String: HeldFile]] = [:]

    /// Takes a tile or a segments file. Tiles are many: each is taken at its recorded size, not looked at on disk
    /// (a missing one is a 404 when asked for).
    mutating func add(_ entry: IndexEntry, root: MirrorRoot, base: HeldFile.Base) {
        switch entry.file.key.parts {
        case .trickplay(let itemId, let versionId, let width, let index):
            guard root.absolute(entry.file.path) != nil else { return }
            tiles[itemId, default: [:]][versionId, default: [:]][width, default: [:]][index] = HeldFile(
                base: base, relative: entry.file.path, size: entry.file.size, modified: 0)
        case .segments(let itemId, let versionId):
            if let held = Catalog.held(root, entry, base) { segments[itemId, default: [:]][versionId] = held }
        default: break
        }
    }

    func attach(to version: inout HeldVersion, itemId: String) {
        // Set only when held: a version without keeps no room for them.
        if let tiles = tiles[itemId]?[version.id] { version.trickplay = tiles }
        if let held = segments[itemId]?[version.id] { version.segments = held }
    }
}
