import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a sync (or a command around it) could not do its job. One clear line each.
public struct SyncError: Error, Equatable, CustomStringConvertible {
    /// What kind of failure it is; the CLI maps kinds to exit codes.
    public enum Kind: String, Sendable, Equatable {
        case notSignedIn, alreadyRunning, notEnoughSpace, fileSystem, unsafePath, notFound, invalidSelection
        /// The disk filled up during the run (ENOSPC, EDQUOT): the run stops.
        case diskFull
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    static func fileSystem(_ what: String, _ number: Int32) -> SyncError {
        if number == ENOSPC || number == EDQUOT { return diskFull("\(what): \(String(cString: strerror(number)))") }
        return SyncError(.fileSystem, "\(what): \(String(cString: strerror(number)))")
    }

    /// The disk filled up: one line saying what was not done and what to do.
    static func diskFull(_ detail: String) -> SyncError {
        SyncError(.diskFull, "disk full: \(detail); free some space and run it again")
    }

    static func unsafePath(_ path: String) -> SyncError {
        SyncError(.unsafePath, "refusing a path outside the mirror: \(path.debugDescription)")
    }

    public static let notSignedIn = SyncError(.notSignedIn, "not signed in: run `mediasync login SERVER-URL` first")
}
