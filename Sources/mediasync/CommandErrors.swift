import ArgumentParser
import MediaSync

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
    Failure.message(for: error)
}

func exitCode(for error: Error) -> ExitCode {
    switch Failure.kind(of: error) {
    case .needsSignIn: return ExitCodes.authenticationNeeded
    case .alreadyRunning: return ExitCodes.alreadyRunning
    case .fatal: return ExitCodes.fatal
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
