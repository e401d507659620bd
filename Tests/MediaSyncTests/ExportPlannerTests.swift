import Foundation
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

@Suite struct ExportPlannerTests {
    static func target(_ path: String, key: String, identity: String = "id1", size: Int64 = 10, scope: String = "media")
        -> ExportTarget
    {
        ExportTarget(
            path: path, key: key, scope: scope,
            content: .file(ExportSource.File(key: key, path: "Downloads/\(key)", size: size, identity: identity)))
    }

    static func entry(key: String, identity: String = "id1", size: Int64 = 10, scope: String = "media")
        -> ExportManifest.Entry
    {
        ExportManifest.Entry(key: key, source: "Downloads/\(key)", identity: identity, size: size, scope: scope)
    }

    static func plan(
        _ targets: [ExportTarget], manifest: [String: ExportManifest.Entry] = [:],
        facts: [String: DestinationFact] = [:],
        limit: Int64? = nil, scopes: Set<String> = ["media", "podcasts"], delete: Bool = false, maxDelete: Int? = nil
    ) -> ExportPlan {
        ExportPlanner.plan(
            targets: targets, manifest: ExportManifest(files: manifest), facts: facts, maximumFileSize: limit,
            scopes: scopes,
            delete: delete, maxDelete: maxDelete)
    }

    static func actions(_ plan: ExportPlan) -> [String] {
        plan.steps.map { step in
            switch step {
            case .copy(let target, let replacing): return "\(replacing ? "replace" : "copy") \(target.path)"
            case .move(let from, let target): return "move \(from) -> \(target.path)"
            case .delete(let path, let reason): return "delete \(path) (\(reason))"
            }
        }
    }

    /// The runs the copy workers take: consecutive files of one folder, never more than the limit.
    @Test(arguments: [
        ([String](), 3, [Range<Int>]()),
        (["a/1"], 3, [0..<1]),
        (["a/1", "a/2", "b/1", "a/3"], 3, [0..<2, 2..<3, 3..<4]),
        (["a/1", "a/2", "a/3", "a/4", "a/5"], 2, [0..<2, 2..<4, 4..<5]),
        (["top", "other", "a/b/1", "a/b/2", "a/1"], 8, [0..<2, 2..<4, 4..<5]),
    ])
    func copiesGoInRunsOfOneFolder(paths: [String], limit: Int, expected: [Range<Int>]) {
        #expect(ExportExecutor.folderRuns(paths, limit: limit) == expected)
    }

    @Test func newFilesAreCopiedAndUnchangedOnesLeftAlone() {
        let a = Self.target("A/a.mkv", key: "k1")
        let b = Self.target("B/b.mkv", key: "k2")
        let plan = Self.plan([a, b], manifest: ["A/a.mkv": Self.entry(key: "k1")], facts: ["A/a.mkv": .file(size: 10)])
        #expect(Self.actions(plan) == ["copy B/b.mkv"])
        #expect(plan.unchanged == ["A/a.mkv"])
    }

    @Test func aReplacedSourceIsExportedAgainOverTheExportsOwnFile() {
        let a = Self.target("A/a.mkv", key: "k1", identity: "id2", size: 12)
        let plan = Self.plan([a], manifest: ["A/a.mkv": Self.entry(key: "k1")], facts: ["A/a.mkv": .file(size: 10)])
        #expect(Self.actions(plan) == ["replace A/a.mkv"])
    }

    @Test func aUsersFileAtATargetNameIsNeverTouched() {
        let a = Self.target("A/a.mkv", key: "k1")
        let plan = Self.plan([a], facts: ["A/a.mkv": .file(size: 99)])
        #expect(plan.steps.isEmpty)
        #expect(plan.skipped.map(\.path) == ["A/a.mkv"])
        let folder = Self.plan([a], facts: ["A/a.mkv": .other])
        #expect(folder.steps.isEmpty && folder.skipped.count == 1)
    }

