import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncTestServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every fault of the test server crossed with the moment it happens. Each cell syncs (with
/// `--delete`, as a nightly job might) and checks the outcome — recovered within the run, or a clear error of the
/// right class — and that nothing was lost: every file under `Downloads/` is the server's exact bytes or absent,
/// the index agrees with the tree, the files mirrored before are untouched, and the next sync is clean.
///
/// `FAULT_MATRIX_TSV=PATH` makes each cell append its row to PATH (`Scripts/fault-matrix.sh` prints the table).
@Suite struct FaultMatrixTests {
    @Test(arguments: FaultMatrix.cells)
    func cell(_ cell: FaultMatrix.Cell) async throws {
        let paged = cell.fault == .totalTooHigh || cell.fault == .totalTooLow
        let world = try await FaultWorld(
            episodes: paged ? FaultWorld.pagedEpisodes : 3,
            lowSpeedWindow: cell.fault == .stall ? FaultWorld.stallWindow : 30)
        defer { world.tearDown() }
        let baseline = try await world.mirrorBaseline()
        try #require(baseline.failed.isEmpty && baseline.sourceErrors.isEmpty, "\(baseline)")
        let podcastMetadata = world.podcastFolder + "/metadata.json"
        // The podcast's metadata.json lists its episodes, so it is rewritten when the second one lands.
        let mirroredBefore = world.tree().filter { $0 != podcastMetadata }
        try #require(
            mirroredBefore.contains(
                "Downloads/\(world.series.id)/Season-01/\(world.episode.id)-\(world.episode.id).mkv"))
        let stampsBefore = world.stamps(mirroredBefore)

        try world.addNewWork()
        let path = world.path(of: cell.moment)
        FaultMatrix.inject(cell, path: path, world: world)
        let report = try await world.sync()

        // The outcome and its class.
        let observed = FaultMatrix.Outcome(report)
        #expect(observed == cell.expected, "\(cell): \(report)")
        let requests = world.server.requests(to: path)
        switch cell.expected {
        case .recovered:
            // The fault fired and another request got the job done.
            #expect(requests.count >= 2, "\(cell): \(requests.count) requests to \(path)")
        case .sourceError:
            #expect(report.sourceErrors.count == 1, "\(report.sourceErrors)")
            let prefix = cell.moment == .feed ? "podcast" : "Jellyfin:"
            #expect(report.sourceErrors.allSatisfy { $0.hasPrefix(prefix) }, "\(report.sourceErrors)")
        case .failed:
            #expect(report.failed.map(\.path) == [world.mirrored(cell.moment)], "\(report.failed)")
        }
        if cell.fault.resumes {
            // The second attempt resumed: it asked for the rest of the partial file.
            #expect(requests.count >= 2 && requests[1].headers["range"] != nil, "\(cell): \(requests.map(\.headers))")
            #expect(requests.count >= 2 && requests[1].headers["if-range"] != nil)
        }

        // Nothing lost after the faulty run.
        let afterFault = world.tree()
        let heldAfterFault = world.contents(afterFault)
        let indexAfterFault = try world.indexDisagreements()
        #expect(indexAfterFault.isEmpty, "\(cell): \(indexAfterFault)")
        let untouchedAfterFault = world.stamps(mirroredBefore) == stampsBefore
        #expect(untouchedAfterFault, "\(cell): \(stampsBefore) became \(world.stamps(mirroredBefore))")
        if case .failed = cell.expected {
            #expect(!afterFault.contains(world.mirrored(cell.moment)))
        }

        // The next sync, without the fault, completes.
        world.server.clearFaults()
        let followUp = try await world.sync()
        let clean = followUp.failed.isEmpty && followUp.sourceErrors.isEmpty && !followUp.needsSignIn
        #expect(clean, "\(cell): the next sync: \(followUp)")
        let indexAfterFollowUp = try world.indexDisagreements()
        #expect(indexAfterFollowUp.isEmpty, "\(cell): \(indexAfterFollowUp)")
        let untouchedAfterFollowUp = world.stamps(mirroredBefore) == stampsBefore
        #expect(untouchedAfterFollowUp, "\(cell): the next sync touched what was mirrored before")

        // Every file held, then and now, is the server's exact bytes.
        let reference = try await world.reference()
        let damagedAfterFault = FaultWorld.lostOrDamaged(heldAfterFault, reference: reference)
        #expect(damagedAfterFault.isEmpty, "\(cell): \(damagedAfterFault)")
        let afterFollowUp = world.tree()
        let damagedAfterFollowUp = FaultWorld.lostOrDamaged(world.contents(afterFollowUp), reference: reference)
        #expect(damagedAfterFollowUp.isEmpty, "\(cell): \(damagedAfterFollowUp)")
        #expect(
            Set(afterFollowUp) == Set(reference.keys),
            "\(cell): \(Set(reference.keys).symmetricDifference(afterFollowUp))")
        if observed == .recovered {
            #expect(
                Set(afterFault) == Set(reference.keys),
                "\(cell): missing \(Set(reference.keys).subtracting(afterFault))")
        }

        let nothingLost =
            indexAfterFault.isEmpty && untouchedAfterFault && damagedAfterFault.isEmpty && indexAfterFollowUp.isEmpty
            && untouchedAfterFollowUp && damagedAfterFollowUp.isEmpty
        let message = (report.sourceErrors + report.failed.map(\.message)).first ?? ""
        FaultMatrix.record([
            cell.fault.rawValue, cell.moment.rawValue, observed.description, cell.expected.description,
            nothingLost ? "yes" : "NO", clean ? "clean" : "NOT clean", "\(requests.count)",
            FaultMatrix.oneLine(message),
        ])
    }

    @Test func everyFaultMeetsEveryMomentOnceAsACellOrWithAReasonWhyNot() {
        for (fault, row) in FaultMatrix.table {
            #expect(row.count == FaultMatrix.Moment.allCases.count, "\(fault)")
        }
        #expect(FaultMatrix.table.map(\.0) == FaultMatrix.Fault.allCases)
        for (fault, row) in FaultMatrix.table {
            for (moment, expectation) in zip(FaultMatrix.Moment.allCases, row) {
                guard case .notApplicable(let reason) = expectation else { continue }
                #expect(!reason.isEmpty)
                FaultMatrix.record([fault.rawValue, moment.rawValue, "n/a", "n/a", "", "", "", reason])
            }
        }
        #expect(FaultMatrix.cells.count == FaultMatrix.table.flatMap(\.1).filter(\.isCell).count)
    }
}

