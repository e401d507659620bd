import Foundation
import MediaSyncFeeds

#if canImport(Glibc)
    import Glibc
#endif

/// One document through every public entry point of MediaSyncFeeds, with the checks of the mutation test
/// (`Tests/MediaSyncFeedsTests/FeedFuzzTests.swift`): a feed or a `FeedError`, never another error; clean text
/// and URLs; one-line errors; the same answer in memory and through `FeedJSON`'s streaming writers (from memory,
/// and from a file, which takes the speculative path first); OPML outlines with clean URLs.
///
/// Built two ways. Normally (`swift build`), `mediasync-fuzz-feeds FILE...` replays documents and exits 1 when
/// one fails a check. By `Scripts/fuzz-feeds.sh`, with `-sanitize=fuzzer,address` and `MEDIASYNC_LIBFUZZER`
/// defined, it is a libFuzzer target that aborts on a failed check so that libFuzzer keeps the input.
enum FeedFuzzer {
    /// A file and an output file of this process, reused for every input.
    struct Scratch {
        let input: String
        let output: String

        init() {
            let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            input = "\(directory)/mediasync-fuzz-\(getpid())-input.xml"
            output = "\(directory)/mediasync-fuzz-\(getpid())-output.json"
        }
    }

    static let baseURL = "https://feeds.example.org/show.xml"

    /// What is wrong with how the parsers read `bytes` (empty when everything holds).
    static func problems(_ bytes: [UInt8], scratch: Scratch) -> [String] {
        var problems: [String] = []
        let parsed = Result { try FeedParser.parse(bytes, baseURL: baseURL) }
        var expected: [UInt8]?
        switch parsed {
        case .success(let feed):
            problems += feedProblems(feed)
            do {
                expected = Array((try FeedJSON.encode(feed) + "\n").utf8)
            } catch {
                problems.append("FeedJSON.encode threw \(error)")
            }
        case .failure(let error):
            problems += errorProblems(error, path: "FeedParser.parse")
        }

        guard write(bytes, to: scratch.input) else { return problems + ["cannot write \(scratch.input)"] }
        for (path, streamer) in [
            (
                "FeedJSON.write(feedBytes:)",
                { (fd: Int32) in try FeedJSON.write(feedBytes: bytes, baseURL: baseURL, to: fd) }
            ),
            (
                "FeedJSON.write(feedAtPath:)",
                { (fd: Int32) in try FeedJSON.write(feedAtPath: scratch.input, baseURL: baseURL, to: fd) }
            ),
        ] {
            let descriptor = open(scratch.output, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return problems + ["cannot open \(scratch.output)"] }
            let streamed = Result { try streamer(descriptor) }
            close(descriptor)
            let written = read(scratch.output)
            switch (parsed, streamed) {
            case (.success, .success):
                if written != expected { problems.append("\(path) wrote other JSON than FeedJSON.encode") }
            case (.failure(let error), .failure(let streamError)):
                if (error as? FeedError) != (streamError as? FeedError) {
                    problems.append("\(path) threw \(streamError), FeedParser.parse threw \(error)")
                }
                if !written.isEmpty { problems.append("\(path) wrote \(written.count) bytes and threw") }
            case (.success, .failure(let error)):
                problems.append("\(path) threw \(error) where FeedParser.parse succeeded")
            case (.failure(let error), .success):
                problems.append("\(path) succeeded where FeedParser.parse threw \(error)")
            }
        }

        switch Result(catching: { try OPML.parse(bytes) }) {
        case .success(let outlines):
            for outline in outlines {
                if !isCleanURL(outline.xmlURL) { problems.append("OPML xmlURL \(outline.xmlURL.debugDescription)") }
                if let html = outline.htmlURL, !isCleanURL(html) {
                    problems.append("OPML htmlURL \(html.debugDescription)")
                }
                if let title = outline.title, title.isEmpty || !isCleanText(title) {
                    problems.append("OPML title \(title.debugDescription)")
                }
            }
        case .failure(let error):
            problems += errorProblems(error, path: "OPML.parse")
        }
        return problems
    }

