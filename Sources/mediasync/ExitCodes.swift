import ArgumentParser

/// The process exit codes, documented in README.md.
enum ExitCodes {
    /// Everything asked for was done.
    static let success = ExitCode(0)
    /// A fatal error: nothing or not all could be done (for example a full disk).
    static let fatal = ExitCode(1)
    /// Some items failed; the others were done. The failures are listed.
    static let partialFailure = ExitCode(3)
    /// The server needs a new sign-in.
    static let authenticationNeeded = ExitCode(4)
    /// Another sync holds the lock on this root.
    static let alreadyRunning = ExitCode(5)
    /// The command line was wrong (ArgumentParser's own code for validation errors).
    static let usage = ExitCode.validationFailure
}
