import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program a test starts: `posix_spawn`, both output pipes read at once on a thread of its own, `waitpid`.
///
/// Foundation's `Process` is not used for this. Its `waitUntilExit` waits on a run loop for word of the child's end;
/// with the hundreds of processes a parallel suite starts, that word sometimes never came, and the whole suite hung
/// waiting for a child that had long exited. `waitpid` on the child's own id cannot miss it.
///
/// The child gets `/dev/null` or the given text as its standard input (never this process's own, which under CI may
/// be closed, so that descriptor 0 is whatever this process opened first), and none of this process's other
/// descriptors.
public final class Spawned: @unchecked Sendable {
    /// How a child ended.
    public struct Finished: Sendable {
        /// Its exit status; for a child a signal ended, the signal's number (as Foundation's `Process` reported it).
        public var status: Int32
        /// The signal that ended it; nil when it exited.
        public var signal: Int32?
        /// The bytes written to standard output (and standard error, when they went to one pipe).
        public var output: Data
        public var errors: Data
        public var stdout: String { String(decoding: output, as: UTF8.self) }
        public var stderr: String { String(decoding: errors, as: UTF8.self) }
    }

    /// The child's process id.
    public let pid: pid_t
    private let lock = NSLock()
    /// The raw `waitpid` status, once seen.
    private var ended: Int32?
    private let outputRead = DispatchSemaphore(value: 0)
    private var stdout = Data()
    private var stderr = Data()

    /// Starts `executable` with `arguments` (not including the program's name).
    /// - Parameters:
    ///   - environment: the child's whole environment; nil: this process's.
    ///   - input: written to the child's standard input (from a thread of its own), which is then closed; nil:
    ///     `/dev/null`.
    ///   - directory: the child's working directory; nil: this process's.
    ///   - errorIntoOutput: the child's standard error goes to the same pipe as its standard output.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: [UInt8]? = nil,
        directory: String? = nil, errorIntoOutput: Bool = false
    ) throws {
        let out = try Self.pipe()
        let err = errorIntoOutput ? nil : try Self.pipe()
        let stdin = input == nil ? nil : try Self.pipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err?.write ?? out.write, 2)
        // Every other descriptor of this process stays here: a child holding a pipe or a socket of another test
        // would keep that test's reader from ever seeing the end.
        _ = GNU.addCloseFrom?(&actions, 3)
        if let directory {
            guard let changeDirectory = GNU.addChangeDirectory else {
                throw SpawnError(description: "this C library cannot start a program in another folder")
            }
            _ = changeDirectory(&actions, directory)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(out.write)
        if let err { close(err.write) }
        if let stdin { close(stdin.read) }
        guard status == 0 else {
            close(out.read)
            if let err { close(err.read) }
            if let stdin { close(stdin.write) }
            throw SpawnError(description: "\(executable) could not be started: \(String(cString: strerror(status)))")
        }
        self.pid = pid
        let readers = [out.read, err?.read].compactMap { $0 }
        Thread.detachNewThread { [self] in
            readToEnd(readers)
            outputRead.signal()
        }
        if let stdin, let input {
            // From a thread of its own: an input larger than the pipe's buffer waits for the child to read it.
            Thread.detachNewThread {
                var offset = 0
                while offset < input.count {
                    let written = input[offset...].withUnsafeBytes {
                        Glibc.write(stdin.write, $0.baseAddress, $0.count)
                    }
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { break }
                    offset += written
                }
                close(stdin.write)
            }
        }
    }

    /// Starts the program and waits for it on a thread of its own (never on the cooperative pool).
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: [UInt8]? = nil,
        errorIntoOutput: Bool = false
    ) async throws -> Finished {
        let child = try Spawned(
            executable, arguments, environment: environment, input: input, errorIntoOutput: errorIntoOutput)
        return await child.finished()
    }

    /// What the child has written to its standard output so far.
    public var outputSoFar: String { lock.withLock { String(decoding: stdout, as: UTF8.self) } }

    /// What the child has written to its standard error so far.
    public var errorSoFar: String { lock.withLock { String(decoding: stderr, as: UTF8.self) } }

    /// Whether the child still runs (it is reaped once it has ended).
    public var isRunning: Bool {
        lock.withLock {
            guard ended == nil else { return false }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { ended = status }
            return result == 0
        }
    }

    /// Sends `signal` to the child, unless it has already been reaped (its id could then be another process's).
    public func send(_ signal: Int32) {
        lock.withLock {
            if ended == nil { _ = kill(pid, signal) }
        }
    }

    /// Waits, blocking this thread, for the child's output to end and for the child to end.
    public func finish() -> Finished {
        outputRead.wait()
        outputRead.signal()  // a second caller does not wait forever
        let raw: Int32 = lock.withLock {
            if let ended { return ended }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            ended = status
            return status
        }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS are macros, which Swift does not import.
        let signal = raw & 0x7F
        let signaled = signal != 0 && signal != 0x7F
        return lock.withLock {
            Finished(
                status: signaled ? signal : (raw >> 8) & 0xFF, signal: signaled ? signal : nil,
                output: stdout, errors: stderr)
        }
    }

    /// ``finish()`` on a thread of its own: the cooperative pool's few threads also run the servers of the tests
    /// running beside this one.
    public func finished() async -> Finished {
        await offThePool { self.finish() }
    }

    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        // Close-on-exec from the start: a child another thread starts meanwhile must not get a copy.
        guard let pipe2 = GNU.pipe2, pipe2(&fds, O_CLOEXEC) == 0 else {
            throw SpawnError(description: "no pipe: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// Reads the output descriptors (standard output first) until each has ended, keeping what came as it comes,
    /// and closes them.
    private func readToEnd(_ descriptors: [Int32]) {
        var open = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var live = open.count
        while live > 0 {
            if poll(&open, nfds_t(open.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in open.indices where open[index].fd >= 0 && open[index].revents != 0 {
                let got = buffer.withUnsafeMutableBytes { read(open[index].fd, $0.baseAddress, $0.count) }
                if got > 0 {
                    lock.withLock {
                        if index == 0 {
                            stdout.append(contentsOf: buffer[0..<got])
                        } else {
                            stderr.append(contentsOf: buffer[0..<got])
                        }
                    }
                } else if got == 0 || errno != EINTR {
                    close(open[index].fd)
                    open[index].fd = -1
                    live -= 1
                }
            }
        }
    }
}

/// Runs blocking work (a wait for a child, blocking socket calls, a long CPU-bound loop) on a thread of its own.
///
/// Not on Swift's cooperative pool, whose few threads (two here) also run the in-process servers of the tests running
/// beside it; and not on Dispatch's global queues, which on Linux add a thread for each blocked one only slowly, so a
/// parallel run that blocks many of them waits on that.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// ``offThePool(_:)`` for work that cannot fail.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// glibc functions Swift's Glibc module leaves out (they need `_GNU_SOURCE`), looked up by name.
private enum GNU {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias AddChangeDirectory =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static let pipe2: Pipe2? = symbol("pipe2")
    /// glibc 2.34 and later.
    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    /// glibc 2.29 and later.
    static let addChangeDirectory: AddChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<T>(_ name: String) -> T? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: T.self) }
    }
}

public struct SpawnError: Error, CustomStringConvertible {
    public var description: String
}
