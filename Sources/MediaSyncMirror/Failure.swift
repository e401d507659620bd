import MediaSyncHTTP
import MediaSyncServer

/// What an error of the library means to its caller: the one line to show, and what kind of failure it is (the CLI
/// maps kinds to exit codes), whichever module raised it.
public enum Failure {
    /// What kind of failure an error is.
    public enum Kind: Sendable, Equatable {
        /// Sign in (again): the server refused the credentials, or there are none.
        case needsSignIn
        /// Another mediasync command holds the mirror's lock.
        case alreadyRunning
        /// Anything else: the command could not do its job.
        case fatal
    }

    /// The one line to show.
    public static func message(for error: any Error) -> String {
        switch error {
        case let error as JellyfinError: return error.description
        case let error as SyncError: return error.description
        case let error as HTTPError: return error.description
        case let error as URLDownload.ListError: return error.description
        default: return "\(error)"
        }
    }

    public static func kind(of error: any Error) -> Kind {
        switch error {
        case let error as JellyfinError:
            return error.kind == .authenticationNeeded || error.kind == .notSignedIn ? .needsSignIn : .fatal
        case let error as SyncError:
            if error.needsSignIn { return .needsSignIn }
            return error.isAlreadyRunning ? .alreadyRunning : .fatal
        case let error as HTTPError:
            return error.status == 401 ? .needsSignIn : .fatal
        default:
            return .fatal
        }
    }
}
