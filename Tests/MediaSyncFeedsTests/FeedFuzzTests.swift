import Foundation
import MediaSyncTestSupport
import Testing

@testable import MediaSyncFeeds

/// Seeded mutation fuzzing of the feed and OPML parsers.
///
/// Documents are built from the golden fixtures (`Fixtures/feeds`, `Fixtures/opml` and the crashers found so far in
/// `Fixtures/feeds/crashers`) by ``FeedMutator`` with a fixed seed, so every run reads the same documents. Each one
/// goes through every entry point, and each must give a result or a ``FeedError`` (never another error, never a
/// crash), a result whose strings and URLs are clean (``FeedInvariants``), and the same answer on every path: in
/// memory, ``FeedJSON``'s streaming writer, and the file reader's careful and speculative paths at a chunk size
/// chosen per document.
///
/// CI reads 1,000 feeds and 333 OPML documents; `MEDIASYNC_FUZZ_COUNT=N` reads N feeds (and N/3 OPML documents),
/// `MEDIASYNC_FUZZ_SEED` changes the seed, `MEDIASYNC_FUZZ_HUGE` the size of the huge values (300 KB). A failing document is written to `$TMPDIR/feed-fuzz-failures/`; with
/// `MEDIASYNC_FUZZ_TRACE=PATH` each document is written to PATH before it is parsed, so a crash leaves it there.
@Suite("feed fuzzing: seeded mutations of the golden fixtures")
struct FeedFuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seed = environment["MEDIASYNC_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x6D65_6469_6173_796E
    static let feedCount = environment["MEDIASYNC_FUZZ_COUNT"].flatMap { Int($0) } ?? 1000
    static let opmlCount = max(300, feedCount / 3)
    /// The largest huge attribute value or repeated span: 300 KB by default, `MEDIASYNC_FUZZ_HUGE=BYTES` to change.
    static let hugeLimit = environment["MEDIASYNC_FUZZ_HUGE"].flatMap { Int($0) } ?? 300_000
    static let chunkSizes = [1, 2, 3, 7, 64, 4096, 1 << 18]

    static let opmlFolder = FeedFixture.packageRoot.appendingPathComponent("Fixtures/opml")
    static let crasherFolder = FeedFixture.folder.appendingPathComponent("crashers")

    static func files(in folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".xml") || $0.hasSuffix(".opml") }.sorted()
            .map { folder.appendingPathComponent($0) }
    }

    static func contents(_ files: [URL]) throws -> [[UInt8]] {
        try files.map { [UInt8](try Data(contentsOf: $0)) }
    }

    /// Checks `count` documents that a ``FeedMutator`` seeded with `seed` makes from `seeds`, off the cooperative pool;
    /// records what went wrong, prints the summary and expects no document to have failed.
    static func fuzz(
        _ label: String, seed: UInt64, seeds: [[UInt8]], count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> FuzzChecker {
        let checker = try await offThePool {
            var mutator = FeedMutator(seed: seed, seeds: seeds)
            mutator.hugeLimit = Self.hugeLimit
            var checker = try FuzzChecker(label: label)
            for index in 0..<count {
                let (bytes, operations) = mutator.next()
                checker.check(bytes, index: index, operations: operations.map(\.rawValue))
            }
            return checker
        }
        checker.recordIssues()
        print(checker.summary)
        #expect(
            checker.failures == 0, "\(checker.failures) of \(checker.documents) documents failed; see above",
            sourceLocation: sourceLocation)
        return checker
    }

    @Test("mutated feeds: a feed or a FeedError, clean values, the same on every path")
    func mutatedFeeds() async throws {
        let feeds = try FeedFixture.names.map { try FeedFixture.bytes($0) }
        let seeds = feeds + (try Self.contents(Self.files(in: Self.crasherFolder)))
        #expect(feeds.count >= 20)
        let checker = try await Self.fuzz("feed", seed: Self.seed, seeds: seeds, count: Self.feedCount)
        #expect(checker.documents == Self.feedCount)
        // The mutations must leave most documents readable, or the fuzzing would only test the error paths.
        #expect(checker.parsed * 2 > checker.documents)
        #expect(checker.errorKinds.count >= 3)
    }

    @Test("mutated OPML: outlines or a FeedError, clean URLs")
    func mutatedOPML() async throws {
        let opml = try Self.contents(Self.files(in: Self.opmlFolder))
        #expect(opml.count >= 4)
        // Two feeds to splice with; the OPML documents count three times as seeds.
        let seeds = opml + opml + opml + [try FeedFixture.bytes("rss2_basic"), try FeedFixture.bytes("atom_basic")]
        let checker = try await Self.fuzz("opml", seed: Self.seed ^ 0x0F0F, seeds: seeds, count: Self.opmlCount)
        #expect(checker.outlines > 0)
    }

    @Test("the golden fixtures themselves pass every check")
    func fixturesPass() throws {
        var checker = try FuzzChecker(label: "fixture")
        let files =
            FeedFixture.names.map { FeedFixture.folder.appendingPathComponent("\($0).xml") }
            + Self.files(in: Self.opmlFolder)
        for (index, file) in files.enumerated() {
            checker.check([UInt8](try Data(contentsOf: file)), index: index, operations: [file.lastPathComponent])
        }
        checker.recordIssues()
        #expect(checker.failures == 0)
        #expect(checker.parsed == FeedFixture.names.count)
        #expect(checker.outlines >= 10)
    }

    /// `MEDIASYNC_FUZZ_REPLAY=FILE[:FILE...]`: runs the checks on saved documents and prints what each path read.
    @Test(
        "replay saved documents (MEDIASYNC_FUZZ_REPLAY)",
        .enabled(if: environment["MEDIASYNC_FUZZ_REPLAY"] != nil))
    func replay() throws {
        let paths = (Self.environment["MEDIASYNC_FUZZ_REPLAY"] ?? "").split(separator: ":").map(String.init)
        var checker = try FuzzChecker(label: "replay")
        checker.verbose = true
        for (index, path) in paths.enumerated() {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let chunk = Self.environment["MEDIASYNC_FUZZ_CHUNK"].flatMap { Int($0) }
            checker.check(bytes, index: index, operations: [path], chunkSize: chunk)
        }
        checker.recordIssues()
        print(checker.summary)
        #expect(checker.failures == 0)
    }

    /// Every document the fuzzers found crashing or failing a check stays fixed (golden: no crash, no failure).
    @Test("crashers found by fuzzing stay fixed", arguments: files(in: crasherFolder).map(\.lastPathComponent))
    func crasher(_ name: String) throws {
        var checker = try FuzzChecker(label: "crasher")
        checker.check(
            [UInt8](try Data(contentsOf: Self.crasherFolder.appendingPathComponent(name))), index: 0, operations: [name]
        )
        checker.recordIssues()
        #expect(checker.failures == 0)
        #expect(checker.documents == 1)
    }
}

