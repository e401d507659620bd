import Foundation
import MediaSyncCore

/// A mirror's root folder: `Downloads/` with the media, and `.mediasync/` with the index, the staging
/// area for partial files and the lock. Everything inside is addressed by paths relative to the root, so
/// the root can be moved as a whole and its index still finds every file.
public struct MirrorRoot: Sendable, Equatable {
    /// The absolute, standardised path of the root.
    public let path: String

    public init(path: String) {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The root from `--root`, else `$MEDIASYNC_ROOT`, else `$XDG_DATA_HOME/mediasync` (`~/.local/share/mediasync`).
    public static func resolve(_ option: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> MirrorRoot
    {
        if let option, !option.isEmpty { return MirrorRoot(path: option) }
        if let root = environment["MEDIASYNC_ROOT"], !root.isEmpty { return MirrorRoot(path: root) }
        let data =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return MirrorRoot(path: data + "/mediasync")
    }

    /// The folder of mediasync's own state.
    public var stateDirectory: String { path + "/.mediasync" }
    /// The SQLite index.
    public var indexPath: String { stateDirectory + "/index.sqlite" }
    /// Where partial downloads wait (same file system as the media).
    public var stagingDirectory: String { stateDirectory + "/staging" }
    /// The lock a sync holds.
    public var lockPath: String { stateDirectory + "/lock" }

    /// The absolute path of a relative one, or nil when the relative path would leave the root.
    public func absolute(_ relative: String) -> String? {
        guard SafeName.isContained(relative) else { return nil }
        return path + "/" + relative
    }

    /// Creates the root's folders.
    /// - Throws: ``SyncError`` of kind `unsafePath` when `.mediasync/` or its staging folder is a symbolic link:
    ///   the index, the lock and partial downloads would be written wherever it points, so it is refused (and
    ///   neither followed nor removed).
    public func prepare() throws {
        try refuseSymbolicLink(stateDirectory)
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        try refuseSymbolicLink(stagingDirectory)
        try FileManager.default.createDirectory(
            atPath: path + "/" + LibraryLayout.downloads, withIntermediateDirectories: true)
    }

    private func refuseSymbolicLink(_ folder: String) throws {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: folder) else { return }
        throw SyncError.unsafePath(
            description:
                "\(folder) is a symbolic link (to \(target)): mediasync keeps its index and partial downloads there and "
                + "does not follow links out of the root; replace it with a folder")
    }
}
