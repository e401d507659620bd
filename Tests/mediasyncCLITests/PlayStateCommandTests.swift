import Foundation
import MediaSync
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

/// Play state through the CLI, as a user meets it: mark, play in mpv, rolling selections, a budget, each a
/// separate process.
@Suite struct PlayStateCommandTests {
    typealias Sandbox = JellyfinCommandTests.Sandbox

    /// The rows `played --json` prints.
    static func playedRows(_ sandbox: Sandbox) async throws -> [[String: Any]] {
        let list = try await sandbox.run(["played", "--json"])
        return try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []
    }

    /// The position of the last row `played --json` prints, which must be a position mark.
    static func lastPositionTicks(_ sandbox: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Int
    {
        let rows = try await playedRows(sandbox)
        let ticks = try #require(rows.last?["positionTicks"] as? Int, sourceLocation: sourceLocation)
        #expect(rows.last?["mark"] as? String == "position", sourceLocation: sourceLocation)
        return ticks
    }

    /// Writes an mpv Lua script named `name` into the sandbox's folder; returns its path.
    static func mpvScript(in sandbox: Sandbox, _ name: String, _ lua: String) throws -> String {
        let path = sandbox.folder + "/" + name
        try Data(lua.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func marksPlayedOfflineAndTheNextSyncSendsIt() async throws {
        try await Sandbox.signedIn { sandbox in
            let movie = sandbox.server.library.movies[0]
            #expect(try await sandbox.run(["select", "movie", movie.id]).status == 0)
            #expect(try await sandbox.run(["sync"]).status == 0)

            let notHeld = try await sandbox.run(["played", "0123456789abcdef0123456789abcdef"])
            #expect(notHeld.status == 1)
            #expect(notHeld.stderr.split(separator: "\n").count == 1)
            #expect(notHeld.stderr.contains("mediasync ls"))
            let badPosition = try await sandbox.run(["played", movie.id, "--position", "1:75:00"])
            #expect(badPosition.status == 64)

            let position = try await sandbox.run(["played", movie.id, "--position", "0:20:00"])
            #expect(position.status == 0, "\(position.stderr)")
            let played = try await sandbox.run(["played", movie.id, "--at", "2026-11-20T21:30:00Z"])
            #expect(played.status == 0, "\(played.stderr)")
            let rows = try await Self.playedRows(sandbox)
            #expect(rows.map { $0["state"] as? String } == ["superseded", "pending"])

            let sync = try await sandbox.run(["sync"])
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(sync.stdout.contains("Sent the play state of 1 items"))
            let data = try #require(sandbox.server.userData(of: movie.id))
            #expect(data.played && data.playCount == 1)
            #expect(data.lastPlayedDate == ISO8601DateFormatter().date(from: "2026-11-20T21:30:00Z"))
            let again = try await sandbox.run(["sync"])
            #expect(!again.stdout.contains("Sent the play state"))
            #expect(sandbox.server.userData(of: movie.id)?.playCount == 1)
        }
    }

    @Test func aRollingSelectionAndABudgetFromTheCommandLine() async throws {
        try await Sandbox.signedIn { sandbox in
            let library = sandbox.server.library
            let series = library.series[0]
            let select = try await sandbox.run([
                "select", "series", series.id, "--next-unplayed", "1", "--delete-played", "0",
            ])
            #expect(select.status == 0, "\(select.stderr)")
            let bad = try await sandbox.run(["select", "series", series.id, "--delete-played", "soon"])
            #expect(bad.status == 64)
            let movie = library.movies[1]
            #expect(try await sandbox.run(["select", "movie", movie.id, "--priority", "1"]).status == 0)
            let selections = try await sandbox.run(["selections"])
            #expect(selections.stdout.contains("next 1 unplayed, played leave after 0s"))
            #expect(selections.stdout.contains("priority 1"))

            // A budget that holds the movie, not the episode as well: the movie (priority 1) comes first.
            let size = Int64(library.mediaBytes(forMediaSourceId: movie.mediaSources[0].id)?.count ?? 0)
            #expect(try await sandbox.run(["config", "set", "budget", "\(size + size / 2)"]).status == 0)
            let budgeted = try await sandbox.run(["sync"])
            #expect(budgeted.status == 0, "\(budgeted.stderr)")
            #expect(budgeted.stderr.contains("waiting: "))
            #expect(budgeted.stdout.contains("wait for space within the budget"))
            let mirror = sandbox.folder + "/mirror/Downloads"
            func held(_ id: String) -> Bool {
                (FileManager.default.enumerator(atPath: mirror)?.allObjects as? [String] ?? []).contains {
                    $0.contains(id) && $0.hasSuffix(".mkv")
                }
            }
            #expect(held(movie.id))
            let episodes = library.episodes.filter { $0.seriesId == series.id }.sorted {
                (($0.parentIndexNumber ?? 0), ($0.indexNumber ?? 0)) < (
                    ($1.parentIndexNumber ?? 0), ($1.indexNumber ?? 0)
                )
            }
            // The window starts after the last played episode (the first of each season is generated as played).
            let start = (episodes.lastIndex { $0.played } ?? -1) + 1
            let next = try #require(episodes[start...].first { !$0.played })
            #expect(!held(next.id))

            #expect(try await sandbox.run(["config", "unset", "budget"]).status == 0)
            #expect(try await sandbox.run(["sync"]).status == 0)
            #expect(held(next.id))
            // Watched offline: it leaves and the one after it arrives, in one sync, without --delete.
            #expect(try await sandbox.run(["played", next.id]).status == 0)
            let rolled = try await sandbox.run(["sync"])
            #expect(rolled.status == 0, "\(rolled.stderr)")
            #expect(!held(next.id))
            let after = try #require(episodes[start...].first { !$0.played && $0.id != next.id })
            #expect(held(after.id))
            #expect(sandbox.server.userData(of: next.id)?.played == true)
        }
    }

    /// A WAV file mpv plays: `seconds` of silence.
    static func silence(seconds: Int) -> [UInt8] { TestMedia.silence(seconds: seconds) }

    @Test(.enabled(if: MpvPlayer.locate() != nil, "mpv is not installed (Debian: apt install mpv)"))
    func playsInMpvAndRecordsWhereItStopped() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let movie = sandbox.server.library.movies[0]
        sandbox.server.updateLibrary {
            $0.setMediaBytes(Self.silence(seconds: 20), forMediaSourceId: movie.mediaSources[0].id)
        }
        #expect(try await sandbox.login().status == 0)
        #expect(try await sandbox.run(["select", "movie", movie.id]).status == 0)
        #expect(try await sandbox.run(["sync"]).status == 0)
        // The user quits halfway through the 20 s file (a script quits as a person pressing q would): a position.
        let script = try Self.mpvScript(
            in: sandbox, "quit-halfway.lua",
            #"mp.observe_property("time-pos", "number", function(_, t) if t and t >= 10 then mp.command("quit") end end)"#
        )
        let mpv = ["--mpv-option=--vo=null", "--mpv-option=--ao=null", "--mpv-option=--speed=4"]
        let half = try await sandbox.run(["play", movie.id, "--mpv-option=--script=\(script)"] + mpv)
        #expect(half.status == 0, "\(half.stderr)")
        #expect(half.stdout.contains("Stopped \(movie.id) at 0:00:"))
        let ticks = try await Self.lastPositionTicks(sandbox)
        // Between 5 % and 90 % of the file (mpv reports positions a few times a second, so not exactly 10 s).
        #expect(ticks >= 10_000_000 && ticks <= 180_000_000, "\(ticks)")
        // mpv killed (SIGKILL from inside, as an out-of-memory kill would) past 12 s: the last position it reported
        // is recorded, and the run says how mpv ended.
        let killer = try Self.mpvScript(
            in: sandbox, "killed.lua",
            #"mp.observe_property("time-pos", "number", function(_, t) if t and t >= 12 then os.execute("kill -9 " .. mp.get_property("pid")) end end)"#
        )
        let killed = try await sandbox.run(["play", movie.id, "--mpv-option=--script=\(killer)"] + mpv)
        #expect(killed.status == 0, "\(killed.stderr)")
        #expect(killed.stderr.contains("mpv was killed (signal 9)"))
        let killTicks = try await Self.lastPositionTicks(sandbox)
        #expect(killTicks >= ticks, "resumed at \(ticks), killed at \(killTicks)")
        // Played to the end: played (past 90 %), resuming from where it stopped.
        let end = try await sandbox.run(["play", movie.id] + mpv)
        #expect(end.status == 0, "\(end.stderr)")
        #expect(end.stdout.contains("recorded as played"))
        let sync = try await sandbox.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sandbox.server.userData(of: movie.id)?.played == true)
    }

    @Test func playWithoutMpvIsOneClearLine() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.tearDown() }
        let output = try await sandbox.run(
            ["play", sandbox.server.library.movies[0].id], extra: ["PATH": "/nonexistent"])
        #expect(output.status == 1)
        #expect(output.stderr.split(separator: "\n").count == 1)
        #expect(output.stderr.contains("mpv is not installed"))
    }
}