/// The matrix: faults (rows) by moments (columns), each an expected outcome or a reason it does not apply.
enum FaultMatrix {
    enum Fault: String, CaseIterable, Sendable {
        case reset = "reset after K bytes"
        case truncate = "body shorter than Content-Length"
        case status500 = "500"
        case status502 = "502"
        case status503 = "503"
        case tooManyRequests = "429 + Retry-After: 1"
        case unavailable = "503 + Retry-After: 1"
        case stall = "stall past the low-speed limit"
        case unauthorized = "401 in the middle of a run"
        case notFound = "404"
        case ignoredRange = "200 instead of 206 on resume"
        case rangeNotSatisfiable = "416 on resume"
        case changedBetweenAttempts = "Last-Modified changes between attempts"
        case redirectLoop = "redirect loop"
        case notJSON = "body not JSON (an HTML page)"
        case totalTooHigh = "TotalRecordCount above the real count"
        case totalTooLow = "TotalRecordCount below the real count"

        /// Faults whose second attempt resumes a partial file.
        var resumes: Bool { self == .ignoredRange || self == .rangeNotSatisfiable || self == .changedBetweenAttempts }
    }

    enum Moment: String, CaseIterable, Sendable {
        case listing, media, image, subtitle, feed, enclosure
    }

    enum Outcome: Equatable, Sendable, CustomStringConvertible {
        /// A second attempt within the run succeeded: the report is clean.
        case recovered
        /// A source (the Jellyfin listing, a feed) could not be read: reported, its files neither fetched nor deleted.
        case sourceError(signIn: Bool)
        /// One file failed and is reported; essential files make the run a partial failure.
        case failed(essential: Bool, signIn: Bool)

