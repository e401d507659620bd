import Foundation
import MediaSyncTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The fault matrix's cells where the exit code is what a scheduler acts on: `mediasync sync --delete` as a
/// process against a faulty server, its exit code, and the next run finishing the job. (The cells themselves,
/// with every check of "nothing lost", are `FaultMatrixTests` in MediaSyncTests.)
///
/// `FAULT_MATRIX_TSV=PATH` appends one `cli` row per cell to PATH for `Scripts/fault-matrix.sh`.
@Suite struct FaultExitCodeTests {
    struct Cell: Sendable, CustomTestStringConvertible {
        /// The names of the matrix's rows and columns (`FaultMatrix.Fault` and `.Moment`).
        var fault: String
        var moment: String
        var exitCode: Int32

        var testDescription: String { "\(fault) × \(moment) → exit \(exitCode)" }
    }

    static let cells: [Cell] = [
        Cell(fault: "500", moment: "media", exitCode: 0),
        Cell(fault: "reset after K bytes", moment: "enclosure", exitCode: 0),
        Cell(fault: "404", moment: "image", exitCode: 0),
        // One 401 while `/Users/Me` still accepts the token (a library the user may no longer access): reported, the
        // sign-in kept; a refused token is exit 4 (SyncExitCodeTests).
        Cell(fault: "401 in the middle of a run", moment: "listing", exitCode: 3),
        Cell(fault: "401 in the middle of a run", moment: "media", exitCode: 3),
        Cell(fault: "404", moment: "listing", exitCode: 3),
        Cell(fault: "body not JSON (an HTML page)", moment: "listing", exitCode: 3),
        Cell(fault: "redirect loop", moment: "feed", exitCode: 3),
        Cell(fault: "404", moment: "enclosure", exitCode: 3),
    ]

    @Test(arguments: cells)
    func exitCode(_ cell: Cell) async throws {
        let sandbox = try JellyfinCommandTests.Sandbox()
        defer { sandbox.tearDown() }
        let server = sandbox.server
        let library = server.library
        let series = library.series[0]
        let movie = library.movies[0]
        #expect(try await sandbox.login().status == 0)
        #expect(try await sandbox.run(["select", "series", series.id]).status == 0)
        server.setFile("/pod/e1.mp3", contents: Array(repeating: 1, count: 3_000), contentType: "audio/mpeg")
        server.setFile("/pod/e2.mp3", contents: Array(repeating: 2, count: 300_000), contentType: "audio/mpeg")
        publish(server, episodes: [1])
        #expect(try await sandbox.run(["podcast", "add", server.baseURL + "/pod/feed.xml", "--all"]).status == 0)
        let baseline = try await sandbox.run(["sync", "--quiet"])
        try #require(baseline.status == 0, "\(baseline.stderr)")
        let downloads = sandbox.folder + "/mirror/Downloads"
        let mirroredBefore = try FileManager.default.subpathsOfDirectory(atPath: downloads).filter {
            !$0.hasSuffix("metadata.json")
        }

        // New work, and the fault.
        #expect(try await sandbox.run(["select", "movie", movie.id]).status == 0)
        publish(server, episodes: [1, 2])
        let path: String
        switch cell.moment {
        case "listing": path = "/Shows/\(series.id)/Episodes"
        case "media": path = "/Items/\(movie.mediaSources[0].id)/Download"
        case "image": path = "/Items/\(movie.id)/Images/Primary"
        case "feed": path = "/pod/feed.xml"
        default: path = "/pod/e2.mp3"
        }
        switch cell.fault {
        case "500": server.inject(.status(500), path: path)
        case "reset after K bytes": server.inject(.resetAfter(bytes: 100_000), path: path)
        case "404": server.inject(.status(404), path: path)
        case "401 in the middle of a run": server.inject(.status(401), path: path)
        case "redirect loop":
            server.inject(.redirect(location: server.baseURL + path, status: 302), path: path, count: 100)
        default:
            server.inject(
                .body(status: 200, contentType: "text/html", bytes: Array("<html>Proxy error</html>".utf8)), path: path)
        }
        let faulty = try await sandbox.run(["sync", "--delete", "--attempts", "2"])
        #expect(faulty.status == cell.exitCode, "\(cell): \(faulty.stderr)")
        if cell.exitCode != 0 || cell.moment == "image" {
            // Whatever failed is named on standard error.
            #expect(faulty.stderr.contains("failed"), "\(faulty.stderr)")
        }
        if cell.exitCode == 4 {
            #expect(faulty.stderr.contains("401") || faulty.stderr.contains("mediasync login"), "\(faulty.stderr)")
        }
        // Nothing mirrored before went, even with --delete.
        let after = Set(try FileManager.default.subpathsOfDirectory(atPath: downloads))
        #expect(Set(mirroredBefore).isSubset(of: after), "\(Set(mirroredBefore).subtracting(after))")

        server.clearFaults()
        let next = try await sandbox.run(["sync", "--delete"])
        #expect(next.status == 0, "\(cell): the next run: \(next.stderr)")
        let verify = try await sandbox.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        FaultExitCodeTests.record([
            "cli", cell.fault, cell.moment, "exit \(faulty.status)", "exit \(cell.exitCode)", "exit \(next.status)",
        ])
    }

    private func publish(_ server: TestServer, episodes: [Int]) {
        let items = episodes.map { number in
            """
            <item><title>Episode \(number)</title><guid>cli-episode-\(number)</guid>
            <pubDate>0\(number) Jan 2025 10:00:00 +0000</pubDate>
            <enclosure url="\(server.baseURL)/pod/e\(number).mp3" type="audio/mpeg"/></item>
            """
        }.joined(separator: "\n")
        let feed = "<rss version=\"2.0\"><channel><title>Fault Radio</title>\(items)</channel></rss>"
        server.setFile(
            "/pod/feed.xml", contents: Array(feed.utf8), contentType: "application/rss+xml", etag: "v\(episodes.count)")
    }

    static func record(_ fields: [String]) {
        guard let output = ProcessInfo.processInfo.environment["FAULT_MATRIX_TSV"], !output.isEmpty else { return }
        let line = Array((fields.joined(separator: "\t") + "\n").utf8)
        let fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
