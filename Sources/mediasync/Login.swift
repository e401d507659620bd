import ArgumentParser
import Foundation
import MediaSync

/// `mediasync login`: sign in to a Jellyfin server and store the credentials (mode 0600).
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in to a Jellyfin server with a password, an API key or Quick Connect.",
        discussion: """
            The token is stored in $MEDIASYNC_CONFIG_DIR (default $XDG_CONFIG_HOME/mediasync)/credentials.json \
            with mode 0600. The password is read from standard input (--password-stdin) or asked for on a \
            terminal; it is never stored. An API key may also come from $MEDIASYNC_API_KEY.
            """)

    @Argument(help: "The server's address, e.g. https://jellyfin.example.org")
    var server: String

    @Option(help: "The user to sign in as (with an API key: the user to browse as).")
    var username: String?

    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input.")
    var passwordStdin = false

    @Option(
        name: .customLong("api-key"),
        help:
            "Sign in with an administrator's API key (other users can read a command line: prefer $MEDIASYNC_API_KEY).")
    var apiKey: String?

    @Flag(name: .customLong("quick-connect"), help: "Sign in with a Quick Connect code approved in another client.")
    var quickConnect = false

    @Option(name: .customLong("ca-file"), help: "Trust the CA certificates in this PEM file for this server.")
    var caFile: String?

    @Flag(help: "Do not verify the server's TLS certificate (dangerous).")
    var insecure = false

    func validate() throws {
        let methods = [passwordStdin || (apiKey == nil && !quickConnect), apiKey != nil, quickConnect].filter { $0 }
        guard methods.count == 1 else {
            throw ValidationError("choose one of --password-stdin, --api-key and --quick-connect")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let signIn = try await SignIn.connect(
                server: server, config: ConfigDirectory.resolve(), caFile: caFile, insecure: insecure)
            let credentials: Credentials
            let environmentKey = ProcessInfo.processInfo.environment["MEDIASYNC_API_KEY"]
            if let key = apiKey ?? (quickConnect || passwordStdin ? nil : environmentKey) {
                credentials = try await signIn.withAPIKey(key, userName: username)
            } else if quickConnect {
                credentials = try await signIn.withQuickConnect { code in
                    print(
                        "Quick Connect code: \(code) — approve it in a signed-in Jellyfin client (Settings, Quick Connect)."
                    )
                }
            } else {
                guard let username else { throw ValidationError("--username is needed to sign in with a password") }
                credentials = try await signIn.withPassword(username: username, password: try readPassword())
            }
            print(
                "Signed in as \(credentials.userName ?? credentials.userId) on \(signIn.serverName ?? signIn.serverURL) (Jellyfin \(signIn.serverVersion ?? "?"))."
            )
        }
    }

    private func readPassword() throws -> String {
        if passwordStdin || isatty(STDIN_FILENO) == 0 {
            let line = readLine(strippingNewline: true) ?? ""
            return line
        }
        guard let entered = getpass("Password: ") else { throw ValidationError("no password given") }
        return String(cString: entered)
    }
}

/// `mediasync logout`: forget the stored credentials.
struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Forget the stored sign-in.")

    func run() throws {
        let removed = Credentials.remove(from: ConfigDirectory.resolve())
        print(removed ? "Signed out." : "Not signed in.")
    }
}