/// The whole story against each Jellyfin version the test server models: sign in, browse, select,
/// sync, a no-op sync, a played mark sent by the version's routes.
@Suite struct EveryVersionCommandTests {
    @Test(arguments: JellyfinProfile.allCases)
    func theCommandsWorkAgainst(profile: JellyfinProfile) async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        sandbox.server.profile = profile
        let login = try await sandbox.login()
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains(profile.version))
        let browse = try await sandbox.run(["browse", "--json"])
        #expect(browse.status == 0, "\(browse.stderr)")
        let views = try JSONSerialization.jsonObject(with: Data(browse.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(views.count == 2)
        let movie = sandbox.server.library.movies[0]
        let series = sandbox.server.library.series[0]
        #expect(try await sandbox.run(["select", "movie", movie.id]).status == 0)
        #expect(try await sandbox.run(["select", "series", series.id, "--next-unplayed", "1"]).status == 0)
        let sync = try await sandbox.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(
            FileManager.default.fileExists(
                atPath: sandbox.folder + "/mirror/Downloads/\(movie.id)/\(movie.id)-\(movie.mediaSources[0].id).mkv"))
        #expect(try await sandbox.run(["sync"]).stdout.contains("Up to date"))
        #expect(try await sandbox.run(["played", movie.id]).status == 0)
        let pushed = try await sandbox.run(["sync"])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stdout.contains("Sent the play state of 1 items"))
        #expect(sandbox.server.userData(of: movie.id)?.played == true)
        let route =
            profile == .v10_8
            ? "/Users/\(sandbox.server.library.userId)/PlayedItems/\(movie.id)" : "/UserPlayedItems/\(movie.id)"
        #expect(sandbox.server.requests(to: route).count == 1)
    }
}
