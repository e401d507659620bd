import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An external program (mpv, ffmpeg) started with `posix_spawn` and waited for with `waitpid`.
///
/// Used instead of Foundation's `Process`, which in this toolchain keeps memory for every process it starts (three
/// LeakSanitizer reports per `mpv` run) and starts a thread to watch it: a long-running mediasync must not grow with
/// each player it starts, and these callers only need to start, poll and wait.
final class ChildProcess {
    /// The child's process id.
    let pid: pid_t
    /// How it ended, once ``wait()`` or ``isRunning`` saw it end.
    private var ended: Int32?

    /// Where a standard stream goes.
    enum Stream {
        /// The parent's own.
        case inherit
        /// `/dev/null`.
        case null
        /// A descriptor the caller owns (the child gets a copy).
        case descriptor(Int32)
    }

    /// Starts `executable` with `arguments` (not including the program's name) and the parent's environment.
    /// - Parameter name: what the program is called in the error (`mpv`).
    /// - Throws: the failed start as a ``SyncError`` of the configuration kind: `mpv (/usr/bin/mpv) could not be
    ///   started: No such file or directory`.
    init(
        name: String, executable: String, arguments: [String], input: Stream = .null, output: Stream = .inherit,
        error: Stream = .inherit
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        // The child starts with every signal at its default action and none blocked, whatever this process ignores
        // or blocks (an ignored SIGTERM would otherwise be ignored by mpv too).
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
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else {
            throw SyncError.configuration(
                "\(name) (\(executable)) could not be started: \(String(cString: strerror(status)))")
        }
        self.pid = pid
    }

    /// Whether the child still runs (reaps it when it has ended).
    var isRunning: Bool {
        guard ended == nil else { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { ended = status }
        return result == 0
    }

    /// Waits for the child to end; its exit status, or the signal that ended it, negated.
    @discardableResult
    func wait() -> Int32 {
        if ended == nil {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            ended = status
        }
        let status = ended ?? 0
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import (they are macros).
        let signal = status & 0x7F
        if signal != 0 && signal != 0x7F { return -signal }
        return (status >> 8) & 0xFF
    }
}