/// Runs one document through every entry point and collects what went wrong.
struct FuzzChecker {
    let label: String
    let scratch: URL
    let output: URL
    let failureFolder: URL
    let trace = ProcessInfo.processInfo.environment["MEDIASYNC_FUZZ_TRACE"]
    var documents = 0
    var parsed = 0
    var episodes = 0
    var outlines = 0
    var recovered = 0
    var failures = 0
    var errorKinds: [String: Int] = [:]
    /// The first failures, described (recorded as issues by ``recordIssues()`` in the test's own task).
    var messages: [String] = []
    /// Prints each path's result (for replaying saved documents).
    var verbose = false
    let slow = ProcessInfo.processInfo.environment["MEDIASYNC_FUZZ_SLOW"] != nil

    init(label: String) throws {
        self.label = label
        let temporary = FileManager.default.temporaryDirectory
        scratch = temporary.appendingPathComponent("fuzz-\(label)-\(UUID().uuidString).xml")
        output = temporary.appendingPathComponent("fuzz-\(label)-\(UUID().uuidString).json")
        failureFolder = temporary.appendingPathComponent("feed-fuzz-failures")
    }

    func recordIssues() {
        for message in messages { Issue.record(Comment(rawValue: message)) }
    }

    var summary: String {
        let kinds = errorKinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(label) fuzzing: \(documents) documents, \(parsed) parsed (\(recovered) recovered, \(episodes) "
            + "episodes, \(outlines) OPML outlines), errors: \(kinds.isEmpty ? "none" : kinds); \(failures) failures"
    }

    mutating func check(_ bytes: [UInt8], index: Int, operations: [String], chunkSize chosen: Int? = nil) {
        documents += 1
        if let trace { try? Data(bytes).write(to: URL(fileURLWithPath: trace)) }
        var problems: [String] = []
        let chunkSize = FeedFuzzTests.chunkSizes[index % FeedFuzzTests.chunkSizes.count]
        let started = ContinuousClock.now
        defer {
            if slow, ContinuousClock.now - started > .milliseconds(200) {
                print("slow: \(label) \(index) \(operations) \(bytes.count) bytes: \(ContinuousClock.now - started)")
                try? Data(bytes).write(
                    to: FileManager.default.temporaryDirectory.appendingPathComponent("slow-\(label)-\(index).xml"))
            }
        }
        checkFeed(
            bytes, chunkSize: chosen ?? (bytes.count > 65_536 ? max(chunkSize, 4096) : chunkSize), problems: &problems)
        checkOPML(bytes, problems: &problems)
        guard !problems.isEmpty else { return }
        failures += 1
        try? FileManager.default.createDirectory(at: failureFolder, withIntermediateDirectories: true)
        let file = failureFolder.appendingPathComponent("\(label)-\(index).xml")
        try? Data(bytes).write(to: file)
        if failures <= 20 {
            messages.append(
                "\(label) \(index) (\(operations.joined(separator: "+")), \(bytes.count) bytes, saved as \(file.path)): "
                    + problems.prefix(5).joined(separator: "; "))
        }
    }

    private mutating func checkFeed(_ bytes: [UInt8], chunkSize: Int, problems: inout [String]) {
        let base = FeedFixture.defaultBaseURL
        let inMemory = Result { try FeedParser.parse(bytes, baseURL: base) }
        var expectedJSON: String?
        switch inMemory {
        case .success(let feed):
            parsed += 1
            episodes += feed.episodes.count
            if feed.recoveredError != nil { recovered += 1 }
            problems += FeedInvariants.problems(in: feed)
            do {
                let json = try FeedJSON.encode(feed)
                problems += FeedInvariants.problems(inJSON: json)
                expectedJSON = json + "\n"
            } catch {
                problems.append("FeedJSON.encode threw \(error)")
            }
        case .failure(let error):
            problems += Self.errorProblems(error, path: "parse")
            errorKinds[Self.kind(of: error), default: 0] += 1
        }

        // FeedJSON's streaming writer, from memory and from a file: the same output, or the same error and no output.
        do {
            try Data(bytes).write(to: scratch)
        } catch {
            problems.append("cannot write the scratch file: \(error)")
            return
        }
        let scratchPath = scratch.path
        for (path, write) in [
            (
                "FeedJSON.write(feedBytes:)",
                { (fd: Int32) in try FeedJSON.write(feedBytes: bytes, baseURL: base, to: fd) }
            ),
            (
                "FeedJSON.write(feedAtPath:)",
                { (fd: Int32) in try FeedJSON.write(feedAtPath: scratchPath, baseURL: base, to: fd) }
            ),
        ] {
            let written = writeToFile(write)
            switch (inMemory, written) {
            case (.success, .success(let json)):
                if json != expectedJSON { problems.append("\(path) wrote other JSON than FeedJSON.encode") }
            case (.failure(let error), .success(let json)):
                problems.append("\(path) wrote \(json.utf8.count) bytes where parse threw \(error)")
            case (_, .failure):
                if let problem = Self.thrownMismatch(path, parse: inMemory, other: written) { problems.append(problem) }
            }
        }

        // The file reader's careful path (no replay) and speculative path (with replay) at this document's chunk size.
        for replay in [false, true] {
            var collected: [Episode] = []
            let streamed = Result { () throws -> Feed in
                var feed = try FeedParser.parse(
                    contentsOfFile: scratch.path, baseURL: base, maximumSize: FeedParser.defaultMaximumSize,
                    chunkSize: chunkSize, replayAfterRecovery: replay ? { collected.removeAll() } : nil
                ) { collected.append($0) }
                feed.episodes = collected
                return feed
            }
            let path = "parse(contentsOfFile:) \(replay ? "speculative" : "careful") with \(chunkSize)-byte chunks"
            if verbose {
                print("== \(path):\n\(Self.describe(streamed))\n== parse(bytes):\n\(Self.describe(inMemory))")
            }
            switch (inMemory, streamed) {
            case (.success(let expected), .success(var actual)):
                // Without a replay hook, the episodes streamed before libxml2 gave up are kept and the recovery
                // re-read only adds those after them (documented); the feed-level values must still agree.
                if !replay, actual != expected, expected.recoveredError != nil,
                    actual.recoveredError == expected.recoveredError
                {
                    actual.episodes = expected.episodes
                    actual.duplicateGUIDs = expected.duplicateGUIDs
                }
                if actual != expected { problems.append("\(path) read another feed than parse") }
            case (.failure(let error), .success):
                problems.append("\(path) succeeded where parse threw \(error)")
            case (_, .failure):
                if let problem = Self.thrownMismatch(path, parse: inMemory, other: streamed) {
                    problems.append(problem)
                }
            }
        }
    }

    /// What is wrong when another path than `parse` threw: `path` threw where `parse` succeeded, or both threw but not
    /// the same ``FeedError``; nil when both threw the same, or `path` did not throw.
    private static func thrownMismatch<Parsed, Other>(
        _ path: String, parse: Result<Parsed, any Error>, other: Result<Other, any Error>
    ) -> String? {
        switch (parse, other) {
        case (.failure(let expected), .failure(let error)):
            return (expected as? FeedError) != (error as? FeedError)
                ? "\(path) threw \(error), parse threw \(expected)" : nil
        case (.success, .failure(let error)):
            return "\(path) threw \(error) where parse succeeded"
        case (_, .success):
            return nil
        }
    }

    private mutating func checkOPML(_ bytes: [UInt8], problems: inout [String]) {
        switch Result(catching: { try OPML.parse(bytes) }) {
        case .success(let found):
            outlines += found.count
            problems += FeedInvariants.problems(in: found)
        case .failure(let error):
            problems += Self.errorProblems(error, path: "OPML.parse")
        }
    }

    /// Runs a FeedJSON writer into a file and reads what it wrote.
    private func writeToFile(_ write: (Int32) throws -> Void) -> Result<String, Error> {
        let descriptor = open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .failure(POSIXError(.EIO)) }
        let result = Result { try write(descriptor) }
        close(descriptor)
        let text = (try? Data(contentsOf: output)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        switch result {
        case .success: return .success(text)
        case .failure(let error):
            // Nothing is written when parsing fails.
            return text.isEmpty ? .failure(error) : .success(text)
        }
    }

    static func describe(_ result: Result<Feed, Error>) -> String {
        switch result {
        case .success(let feed): return (try? FeedJSON.encode(feed)) ?? "\(feed)"
        case .failure(let error): return "error: \(error)"
        }
    }

    static func errorProblems(_ error: Error, path: String) -> [String] {
        guard let feedError = error as? FeedError else {
            return ["\(path) threw a \(type(of: error)), not a FeedError: \(error)"]
        }
        let text = feedError.description
        if text.isEmpty || text.contains("\n") || !FeedInvariants.isCleanText(text) {
            return ["\(path)'s error is not one clean line: \(text.debugDescription.prefix(200))"]
        }
        return []
    }

    static func kind(of error: Error) -> String {
        guard let error = error as? FeedError else { return "\(type(of: error))" }
        let kinds: [(FeedError, String)] = [
            (.notAFeed, "notAFeed"), (.entityExpansion, "entityExpansion"), (.tooLarge, "tooLarge"), (.empty, "empty"),
            (.notOPML, "notOPML"),
        ]
        return kinds.first { $0.0 == error }?.1 ?? "malformed"
    }
}
