import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a sync, or a command around the mirror and its configuration, could not do its job. One clear line each.
///
/// A struct over a private code (as `HTTPError` and `JellyfinError` are): callers ask what it means for them
/// (``isFatal``, ``isRetryable``, ``needsSignIn``, …) rather than switching over cases that may grow.
public struct SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    private enum Code: Equatable, Sendable {
        case notSignedIn, alreadyRunning, notEnoughSpace, fileSystem, unsafePath, notFound, invalidInput, diskFull
        case configuration
    }

    private let code: Code
    public let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    // MARK: What it means

    /// The command cannot go on at all (as opposed to one file or one source failing).
    public var isFatal: Bool {
        switch code {
        case .notSignedIn, .alreadyRunning, .notEnoughSpace, .diskFull, .configuration: return true
        case .fileSystem, .unsafePath, .notFound, .invalidInput: return false
        }
    }

    /// Running the same command again later may succeed without the user changing anything.
    public var isRetryable: Bool {
        switch code {
        case .alreadyRunning, .fileSystem: return true
        case .notSignedIn, .notEnoughSpace, .diskFull, .unsafePath, .notFound, .invalidInput, .configuration:
            return false
        }
    }

    /// The user must sign in (again).
    public var needsSignIn: Bool { code == .notSignedIn }
    /// Another mediasync command holds the root's lock.
    public var isAlreadyRunning: Bool { code == .alreadyRunning }
    /// The disk filled up during the run.
    public var isDiskFull: Bool { code == .diskFull }
    /// The plan needs more free space than there is.
    public var isNotEnoughSpace: Bool { code == .notEnoughSpace }
    /// A path would lead out of the mirror.
    public var isUnsafePath: Bool { code == .unsafePath }
    /// What the command was asked about does not exist.
    public var isNotFound: Bool { code == .notFound }

    // MARK: Making one

    public static let notSignedIn = SyncError(.notSignedIn, "not signed in: run `mediasync login SERVER-URL` first")

    static func alreadyRunning(_ root: String) -> SyncError {
        SyncError(.alreadyRunning, "another mediasync sync is running on \(root); try again when it has finished")
    }

    /// Another process holds what this command needs (an export's destination), described in full.
    static func alreadyRunningDescribed(_ description: String) -> SyncError { SyncError(.alreadyRunning, description) }

    static func notEnoughSpace(_ description: String) -> SyncError { SyncError(.notEnoughSpace, description) }

    /// A failed file-system call; ENOSPC and EDQUOT make it ``isDiskFull``.
    static func fileSystem(_ what: String, _ number: Int32) -> SyncError {
        if number == ENOSPC || number == EDQUOT { return diskFull("\(what): \(String(cString: strerror(number)))") }
        return SyncError(.fileSystem, "\(what): \(String(cString: strerror(number)))")
    }

    /// A file that could not be read, written or placed, described in full.
    static func fileSystem(_ description: String) -> SyncError { SyncError(.fileSystem, description) }

    /// The disk filled up: one line saying what was not done and what to do.
    static func diskFull(_ detail: String) -> SyncError {
        SyncError(.diskFull, "disk full: \(detail); free some space and run it again")
    }

    static func unsafePath(_ path: String) -> SyncError {
        SyncError(.unsafePath, "refusing a path outside the mirror: \(path.debugDescription)")
    }

    /// A refusal of a path, described in full.
    static func unsafePath(description: String) -> SyncError { SyncError(.unsafePath, description) }

    /// What the command was asked about does not exist (an id, a subscription, a library).
    public static func notFound(_ description: String) -> SyncError { SyncError(.notFound, description) }

    /// What the user gave cannot be used (a feed URL, a selection).
    public static func invalidInput(_ description: String) -> SyncError { SyncError(.invalidInput, description) }

    /// The configuration folder or one of its files is damaged or cannot be written.
    public static func configuration(_ description: String) -> SyncError { SyncError(.configuration, description) }
}
