import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

/// What a new user meets first: a sync with nothing to do says what is missing and how to add it (and still exits 0,
/// as a scheduled run with genuinely nothing to do must), and a series the server lists no episodes for is said
/// in the report and named by `du` and `ls`.
@Suite struct FirstRunTests {
    @Test func aSyncWithNothingAtAllSaysWhatIsMissing() async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let sync = try await sandbox.run(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(
            sync.stdout.contains("Nothing to sync: not signed in to a Jellyfin server, nothing selected, no podcasts."),
            "\(sync.stdout)")
        #expect(sync.stdout.contains("mediasync login URL"))
        #expect(sync.stdout.contains("mediasync select KIND ID"))
        #expect(sync.stdout.contains("mediasync podcast add FEED_URL"))
        #expect(!sync.stdout.contains("Up to date"))

        // Only the podcasts: only what they lack.
        let podcasts = try await sandbox.run(["sync", "--only", "podcasts"])
        #expect(podcasts.status == 0)
        #expect(podcasts.stdout.contains("Nothing to sync: no podcasts."), "\(podcasts.stdout)")
        #expect(!podcasts.stdout.contains("login"))

        // The JSON report names the same, for scripts.
        let json = try await sandbox.run(["sync", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(report?["nothingToSync"] as? [String] == ["signIn", "selections", "podcasts"], "\(json.stdout)")
    }

    @Test func signedInWithNothingSelected() async throws {
        try await JellyfinCommandTests.Sandbox.signedIn { sandbox in
            let sync = try await sandbox.run(["sync"])
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(sync.stdout.contains("Nothing to sync: nothing selected, no podcasts."), "\(sync.stdout)")
            #expect(!sync.stdout.contains("not signed in"))
            #expect(!sync.stdout.contains("mediasync login"))

            // Once something is selected the run is an ordinary one, and its next run is up to date.
            #expect(try await sandbox.run(["select", "movie", sandbox.server.library.movies[0].id]).status == 0)
            let first = try await sandbox.run(["sync"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(!first.stdout.contains("Nothing to sync"), "\(first.stdout)")
            let again = try await sandbox.run(["sync"])
            #expect(again.stdout.hasPrefix("Up to date: "), "\(again.stdout)")
        }
    }

    @Test func aSeriesWithNoEpisodesIsSaidAndNamed() async throws {
        try await JellyfinCommandTests.Sandbox.signedIn { sandbox in
            let series = try #require(sandbox.server.library.series.first)
            sandbox.server.updateLibrary { library in
                for season in library.items where season.type == "Season" && season.seriesId == series.id {
                    library.removeItem(withId: season.id)
                }
            }
            #expect(try await sandbox.run(["select", "series", series.id]).status == 0)
            let sync = try await sandbox.run(["sync"])
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(sync.stdout.contains("\(series.name): the server lists no episodes"), "\(sync.stdout)")

            let du = try await sandbox.run(["du"])
            let line = du.stdout.split(separator: "\n").first { $0.contains(series.id) }.map(String.init) ?? ""
            #expect(line.contains("Series") && line.contains(series.name), "\(du.stdout)")
            #expect(!du.stdout.contains("Item"), "\(du.stdout)")

            let ls = try await sandbox.run(["ls", "--type", "series"])
            #expect(ls.stdout.contains(series.name) && ls.stdout.contains(series.id), "\(ls.stdout)")
        }
    }
}
