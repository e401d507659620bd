import Foundation
import MediaSync
import MediaSyncTestServer
import Testing

/// `select KIND NAME`: the item found by the server's own search. One match selects it; several are listed with
/// their ids and none is selected; none found says so; both exit 64.
@Suite struct SelectByNameTests {
    /// A sandbox signed in to a server with ten movies ("Test Movie 1" … "Test Movie 10") and one series.
    static func sandbox() async throws -> JellyfinCommandTests.Sandbox {
        let sandbox = try JellyfinCommandTests.Sandbox(
            library: TestLibrary(movies: 10, series: 1, mediaSize: 1_000))
        #expect(try await sandbox.login().status == 0)
        return sandbox
    }

    @Test func oneMatchIsSelected() async throws {
        let sandbox = try await Self.sandbox()
        defer { sandbox.tearDown() }
        let movie = sandbox.server.library.movies[2]
        let selected = try await sandbox.run(["select", "movie", "Test Movie 3", "--all-versions"])
        #expect(selected.status == 0, "\(selected.stderr)")
        #expect(selected.stdout.contains("Selected movie Test Movie 3."), "\(selected.stdout)")
        let listed = try await sandbox.run(["selections", "--json"])
        #expect(listed.stdout.contains(movie.id), "\(listed.stdout)")

        // A series by its name, in another case.
        let series = try #require(sandbox.server.library.series.first)
        let show = try await sandbox.run(["select", "series", series.name.uppercased()])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(try await sandbox.run(["selections", "--json"]).stdout.contains(series.id))
    }

    /// "Test Movie 1" is found with "Test Movie 10"; the one of that very name is the one meant. Names are compared as
    /// people read them: "amelie" is "Amélie".
    @Test func theOneOfThatVeryNameAmongSeveralFound() async throws {
        let sandbox = try await Self.sandbox()
        defer { sandbox.tearDown() }
        let first = try await sandbox.run(["select", "movie", "Test Movie 1"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try await sandbox.run(["selections", "--json"]).stdout.contains(sandbox.server.library.movies[0].id))

        let renamed = sandbox.server.library.movies[4].id
        sandbox.server.updateLibrary { library in
            for index in library.items.indices where library.items[index].id == renamed {
                library.items[index].name = "Amélie"
            }
        }
        let accented = try await sandbox.run(["select", "movie", "amélie"])
        #expect(accented.status == 0, "\(accented.stderr)")
        #expect(accented.stdout.contains("Selected movie Amélie."), "\(accented.stdout)")
    }

    @Test func severalOrNoneSelectNothingAndExit64() async throws {
        let sandbox = try await Self.sandbox()
        defer { sandbox.tearDown() }
        let several = try await sandbox.run(["select", "movie", "Test Movie"])
        #expect(several.status == 64)
        #expect(several.stderr.contains("10 movies match \"Test Movie\"; select one by its id:"), "\(several.stderr)")
        for movie in sandbox.server.library.movies {
            #expect(several.stderr.contains(movie.id), "\(movie.id) is not listed")
        }
        #expect(several.stderr.contains("2001"), "the year is listed: \(several.stderr)")

        let none = try await sandbox.run(["select", "movie", "No Such Film"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("no movie called \"No Such Film\""), "\(none.stderr)")
        #expect(none.stderr.split(separator: "\n").count == 1)

        // A movie's name given for a series finds nothing of that kind.
        let wrongKind = try await sandbox.run(["select", "series", "Test Movie 2"])
        #expect(wrongKind.status == 64, "\(wrongKind.stderr)")

        let selections = try await sandbox.run(["selections", "--json"])
        let listed = try JSONSerialization.jsonObject(with: Data(selections.stdout.utf8)) as? [Any]
        #expect(listed?.isEmpty == true, "nothing is selected: \(selections.stdout)")
    }
}