    static func feedProblems(_ feed: Feed) -> [String] {
        var problems: [String] = []
        func text(_ name: String, _ value: String?) {
            if let value, value.isEmpty || !isCleanText(value) {
                problems.append("\(name) \(value.debugDescription.prefix(200))")
            }
        }
        func url(_ name: String, _ value: String?) {
            if let value, !isCleanURL(value) { problems.append("\(name) \(value.debugDescription.prefix(200))") }
        }
        text("title", feed.title)
        text("description", feed.description)
        text("author", feed.author)
        text("language", feed.language)
        text("podcastGUID", feed.podcastGUID)
        url("link", feed.link)
        url("imageURL", feed.imageURL)
        url("newFeedURL", feed.newFeedURL)
        for funding in feed.funding { url("funding.url", funding.url) }
        for episode in feed.episodes {
            text("episode.guid", episode.guid)
            text("episode.title", episode.title)
            text("episode.description", episode.description)
            url("episode.link", episode.link)
            url("episode.imageURL", episode.imageURL)
            url("episode.chaptersURL", episode.chaptersURL)
            url("episode.enclosure.url", episode.enclosure?.url)
            for transcript in episode.transcripts { url("episode.transcript.url", transcript.url) }
            if let duration = episode.durationSeconds, duration < 0 { problems.append("durationSeconds \(duration)") }
            if let length = episode.enclosure?.length, length < 0 { problems.append("enclosure.length \(length)") }
        }
        return problems
    }

    static func errorProblems(_ error: Error, path: String) -> [String] {
        guard let error = error as? FeedError else { return ["\(path) threw a \(type(of: error)): \(error)"] }
        let text = error.description
        return text.isEmpty || text.contains("\n") || !isCleanText(text)
            ? ["\(path)'s error \(text.debugDescription)"] : []
    }

    /// XML 1.0 characters only (no NUL, no C0 control but tab, line feed and carriage return, no U+FFFE/U+FFFF).
    static func isCleanText(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: true
            case 0x00...0x1F, 0xFFFE, 0xFFFF: false
            default: true
            }
        }
    }

    /// Printable ASCII without spaces, not empty.
    static func isCleanURL(_ url: String) -> Bool {
        !url.isEmpty && url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    // Plain system calls: Foundation's `FileManager.contents(atPath:)` leaks on an empty file (LeakSanitizer).

    static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    static func read(_ path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return result }
            result += buffer[0..<count]
        }
    }
}

#if MEDIASYNC_LIBFUZZER

    nonisolated(unsafe) private var scratch: FeedFuzzer.Scratch?

    @_silgen_name("LLVMFuzzerRunDriver")
    private func runDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    /// libFuzzer's entry point: aborts (so that libFuzzer keeps the input as a crash) when a check fails.
    @_cdecl("LLVMFuzzerTestOneInput")
    func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        let current = scratch ?? FeedFuzzer.Scratch()
        scratch = current
        let problems = FeedFuzzer.problems(bytes, scratch: current)
        if !problems.isEmpty {
            FileHandle.standardError.write(
                Data(("mediasync-fuzz-feeds: " + problems.joined(separator: "\n  ") + "\n").utf8))
            abort()
        }
        return 0
    }

    /// SwiftPM links an executable with `main` = `<module>_main`; here that runs libFuzzer's driver.
    @_cdecl("mediasync_fuzz_feeds_main")
    func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
        var count = argc
        var arguments = argv
        return runDriver(&count, &arguments, testOneInput)
    }

#else

    /// `mediasync-fuzz-feeds FILE...`: replays documents (crashers, a libFuzzer corpus) without libFuzzer.
    @main
    enum Replay {
        static func main() {
            let scratch = FeedFuzzer.Scratch()
            defer {
                unlink(scratch.input)
                unlink(scratch.output)
            }
            var failed = 0
            let files = CommandLine.arguments.dropFirst()
            for file in files {
                guard access(file, R_OK) == 0 else {
                    print("\(file): cannot read")
                    failed += 1
                    continue
                }
                let problems = FeedFuzzer.problems(FeedFuzzer.read(file), scratch: scratch)
                if !problems.isEmpty {
                    failed += 1
                    print("\(file):\n  " + problems.joined(separator: "\n  "))
                }
            }
            print("\(files.count) documents, \(failed) failed")
            exit(failed == 0 ? 0 : 1)
        }
    }

#endif
