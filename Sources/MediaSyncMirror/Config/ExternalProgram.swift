import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the external programs some features run (mpv, ffmpeg) the way a shell would.
enum ExternalProgram {
    /// The first executable `name` in `PATH` (or in the usual folders when `PATH` is unset); nil when there is none.
    static func find(_ name: String, environment: [String: String]) -> String? {
        for folder in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
