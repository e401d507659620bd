import ArgumentParser
import Foundation
import MediaSync

/// `mediasync serve`: the mirror answered as a Jellyfin server for the user's own Jellyfin clients (docs/serve.md).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer as a Jellyfin server from the mirror, so your Jellyfin clients browse and play it offline.",
        discussion: """
            Played state reported by the clients is kept as offline marks (as `mediasync played` keeps them); the
            next `mediasync sync` sends them home once. Without a password (`--set-password`, read from the first
            line of stdin) every sign-in is refused, and only a loopback address is served.
            """)

    @Option(help: "The address to listen on: HOST:PORT, [IPv6]:PORT or :PORT (every address).")
    var listen = "127.0.0.1:8096"

    @Flag(help: "Answer Jellyfin's UDP autodiscovery (port 7359), so clients on the network find this server.")
    var discover = false

    @Flag(help: "Set the password clients sign in with (read from the first line of stdin) and exit.")
    var setPassword = false

    @Option(help: "With --set-password: the user name (default: the signed-in Jellyfin user's).")
    var user: String?

    @OptionGroup var rootOptions: RootOptions

    func validate() throws {
        if user != nil && !setPassword { throw ValidationError("--user goes with --set-password") }
        if MediaServe.parseListen(listen) == nil {
            throw ValidationError("\(listen.debugDescription) is not an address (examples: 127.0.0.1:8096, :8096)")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let config = ConfigDirectory.resolve()
            if setPassword {
                let line = readLine(strippingNewline: true) ?? ""
                let name = try MediaServe.setPassword(line, user: user, config: config)
                print("Password set for \(name) (\(config.path)/serve-password.json, a salted PBKDF2 hash).")
                return
            }
            guard let address = MediaServe.parseListen(listen) else { throw ExitCodes.usage }
            let server = try MediaServe(
                options: ServeOptions(
                    root: rootOptions.mirrorRoot, config: config, host: address.host, port: address.port,
                    discover: discover))
            for problem in server.problems { Console.error("mediasync: \(problem)") }
            if !server.hasPassword {
                FileHandle.standardOutput.write(
                    Data(
                        ("No password is set: every sign-in is refused. Set one with "
                            + "`mediasync serve --set-password [--user NAME]` (the first line of stdin).\n").utf8))
            }
            let counts = server.counts
            // Movies, series and episodes always; the rest when the mirror holds any.
            let always = Set(["Movie", "Series", "Episode"])
            let summary = [
                ("Movie", "movie", "movies"), ("Series", "series", "series"), ("Episode", "episode", "episodes"),
                ("Album", "album", "albums"), ("Track", "track", "tracks"), ("Playlist", "playlist", "playlists"),
                ("BoxSet", "collection", "collections"), ("MusicVideo", "music video", "music videos"),
                ("Video", "home video", "home videos"), ("MusicAlbum", "podcast", "podcasts"),
                ("Audio", "podcast episode", "podcast episodes"), ("AudioBook", "audiobook", "audiobooks"),
                ("Book", "book", "books"),
            ].filter { always.contains($0.0) || (counts[$0.0] ?? 0) > 0 }
                .map { CountText.of(counts[$0.0] ?? 0, $0.1, plural: $0.2) }.joined(separator: ", ")
            let root = rootOptions.mirrorRoot.path
            let user = server.userName
            let id = server.serverId
            try await server.run(gracefulShutdown: true) { bound in
                // Written unbuffered: a script waiting for this line reads it at once.
                FileHandle.standardOutput.write(
                    Data(
                        ("Serving \(root) as a Jellyfin server at http://\(bound) (server id \(id), user \(user)): "
                            + "\(summary).\n").utf8))
            }
        }
    }
}
