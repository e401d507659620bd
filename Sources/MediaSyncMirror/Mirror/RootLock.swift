import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive lock on a mirror root, so two syncs never run on it at once. Released when the value is
/// released or the process ends (even by `kill -9`: the kernel drops `flock` locks with the descriptor).
public final class RootLock: Sendable {
    private let fd: Int32

    /// Takes the lock without waiting.
    /// - Throws: ``SyncError`` of kind `alreadyRunning` when another process holds it.
    public init(root: MirrorRoot) throws {
        try root.prepare()
        let fd = open(root.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SyncError.fileSystem("cannot open \(root.lockPath)", errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw SyncError.alreadyRunning(root.path)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
