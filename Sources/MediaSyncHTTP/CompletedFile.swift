import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Names a complete, verified download and returns the path it now has. The mirror's executor passes one that
/// decides the name (and checks it stays in the mirror); without one, the engine places each file at its
/// request's destination (``CompletedFile/placeAtDestination()``). A thrown ``HTTPError`` is the file's outcome;
/// another error becomes a `.fileSystem` one. It may run on the transfer engine's thread, where every transfer waits
/// for it: it must not block for long (see ``TransferEngine``).
public typealias DownloadPlacing = @Sendable (CompletedFile) throws -> String

/// A complete download that passed every check, not yet at its final name: an unnamed file (`O_TMPFILE`) in its
/// destination's folder, or a partial file in staging. The engine hands it to a ``DownloadPlacing`` and closes it
/// afterwards; what is not placed leaves no trace (an unnamed file vanishes, a partial one is discarded).
public struct CompletedFile: Sendable {
    /// The request it answers.
    public let request: TransferRequest
    /// Its length in bytes.
    public let size: Int64
    /// The response's `Content-Type`, for a caller that names files by it.
    public let contentType: String?
    let descriptor: Int32
    let isNamed: Bool
    let partPath: String
    let durable: Bool
    let directories: DirectoryCache

    /// Places the file at its request's destination.
    public func placeAtDestination() throws(HTTPError) -> String {
        try place(at: request.destination)
        return request.destination
    }

    /// Names the file at `path`, an absolute path on the destination's file system (its folder made when missing,
    /// once per batch), replacing atomically what is there; the folder is flushed when the batch is durable.
    public func place(at path: String) throws(HTTPError) {
        let parent = PathText.parent(of: path)
        try directories.ensure(parent)
        do {
            try name(at: path)
        } catch let error where error.errno == ENOENT {
            // The folder was made earlier in the batch and removed since (a folder emptied by the removal of a
            // replaced file goes with it): made again, once.
            try StagingArea.makeDirectories(parent)
            try name(at: path)
        }
        if durable { try DirectorySyncer.shared.sync(parent) }
    }

    private func name(at path: String) throws(HTTPError) {
        if isNamed {
            try CompletedFile.moveIntoPlace(partPath, path, durable: durable)
        } else {
            try CompletedFile.linkIntoPlace(descriptor, path)
        }
    }

    /// Names an unnamed file at `destination`, replacing an older file there atomically.
    fileprivate static func linkIntoPlace(_ fd: Int32, _ destination: String) throws(HTTPError) {
        let error = NamespaceLock.shared.withLock { AnonymousFile.link(fd, to: destination) }
        guard let error else { return }
        guard error == EEXIST else { throw HTTPError.fromErrno(error, operation: "place", path: destination) }
        // A new version replaces an old file: link beside it, then rename over it.
        let temporary = destination + ".mediasync-\(UInt32.random(in: 0...UInt32.max))"
        if let failure = NamespaceLock.shared.withLock({ AnonymousFile.link(fd, to: temporary) }) {
            throw HTTPError.fromErrno(failure, operation: "place", path: destination)
        }
        guard NamespaceLock.shared.withLock({ rename(temporary, destination) }) == 0 else {
            let number = errno
            unlink(temporary)
            throw HTTPError.fromErrno(number, operation: "rename into place", path: destination)
        }
    }

    /// Renames atomically; across file systems, copies to a temporary name beside the destination first.
    fileprivate static func moveIntoPlace(_ source: String, _ destination: String, durable: Bool) throws(HTTPError) {
        if NamespaceLock.shared.withLock({ rename(source, destination) }) == 0 { return }
        guard errno == EXDEV else {
            throw HTTPError.fromErrno(errno, operation: "rename into place", path: destination)
        }
        let temporary = destination + ".mediasync-tmp"
        do {
            if FileManager.default.fileExists(atPath: temporary) {
                try FileManager.default.removeItem(atPath: temporary)
            }
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
        } catch {
            unlink(temporary)
            throw HTTPError(.fileSystem, "could not copy into place \(destination): \(error.localizedDescription)")
        }
        if durable {
            let fd = open(temporary, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                fsync(fd)
                close(fd)
            }
        }
        guard rename(temporary, destination) == 0 else {
            let number = errno
            unlink(temporary)
            throw HTTPError.fromErrno(number, operation: "rename into place", path: destination)
        }
        unlink(source)
    }
}