        init(_ report: SyncReport) {
            if !report.sourceErrors.isEmpty {
                self = .sourceError(signIn: report.needsSignIn)
            } else if !report.failed.isEmpty {
                self = .failed(essential: report.hasEssentialFailures, signIn: report.needsSignIn)
            } else {
                self = report.needsSignIn ? .sourceError(signIn: true) : .recovered
            }
        }

        var description: String {
            switch self {
            case .recovered: return "recovered"
            case .sourceError(let signIn): return "source error" + (signIn ? ", needs sign-in" : "")
            case .failed(let essential, let signIn):
                return "failed (\(essential ? "essential" : "optional"))" + (signIn ? ", needs sign-in" : "")
            }
        }
    }

    enum Expectation: Sendable {
        case cell(Outcome)
        case notApplicable(String)

        var isCell: Bool { if case .cell = self { true } else { false } }
    }

    struct Cell: Sendable, CustomTestStringConvertible, CustomStringConvertible {
        var fault: Fault
        var moment: Moment
        var expected: Outcome

        var testDescription: String { "\(fault.rawValue) × \(moment.rawValue)" }
        var description: String { testDescription }
    }

    private static let recovered = Expectation.cell(.recovered)
    private static let sourceError = Expectation.cell(.sourceError(signIn: false))
    private static let essential = Expectation.cell(.failed(essential: true, signIn: false))
    private static let optional = Expectation.cell(.failed(essential: false, signIn: false))
    private static let apiCall = Expectation.notApplicable("an API call or feed is fetched whole, never resumed")
    private static let small = Expectation.notApplicable("a file under 1 MiB is fetched whole, never resumed")
    private static let notPaged = Expectation.notApplicable("only a paged listing has a TotalRecordCount")

    /// Columns in ``Moment`` order: listing, media, image, subtitle, feed, enclosure.
    static let table: [(Fault, [Expectation])] = [
        (.reset, Array(repeating: recovered, count: 6)),
        (.truncate, Array(repeating: recovered, count: 6)),
        (.status500, Array(repeating: recovered, count: 6)),
        (.status502, Array(repeating: recovered, count: 6)),
        (.status503, Array(repeating: recovered, count: 6)),
        (.tooManyRequests, Array(repeating: recovered, count: 6)),
        (.unavailable, Array(repeating: recovered, count: 6)),
        (.stall, Array(repeating: recovered, count: 6)),
        // One 401 while `/Users/Me` still accepts the token (what Jellyfin answers for a library the user may no
        // longer access): reported, the sign-in kept. A refused token: ListingRefusalTests.
        (.unauthorized, [sourceError, essential, optional, optional, sourceError, essential]),
        (.notFound, [sourceError, essential, optional, optional, sourceError, essential]),
        (.ignoredRange, [apiCall, recovered, small, small, apiCall, recovered]),
        (.rangeNotSatisfiable, [apiCall, recovered, small, small, apiCall, recovered]),
        (.changedBetweenAttempts, [apiCall, recovered, small, small, apiCall, recovered]),
        (.redirectLoop, [sourceError, essential, optional, optional, sourceError, essential]),
        (
            .notJSON,
            [
                // Media: the page's size differs from MediaSource Size; a probe of what the server serves now sees
                // media again, so the file is fetched with the served size (the bytes served are the truth: a
                // server's recorded Size can be stale). A page that stays is refused: StaleSizeTests.
                sourceError, recovered,
                .notApplicable("an image has no shape to check: a 200 body is the image"),
                .notApplicable("a subtitle has no shape to check: a 200 body is the subtitle"), sourceError,
                .notApplicable("enclosure lengths are advisory: a 200 body is the episode"),
            ]
        ),
        (.totalTooHigh, [recovered, notPaged, notPaged, notPaged, notPaged, notPaged]),
        (.totalTooLow, [recovered, notPaged, notPaged, notPaged, notPaged, notPaged]),
    ]

    static let cells: [Cell] = table.flatMap { fault, row in
        zip(Moment.allCases, row).compactMap { moment, expectation in
            guard case .cell(let outcome) = expectation else { return nil }
            return Cell(fault: fault, moment: moment, expected: outcome)
        }
    }

