import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Per-batch memory of folders already looked up or created, so a batch of 2,000 small files does not
/// stat and create the same folders 2,000 times.
final class DirectoryCache: Sendable {
    private struct State {
        var staging: [String: String] = [:]
        var created: Set<String> = []
        /// Devices of folders found to exist.
        var devices: [String: UInt64] = [:]
        /// Staging folders found empty when this batch first used them.
        var emptyAtStart: [String: Bool] = [:]
    }

    private let state = Locked(State())
    private let preferredStaging: String?

    /// - Parameter madeFolders: folders the caller made for this batch, not made again.
    init(preferredStaging: String?, madeFolders: Set<String> = []) {
        self.preferredStaging = preferredStaging
        state.withLock { $0.created = madeFolders }
    }

    /// The staging folder for a destination: the preferred one when it is on the destination's file system, else
    /// `.mediasync-staging` beside the destination. Looked up once per destination folder.
    func stagingDirectory(for destination: String) -> String {
        let parent = PathText.parent(of: destination)
        if let known = state.withLock({ $0.staging[parent] }) { return known }
        let fallback = (parent == "/" ? "" : parent) + "/.mediasync-staging"
        guard let preferredStaging, let preferredDevice = device(ofNearestExisting: preferredStaging),
            let destinationDevice = device(ofNearestExisting: parent), preferredDevice == destinationDevice
        else {
            state.withLock { $0.staging[parent] = fallback }
            return fallback
        }
        state.withLock { $0.staging[parent] = preferredStaging }
        return preferredStaging
    }

    /// The device of `path`, or of its nearest folder that exists; a folder found to exist is looked at once per
    /// batch (the preferred staging folder and `Downloads/` were looked at for each of thousands of folders).
    private func device(ofNearestExisting path: String) -> UInt64? {
        var current = path
        var info = stat()
        while !current.isEmpty {
            if let known = state.withLock({ $0.devices[current] }) { return known }
            if stat(current, &info) == 0 {
                let device = UInt64(info.st_dev)
                state.withLock { $0.devices[current] = device }
                return device
            }
            let parent = PathText.parent(of: current)
            if parent == current { break }
            current = parent
        }
        return nil
    }

    /// Every staging folder this batch used.
    var stagingDirectories: Set<String> {
        Set(state.withLock { $0.staging.values })
    }

    /// Whether the staging folder held nothing when this batch first asked (looked at once). Then a file's first
    /// attempt has no partial file to resume or clean up, and does not look for one: a first sync of 12,000 files
    /// made 12,000 `lstat` calls that all failed.
    func stagingWasEmpty(_ directory: String) -> Bool {
        if let known = state.withLock({ $0.emptyAtStart[directory] }) { return known }
        let empty = Folders.isEmpty(directory)
        return state.withLock { state in
            if let known = state.emptyAtStart[directory] { return known }
            state.emptyAtStart[directory] = empty
            return empty
        }
    }

    /// Creates a folder (and its parents) unless this batch already did.
    func ensure(_ path: String) throws(HTTPError) {
        if state.withLock({ $0.created.contains(path) }) { return }
        try StagingArea.makeDirectories(path)
        state.withLock { _ = $0.created.insert(path) }
    }
}

/// Flushes folders after renames with group commit: a caller waits for one fsync of the folder that starts
/// after its rename, and every caller waiting at that moment shares it. Many files finishing in one folder
/// then cost a few directory flushes instead of one each.
final class DirectorySyncer: @unchecked Sendable {
    static let shared = DirectorySyncer()

    private struct Folder {
        var started = 0
        var finished = 0
        var running = false
        var failure: (generation: Int, errno: Int32)?
    }

    private let condition = NSCondition()
    private var folders: [String: Folder] = [:]

    func sync(_ path: String) throws(HTTPError) {
        condition.lock()
        defer { condition.unlock() }
        let target = (folders[path]?.started ?? 0) + 1
        while (folders[path]?.finished ?? 0) < target {
            if folders[path]?.running == true {
                condition.wait()
                continue
            }
            var folder = folders[path] ?? Folder()
            folder.started += 1
            folder.running = true
            let generation = folder.started
            folders[path] = folder
            condition.unlock()
            let result = DirectorySyncer.flush(path)
            condition.lock()
            folder = folders[path] ?? Folder()
            folder.finished = generation
            folder.running = false
            if let number = result { folder.failure = (generation, number) }
            folders[path] = folder
            condition.broadcast()
        }
        if let failure = folders[path]?.failure, failure.generation >= target {
            throw HTTPError.fromErrno(failure.errno, operation: "flush the folder", path: path)
        }
    }

    /// fsyncs a folder; returns errno on failure.
    private static func flush(_ path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? nil : errno
    }
}

/// Write buffers shared by a batch's transfers: taken when a transfer starts writing, given back when it
/// ends, so thousands of small files do not allocate and free a buffer each (which fragments the heap and
/// made peak memory grow with the number of files).
final class BufferPool: @unchecked Sendable {
    let bufferSize: Int
    private let keep: Int
    private let lock = NSLock()
    private var free: [UnsafeMutableRawPointer] = []

    init(bufferSize: Int, keep: Int) {
        self.bufferSize = bufferSize
        self.keep = keep
    }

    deinit {
        free.forEach { $0.deallocate() }
    }

    func take() -> UnsafeMutableRawPointer {
        lock.lock()
        let buffer = free.popLast()
        lock.unlock()
        return buffer ?? UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 4096)
    }

    func give(_ buffer: UnsafeMutableRawPointer) {
        lock.lock()
        if free.count < keep {
            free.append(buffer)
            lock.unlock()
        } else {
            lock.unlock()
            buffer.deallocate()
        }
    }
}
