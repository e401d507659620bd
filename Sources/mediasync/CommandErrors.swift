import ArgumentParser
import MediaSync
import MediaSyncHTTP
import MediaSyncServer

/// Runs a command's body; any error becomes one clear line on stderr and its named exit code.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let exit as ExitCode {
        throw exit
    } catch let validation as ValidationError {
        throw validation
    } catch {
        Console.error("mediasync: \(errorMessage(for: error))")
        throw exitCode(for: error)
    }
}

func errorMessage(for error: Error) -> String {
    switch error {
    case let error as JellyfinError: return error.description
    case let error as SyncError: return error.description
    case let error as HTTPError: return error.description
    default: return "\(error)"
    }
}

func exitCode(for error: Error) -> ExitCode {
    switch error {
    case let error as JellyfinError:
        return error.kind == .authenticationNeeded || error.kind == .notSignedIn
            ? ExitCodes.authenticationNeeded : ExitCodes.fatal
    case let error as SyncError:
        if error.needsSignIn { return ExitCodes.authenticationNeeded }
        return error.isAlreadyRunning ? ExitCodes.alreadyRunning : ExitCodes.fatal
    case let error as HTTPError:
        return error.status == 401 ? ExitCodes.authenticationNeeded : ExitCodes.fatal
    default:
        return ExitCodes.fatal
    }
}

/// `--root`, shared by the commands that work on a mirror.
struct RootOptions: ParsableArguments {
    @Option(help: "The mirror's folder (default: $MEDIASYNC_ROOT, else $XDG_DATA_HOME/mediasync).")
    var root: String?

    var mirrorRoot: MirrorRoot { MirrorRoot.resolve(root) }

    /// Opens the mirror to read it (no lock).
    func openForReading() throws -> Mirror {
        try Mirror.openForReading(mirrorRoot)
    }
}