    /// Where the fault bites, in bytes: past 1 MiB for the large files (their partial file is then resumable).
    static func cut(_ moment: Moment) -> Int {
        switch moment {
        case .listing: return 1_000
        case .media, .enclosure: return 1_100_000
        case .image, .subtitle: return 20
        case .feed: return 100
        }
    }

    static func inject(_ cell: Cell, path: String, world: FaultWorld) {
        let server = world.server
        switch cell.fault {
        case .reset: server.inject(.resetAfter(bytes: cut(cell.moment)), path: path)
        case .truncate: server.inject(.truncate(afterBytes: cut(cell.moment)), path: path)
        case .status500: server.inject(.status(500), path: path)
        case .status502: server.inject(.status(502), path: path)
        case .status503: server.inject(.status(503), path: path)
        case .tooManyRequests: server.inject(.retryAfter(status: 429, seconds: 1), path: path)
        case .unavailable: server.inject(.retryAfter(status: 503, seconds: 1), path: path)
        case .stall: server.inject(.stall(afterBytes: 10, seconds: Double(FaultWorld.stallWindow + 3)), path: path)
        case .unauthorized: server.inject(.status(401), path: path)
        case .notFound: server.inject(.status(404), path: path)
        // The first attempt of the resume cells ends cleanly (FIN) past 1 MiB: a reset could make the kernel drop
        // bytes already received, leaving less than the 1 MiB that makes a partial file resumable.
        case .ignoredRange:
            server.inject(.truncate(afterBytes: cut(cell.moment)), path: path)
            server.inject(.ignoreRange, path: path)
        case .rangeNotSatisfiable:
            server.inject(.truncate(afterBytes: cut(cell.moment)), path: path)
            server.inject(.rangeNotSatisfiable, path: path)
        case .changedBetweenAttempts:
            // The file changes on the server while the first attempt is cut off: the second must not splice.
            let version = world.mediaVersion
            server.inject(.truncate(afterBytes: cut(cell.moment)), path: path) {
                if cell.moment == .media {
                    server.updateLibrary { $0.changeMediaContent(ofMediaSourceId: version) }
                } else {
                    server.setFile(
                        FaultWorld.newEnclosure, contents: FaultWorld.audio(2, size: FaultWorld.largeSize, version: 1),
                        lastModified: Date(timeIntervalSince1970: 1_700_000_600), contentType: "audio/mpeg")
                }
            }
        case .redirectLoop:
            server.inject(.redirect(location: server.baseURL + path, status: 302), path: path, count: 100)
        case .notJSON:
            server.inject(
                .body(
                    status: 200, contentType: "text/html", bytes: Array("<html><body>Proxy error</body></html>".utf8)),
                path: path)
        case .totalTooHigh: server.inject(.totalRecordCount(10_000), path: path)
        case .totalTooLow: server.inject(.totalRecordCount(150), path: path)
        }
    }

    // MARK: The printed matrix

    static let output = ProcessInfo.processInfo.environment["FAULT_MATRIX_TSV"]

    /// Appends one tab-separated row to `$FAULT_MATRIX_TSV` (one write with O_APPEND, so parallel cells do not mix).
    static func record(_ fields: [String]) {
        guard let output, !output.isEmpty else { return }
        let line = Array((fields.map(oneLine).joined(separator: "\t") + "\n").utf8)
        let fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 }.prefix(160))
    }
}

extension FaultWorld {
    func path(of moment: FaultMatrix.Moment) -> String {
        switch moment {
        case .listing: return listingPath
        case .media: return mediaPath
        case .image: return imagePath
        case .subtitle: return subtitlePath
        case .feed: return FaultWorld.feedPath
        case .enclosure: return FaultWorld.newEnclosure
        }
    }

    func mirrored(_ moment: FaultMatrix.Moment) -> String {
        switch moment {
        case .listing, .feed: return ""
        case .media: return mirroredMedia
        case .image: return mirroredImage
        case .subtitle: return mirroredSubtitle
        case .enclosure: return mirroredEnclosure
        }
    }
}