    @Test func playlistsComeLastAndLeaveOutWhatIsNotExported() {
        let a = Self.target("S/A 1.mkv", key: "k1")
        let b = Self.target("S/A 2.mkv", key: "k2", size: 5_000_000_000)
        let c = Self.target("S/A 3.mkv", key: "k3")
        let list = ExportPlaylist(
            ["k1", "k2", "k3"].enumerated().map {
                ExportPlaylist.Entry(
                    title: "E\($0.offset + 1)", seconds: nil, key: $0.element, path: "A \($0.offset + 1).mkv")
            })
        let playlist = ExportTarget(path: "S/0 list.m3u8", key: "playlist:s", scope: "media", content: .playlist(list))
        // k2 is too large for FAT32 and a file of the user's is at k3's name: the playlist lists k1 only, and is
        // planned after the files although its name sorts first.
        let plan = Self.plan(
            [playlist, a, b, c], facts: ["S/A 3.mkv": .file(size: 1)], limit: ExportPlanner.fat32Limit)
        #expect(Self.actions(plan) == ["copy S/A 1.mkv", "copy S/0 list.m3u8"])
        guard case .copy(let planned, _) = plan.steps.last, case .playlist(let written) = planned.content else {
            Issue.record("no playlist step")
            return
        }
        #expect(written.entries.map(\.key) == ["k1"])
        #expect(String(decoding: written.bytes, as: UTF8.self) == "#EXTM3U\n#EXTINF:-1,E1\nA 1.mkv\n")
        // Its identity is that of what is written: the next plan with the same facts finds it unchanged.
        let manifest = [
            "S/A 1.mkv": Self.entry(key: "k1"),
            "S/0 list.m3u8": ExportManifest.Entry(
                key: "playlist:s", source: nil, identity: planned.identity, size: planned.size, scope: "media"),
        ]
        let again = Self.plan(
            [playlist, a, b, c], manifest: manifest,
            facts: [
                "S/A 1.mkv": .file(size: 10), "S/A 3.mkv": .file(size: 1), "S/0 list.m3u8": .file(size: planned.size),
            ],
            limit: ExportPlanner.fat32Limit)
        #expect(again.steps.isEmpty)
    }

    @Test func aPlaylistNamesTheFinalPathsOfItsFiles() {
        // Two titles alike in their first 300 characters: their names are cut to the same 255 bytes, the last
        // safety net gives the second a disambiguator, and the playlist names that file.
        let long = String(repeating: "x", count: 300)
        let file = { (key: String) in ExportSource.File(key: key, path: "Downloads/\(key)", size: 1, identity: "i") }
        let source = ExportSource(podcasts: [
            ExportSource.Podcast(
                id: "p", title: "Show",
                episodes: [
                    ExportSource.PodcastEpisode(id: "e1", title: long + "A", published: "2025-01-01", file: file("k1")),
                    ExportSource.PodcastEpisode(id: "e2", title: long + "B", published: "2025-01-01", file: file("k2")),
                ])
        ])
        let targets = ExportLayout.targets(source, scope: nil, playlists: true)
        let files = targets.filter { !$0.isPlaylist }.map(\.path)
        #expect(Set(files).count == 2)
        #expect(files.filter { $0.hasSuffix("].bin") }.count == 1, "one of the two is told apart")
        guard case .playlist(let list) = targets.first(where: \.isPlaylist)?.content else {
            Issue.record("no playlist")
            return
        }
        #expect(list.entries.map { "Podcasts/Show/" + $0.path }.sorted() == files.sorted())
    }

    /// Runs `plan` with a real executor from an empty mirror folder to an empty destination folder, which `prepare`
    /// fills first (given the mirror's and the destination's folders); `check` sees the result and the destination.
    static func execute(
        _ plan: (_ mirror: TemporaryDirectory, _ destination: TemporaryDirectory) throws -> ExportPlan,
        links: Bool = false, workers: Int = 2,
        check: (ExportResult, TemporaryDirectory) throws -> Void
    ) throws {
        let mirror = try TemporaryDirectory()
        defer { mirror.remove() }
        let destination = try TemporaryDirectory()
        defer { destination.remove() }
        let made = try plan(mirror, destination)
        let executor = ExportExecutor(
            destination: destination.path, root: MirrorRoot(path: mirror.path), allowLinks: links, workers: workers,
            manifest: made.manifest, result: ExportResult(destination: destination.path, fileSystem: nil, dryRun: false)
        )
        try check(executor.run(made, progress: nil, events: nil), destination)
    }

