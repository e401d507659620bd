import Foundation
import MediaSync
import MediaSyncServe
import MediaSyncTestServer
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The page in a real headless Chromium (Debian's `chromium` and `chromium-driver`), driven by Selenium from PyPI in
/// a venv made once in `.build/web-browser-venv`, against `serve` (its own process) over the test server. Skipped,
/// with a message, where Chromium, its driver or python3 is missing. With `MEDIASYNC_WEB_SCREENSHOTS=DIR` the script
/// also saves a screenshot of each page there (docs/images).
@Suite struct WebBrowserTests {
    static let script = ThirdPartyClientTests.packageRoot.appendingPathComponent(
        "Tests/MediaSyncServeTests/Python/web_browser.py"
    ).path
    static let venv = ThirdPartyClientTests.packageRoot.appendingPathComponent(".build/web-browser-venv").path

    static func find(_ names: [String]) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in names {
            for folder in path.split(separator: ":") + ["/usr/bin", "/usr/lib/chromium"] {
                let candidate = "\(folder)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }

    static var chromium: String? { find(["chromium", "chromium-browser"]) }
    static var chromedriver: String? { find(["chromedriver"]) }
    static var missing: String? {
        if ThirdPartyClientTests.python3 == nil { return "no python3" }
        if chromium == nil { return "no chromium (Debian: apt install chromium)" }
        if chromedriver == nil { return "no chromedriver (Debian: apt install chromium-driver)" }
        return nil
    }

    /// The venv's python with Selenium, nil (and why) when it cannot be made.
    static func seleniumPython() async throws -> (python: String?, why: String) {
        let python = venv + "/bin/python"
        let probe = ["-c", "import selenium"]
        if FileManager.default.isExecutableFile(atPath: python),
            try await ThirdPartyClientTests.run(python, probe).status == 0
        {
            return (python, "")
        }
        guard let system = ThirdPartyClientTests.python3 else { return (nil, "no python3") }
        let made = try await ThirdPartyClientTests.run(system, ["-m", "venv", venv])
        guard made.status == 0 else { return (nil, "python3 -m venv failed: \(made.err)") }
        let installed = try await ThirdPartyClientTests.run(python, ["-m", "pip", "install", "-q", "selenium"])
        guard installed.status == 0 else { return (nil, "pip cannot install selenium: \(installed.err)") }
        return (python, "")
    }

    static func library() -> TestLibrary {
        // Files big enough, and the server slow enough, that a sync takes a few seconds to watch.
        var library = TestLibrary(
            movies: 4, series: 1, seasonsPerSeries: 1, episodesPerSeason: 5, mediaSize: 700_000, seed: 83)
        if let index = library.items.firstIndex(where: { $0.type == "Movie" }) {
            library.items[index].name = "<img src=x onerror=alert(1)>"
        }
        // The movie "Sync now" fetches is larger (16 s at the throttle), so its bar is still moving once the page
        // shows it on a machine as loaded as a whole test run makes it.
        if library.movies.count > 1, let kept = library.movies[1].mediaSources.first?.id {
            library.updateMediaSource(kept) { $0.size = 4_000_000 }
        }
        return library
    }

    /// A small RSS feed the page subscribes to.
    static func feed(_ base: String) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Night Radio</title><link>\(base)/</link>
            <description>A test feed</description>
            <item><guid>night-1</guid><title>First night</title><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>
            <enclosure url="\(base)/night-1.mp3" length="3000" type="audio/mpeg"/></item>
            </channel></rss>
            """.utf8)
    }

    @Test(.enabled(if: WebBrowserTests.missing == nil, "skipped: \(WebBrowserTests.missing ?? "")"))
    func thePageInChromium() async throws {
        let (python, why) = try await Self.seleniumPython()
        guard let python, let chromium = Self.chromium, let chromedriver = Self.chromedriver else {
            print("WebBrowserTests skipped: \(why)")
            return
        }
        try await ServeFixture.with(Self.library()) { fixture in
            let movies = fixture.library.movies
            guard movies.count == 4, let series = fixture.library.series.first,
                let failingSource = movies[2].mediaSources.first
            else { throw ServeError("unexpected library") }
            try MediaServe.setPassword(ServeFixture.password, user: nil, config: fixture.config)
            let upstream = fixture.upstream
            upstream.setThrottle(bytesPerSecond: 250_000)
            // One movie's file always fails: the page lists it under "Failed" with the reason.
            upstream.inject(.status(404), path: "/Items/\(failingSource.id)/Download", count: 1_000)
            upstream.setHandler("/feed.xml") { _ in
                TestServer.CustomResponse(contentType: "application/rss+xml", body: Self.feed(upstream.baseURL))
            }
            upstream.setHandler("/night-1.mp3") { _ in
                TestServer.CustomResponse(contentType: "audio/mpeg", body: [UInt8](repeating: 0xFF, count: 3000))
            }
            var scratch = ServeCommandTests.Scratch()
            scratch.folder = fixture.folder
            let (process, _, address) = try await ServeCommandTests.serve(scratch)
            defer {
                process.send(SIGTERM)
                _ = process.finish()
            }
            var arguments: [String: Any] = [
                "base": address, "password": ServeFixture.password, "chromium": chromium,
                "chromedriver": chromedriver, "keep": movies[1].name, "failing": movies[2].name,
                "cliKeep": series.name, "cli": [ServeCommandTests.binary, "sync"],
                "cliEnvironment": ["MEDIASYNC_ROOT": scratch.root, "MEDIASYNC_CONFIG_DIR": scratch.config],
                "feed": upstream.baseURL + "/feed.xml",
            ]
            if let shots = ProcessInfo.processInfo.environment["MEDIASYNC_WEB_SCREENSHOTS"], !shots.isEmpty {
                arguments["screenshots"] = shots
            }
            func run(_ phase: String) async throws -> [String: Any] {
                arguments["phase"] = phase
                let json = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
                let output = try await ThirdPartyClientTests.run(python, [Self.script, json])
                #expect(output.status == 0, "\(phase): \(output.err)")
                let line = output.out.split(separator: "\n").last.map(String.init) ?? ""
                let result = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
                print("WebBrowserTests \(phase): \(line)")
                return result
            }
            let main = try await run("main")
            #expect(main["security"] as? String == "ok")
            #expect(main["secondPressSaid"] as? Bool == true)
            #expect((main["barValues"] as? [Int])?.count ?? 0 >= 2)
            // What the page's syncs did, read from the mirror.
            let held = Set(try fixture.index.entries().filter { $0.file.kind == .media }.map(\.file.itemId))
            #expect(held.contains(movies[1].id))
            #expect(!held.contains(movies[2].id))
            #expect(try fixture.index.subscriptions().count == 1)
            upstream.shutdown()
            let unreachable = try await run("unreachable")
            #expect(unreachable["unreachable"] as? String == "ok")
        }
    }
}