    @Test func aRenamedFilesOldNameStaysWhenItsNewNameWasNotWritten() throws {
        try Self.execute { _, destination in
            // The export's own file at the old name; its source changed and got a new name, so the plan copies it
            // there and then deletes the old name. The copy fails (the source went from the mirror meanwhile).
            try FileManager.default.createDirectory(atPath: destination.file("Old"), withIntermediateDirectories: true)
            #expect(
                FileManager.default.createFile(
                    atPath: destination.file("Old/a.mkv"), contents: Data(repeating: 1, count: 10)))
            let plan = Self.plan(
                [Self.target("New/a.mkv", key: "k1", identity: "id2")], manifest: ["Old/a.mkv": Self.entry(key: "k1")],
                facts: ["Old/a.mkv": .file(size: 10)])
            #expect(Self.actions(plan) == ["copy New/a.mkv", "delete Old/a.mkv (renamed)"])
            return plan
        } check: { result, destination in
            #expect(result.failed.map(\.path) == ["New/a.mkv"])
            #expect(result.deleted.isEmpty)
            #expect(
                FileManager.default.contents(atPath: destination.file("Old/a.mkv")) == Data(repeating: 1, count: 10))
        }
    }

    @Test(arguments: [false, true])
    func aFileThatAppearsAfterThePlanIsLeftAlone(links: Bool) throws {
        try Self.execute(
            { mirror, destination in
                try FileManager.default.createDirectory(
                    atPath: mirror.file("Downloads"), withIntermediateDirectories: true)
                #expect(
                    FileManager.default.createFile(
                        atPath: mirror.file("Downloads/k1"), contents: Data(repeating: 7, count: 10)))
                let plan = Self.plan([Self.target("A/a.mkv", key: "k1")])
                #expect(Self.actions(plan) == ["copy A/a.mkv"])
                // The plan saw the name free; by the time the executor gets there the user put a file of their own
                // at it.
                try FileManager.default.createDirectory(
                    atPath: destination.file("A"), withIntermediateDirectories: true)
                #expect(
                    FileManager.default.createFile(atPath: destination.file("A/a.mkv"), contents: Data("mine".utf8)))
                return plan
            }, links: links, workers: 1,
            check: { result, destination in
                #expect(result.exported.isEmpty)
                #expect(result.skipped.map(\.path) == ["A/a.mkv"])
                #expect(FileManager.default.contents(atPath: destination.file("A/a.mkv")) == Data("mine".utf8))
                #expect(try FileManager.default.contentsOfDirectory(atPath: destination.file("A")) == ["a.mkv"])
                let manifest = try ExportManifest(
                    parsing: [UInt8](
                        FileManager.default.contents(atPath: destination.file(ExportManifest.fileName)) ?? Data()))
                #expect(manifest.files.isEmpty, "the user's file is not recorded as the export's")
            })
    }

    @Test func anExportedFileTheUserChangedIsForgottenNotOverwritten() {
        // The manifest's file was replaced by one of another size: the export no longer owns it.
        let a = Self.target("A/a.mkv", key: "k1")
        let plan = Self.plan([a], manifest: ["A/a.mkv": Self.entry(key: "k1")], facts: ["A/a.mkv": .file(size: 5)])
        #expect(plan.steps.isEmpty)
        #expect(plan.forgotten.map(\.path) == ["A/a.mkv"])
        #expect(plan.skipped.map(\.path) == ["A/a.mkv"])
        #expect(plan.manifest.files.isEmpty)
    }

    @Test func aFileRemovedFromTheDestinationIsExportedAgain() {
        let a = Self.target("A/a.mkv", key: "k1")
        let plan = Self.plan([a], manifest: ["A/a.mkv": Self.entry(key: "k1")], facts: [:])
        #expect(Self.actions(plan) == ["copy A/a.mkv"])
        #expect(plan.forgotten.isEmpty)
    }

    @Test func aRenamedTargetIsMovedNotCopied() {
        let a = Self.target("New/a.mkv", key: "k1")
        let plan = Self.plan([a], manifest: ["Old/a.mkv": Self.entry(key: "k1")], facts: ["Old/a.mkv": .file(size: 10)])
        #expect(Self.actions(plan) == ["move Old/a.mkv -> New/a.mkv"])
        #expect(plan.leftover.isEmpty)
        // A changed source under a new name: copied, and the old name removed once the new one is placed.
        let changed = Self.target("New/a.mkv", key: "k1", identity: "id2")
        let replan = Self.plan(
            [changed], manifest: ["Old/a.mkv": Self.entry(key: "k1")], facts: ["Old/a.mkv": .file(size: 10)])
        #expect(Self.actions(replan) == ["copy New/a.mkv", "delete Old/a.mkv (renamed)"])
    }

    @Test func leftoversAreReportedAndDeletedOnlyWithDeleteWithinTheGuard() {
        let manifest = [
            "A/a.mkv": Self.entry(key: "gone1"), "B/b.mkv": Self.entry(key: "gone2"), "C/c.mkv": Self.entry(key: "k3"),
        ]
        let facts: [String: DestinationFact] = [
            "A/a.mkv": .file(size: 10), "B/b.mkv": .file(size: 10), "C/c.mkv": .file(size: 10),
        ]
        let c = Self.target("C/c.mkv", key: "k3")
        let kept = Self.plan([c], manifest: manifest, facts: facts)
        #expect(kept.steps.isEmpty)
        #expect(kept.leftover == ["A/a.mkv", "B/b.mkv"])
        let guarded = Self.plan([c], manifest: manifest, facts: facts, delete: true, maxDelete: 1)
        #expect(guarded.steps.isEmpty)
        #expect(guarded.deletionAborted?.contains("more than --max-delete 1") == true)
        let deleted = Self.plan([c], manifest: manifest, facts: facts, delete: true, maxDelete: 2)
        #expect(
            Self.actions(deleted) == [
                "delete A/a.mkv (its source left the mirror)", "delete B/b.mkv (its source left the mirror)",
            ])
    }

    @Test func otherScopesAreLeftAsTheyAre() {
        let manifest = ["Podcasts/P/e.mp3": Self.entry(key: "podcast:p:e", scope: "podcasts")]
        let plan = Self.plan(
            [], manifest: manifest, facts: ["Podcasts/P/e.mp3": .file(size: 10)], scopes: ["media"], delete: true)
        #expect(plan.steps.isEmpty && plan.leftover.isEmpty)
        #expect(plan.manifest.files.count == 1)
    }

    @Test func filesOverFourGiBAreSkippedOnFAT32() {
        let big = Self.target("A/big.mkv", key: "k1", size: ExportPlanner.fat32Limit + 1)
        let edge = Self.target("A/edge.mkv", key: "k2", size: ExportPlanner.fat32Limit)
        let plan = Self.plan([big, edge], limit: ExportPlanner.fat32Limit)
        #expect(Self.actions(plan) == ["copy A/edge.mkv"])
        #expect(plan.skipped.map(\.path) == ["A/big.mkv"])
        #expect(plan.skipped.first?.reason.contains("FAT32") == true)
        #expect(Self.actions(Self.plan([big, edge])) == ["copy A/big.mkv", "copy A/edge.mkv"])
    }

    @Test func theJournalOfAKilledRunCountsOnlyFilesThatReachedTheirName() {
        var manifest = ExportManifest(files: ["old.mkv": Self.entry(key: "k0")])
        let lines = [
            ExportManifest.JournalLine(op: "tmp", path: "A/.mediasync-export-1.tmp"),
            ExportManifest.JournalLine(op: "put", path: "A/a.mkv", entry: Self.entry(key: "k1")),
            ExportManifest.JournalLine(op: "tmp", path: "A/.mediasync-export-2.tmp"),
            ExportManifest.JournalLine(op: "put", path: "A/b.mkv", entry: Self.entry(key: "k2")),
            ExportManifest.JournalLine(op: "del", path: "old.mkv"),
        ]
        let temporaries = manifest.replay(lines) { $0 == "A/a.mkv" ? 10 : nil }
        #expect(temporaries == ["A/.mediasync-export-1.tmp", "A/.mediasync-export-2.tmp"])
        #expect(manifest.files.keys.sorted() == ["A/a.mkv"])
        let text = lines.compactMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
            .joined(separator: "\n")
        // A torn last line is ignored.
        #expect(ExportManifest.journalLines(Data((text + "\n{\"op\":\"pu").utf8)).count == 5)
    }
}

@Suite struct ExportJournalTextTests {
    @Test func journalLinesWrittenByHandDecodeToTheSameValues() throws {
        let lines = [
            ExportManifest.JournalLine(op: "tmp", path: "A/.mediasync-export-1.tmp"),
            ExportManifest.JournalLine(
                op: "put", path: "Movies/Q\"uote\\d \u{1}\n東 ✨.mkv",
                entry: ExportManifest.Entry(
                    key: "media:a:b", source: "Downloads/a/a-b.mkv", identity: "1:2:3:4", size: 42, scope: "media")),
            ExportManifest.JournalLine(
                op: "put", path: "P/x.m3u8",
                entry: ExportManifest.Entry(
                    key: "playlist:p", source: nil, identity: "sha1:00", size: 7, scope: "podcasts")),
            ExportManifest.JournalLine(op: "del", path: "old"),
        ]
        let text = lines.flatMap(ExportManifest.journalText)
        #expect(ExportManifest.journalLines(Data(text)) == lines)
    }
}
