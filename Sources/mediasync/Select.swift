import ArgumentParser
import Foundation
import MediaSync

/// `mediasync select`: keep an item offline.
struct Select: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Select a movie, series, season, album, artist, playlist, collection, audiobook, book or library to keep "
            + "offline.")

    @Argument(
        help: ArgumentHelp(
            "What to select: movie, series, season, album, artist (its own albums), playlist, collection, audiobook "
                + "(an audiobook, or the folder of a book in parts), book or library."))
    var kind: Selection.Kind

    @Argument(
        help: ArgumentHelp(
            "The item's id, or its name as the server's search finds it (see `mediasync browse`).",
            valueName: "id-or-name"))
    var id: String

    @Flag(name: .customLong("all-versions"), help: "Keep every version, not only the primary one.")
    var allVersions = false

    @Option(help: "For a series: only this season number (0 for specials).")
    var season: Int?

    @Option(name: .customLong("next-unplayed"), help: "For a series or season: keep only the next N unplayed episodes.")
    var nextUnplayed: Int?

    @Flag(
        name: .customLong("delete-played"),
        help: ArgumentHelp(
            "Played items of this selection leave by themselves (without --delete) once the server has their played "
                + "state and the grace period (AFTER, default 1d) has passed."))
    var deletePlayed = false

    @Argument(help: "With --delete-played: how long after an item was played it leaves (0, 12h, 1d, 2w).")
    var after: String?

    @Option(
        help: ArgumentHelp(
            "Where this selection stands when a budget decides what fits: 1 first (default: after the numbered, "
                + "in the order selected)."))
    var priority: Int?

    @Option(
        help: ArgumentHelp(
            "Keep movies and episodes at this quality: original (default), 1080p, 720p or 480p. Originals that "
                + "already fit are kept as they are; others are the server's transcode (H.264/AAC in MPEG-TS)."))
    var quality: String?

    @Option(name: .customLong("max-bitrate"), help: "A transcode's highest bit rate (3M, 1500k); with no preset.")
    var maxBitrate: String?

    @Option(name: .customLong("video-codec"), help: "A transcode's video codec: h264 (default) or hevc.")
    var videoCodec: String?

    @Option(
        name: .customLong("audio-codec"),
        help: "A transcode's audio codec: aac (default), mp3 or ac3; for tracks aac (default), mp3 or opus.")
    var audioCodec: String?

    @Option(help: "A transcode's container: ts (default: the segments as they come), mp4 or mkv (remuxed by ffmpeg).")
    var container: String?

    @Option(
        name: .customLong("trickplay-width"),
        help: ArgumentHelp(
            "Keep movies' and episodes' trickplay (scrubbing thumbnails, Jellyfin 10.9 and later) at this width, or "
                + "the nearest the server has (default: the server's smallest).",
            valueName: "pixels"))
    var trickplayWidth: Int?

    @Flag(name: .customLong("no-trickplay"), help: "Keep no trickplay thumbnails for this selection.")
    var noTrickplay = false

    @OptionGroup var rootOptions: RootOptions

    /// The quality asked for: nil for the original.
    func chosenQuality() throws -> Quality? {
        let caps = maxBitrate != nil || videoCodec != nil || audioCodec != nil || container != nil
        var chosen: Quality?
        switch quality?.lowercased() {
        case nil, "original"?:
            if quality != nil, caps { throw ValidationError("--quality original takes no caps") }
            guard caps else { return nil }
            guard let maxBitrate else { throw ValidationError("give --max-bitrate (or a --quality preset)") }
            guard let bits = Quality.bitrate(maxBitrate) else {
                throw ValidationError("\(maxBitrate.debugDescription) is not a bit rate (examples: 3M, 1500k)")
            }
            chosen = Quality(maxBitrate: bits)
        case let name?:
            guard let preset = Quality.presets[name] else {
                throw ValidationError("\(name.debugDescription) is not a quality: original, 1080p, 720p or 480p")
            }
            chosen = preset
            if let maxBitrate {
                guard let bits = Quality.bitrate(maxBitrate) else {
                    throw ValidationError("\(maxBitrate.debugDescription) is not a bit rate (examples: 3M, 1500k)")
                }
                chosen?.maxBitrate = bits
                chosen?.preset = nil
            }
        }
        if let videoCodec {
            guard Quality.videoCodecs.contains(videoCodec.lowercased()) else {
                throw ValidationError("--video-codec takes h264 or hevc")
            }
            chosen?.videoCodec = videoCodec.lowercased()
            chosen?.preset = nil
        }
        if let audioCodec {
            guard Quality.audioCodecs.contains(audioCodec.lowercased()) else {
                throw ValidationError("--audio-codec takes aac, mp3 or ac3")
            }
            chosen?.audioCodec = audioCodec.lowercased()
            chosen?.preset = nil
        }
        if let container {
            guard ["ts", "mp4", "mkv"].contains(container.lowercased()) else {
                throw ValidationError("--container takes ts, mp4 or mkv")
            }
            chosen?.container = container.lowercased()
            chosen?.preset = nil
        }
        return chosen
    }

    func validate() throws {
        if kind == .audiobook || kind == .book {
            let caps = quality != nil || maxBitrate != nil || videoCodec != nil || audioCodec != nil || container != nil
            if caps || noTrickplay || trickplayWidth != nil {
                throw ValidationError(
                    "audiobooks and books are kept as their original files: no quality, caps or trickplay options")
            }
        }
        if !Select.trackKinds.contains(kind) && kind != .library {
            _ = try chosenQuality()
        } else if kind == .library, (try? chosenQuality()) == nil, (try? chosenAudioQuality()) == nil {
            // A music library's caps are an audio quality, another library's a video one (known once it is read).
            _ = try chosenQuality()
        }
        if ServerBrowser.isItemId(id) {
            guard SafeName.id(id) != nil else { throw ValidationError("\(id.debugDescription) is not an item id") }
        } else if id.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ValidationError("give the item's id or its name")
        }
        if season != nil && kind != .series { throw ValidationError("--season applies to a series") }
        if noTrickplay || trickplayWidth != nil, Select.trackKinds.contains(kind) {
            throw ValidationError("--trickplay-width and --no-trickplay apply to movies and episodes")
        }
        _ = try trickplayChoice()
        if let nextUnplayed, nextUnplayed < 1 { throw ValidationError("--next-unplayed must be at least 1") }
        if nextUnplayed != nil && kind != .series && kind != .season {
            throw ValidationError("--next-unplayed applies to a series or a season")
        }
        if let after {
            guard deletePlayed else { throw ValidationError("unexpected argument \(after.debugDescription)") }
            guard TimeText.duration(after) != nil else {
                throw ValidationError("\(after.debugDescription) is not a grace period (examples: 0, 12h, 1d, 2w)")
            }
        }
        if let priority, priority < 1 { throw ValidationError("--priority must be at least 1") }
        if Select.trackKinds.contains(kind) {
            _ = try chosenAudioQuality()
        }
    }

    /// Selections of tracks only: their caps are an audio quality.
    static let trackKinds: Set<Selection.Kind> = [.album, .artist, .playlist]

    /// The audio quality asked for tracks: nil for the original files.
    func chosenAudioQuality() throws -> AudioQuality? {
        guard maxBitrate != nil || audioCodec != nil || quality != nil || videoCodec != nil || container != nil else {
            return nil
        }
        guard quality == nil, videoCodec == nil, container == nil else {
            throw ValidationError("tracks take --max-bitrate and --audio-codec (aac, mp3 or opus) only")
        }
        guard let maxBitrate else { throw ValidationError("give --max-bitrate (examples: 128k, 256k)") }
        guard let bits = Quality.bitrate(maxBitrate) else {
            throw ValidationError(
                "\(maxBitrate.debugDescription) is not a bit rate of 64k or more (examples: 128k, 256k)")
        }
        let codec = (audioCodec ?? "aac").lowercased()
        guard AudioQuality.codecs.contains(codec) else {
            throw ValidationError("--audio-codec takes aac, mp3 or opus for tracks")
        }
        return AudioQuality(codec: codec, maxBitrate: bits)
    }

    func run() async throws {
        try await reportingErrors {
            let browser = ServerBrowser(session: try Session.open(config: ConfigDirectory.resolve()))
            let id = ServerBrowser.isItemId(self.id) ? self.id : try await itemId(named: self.id, browser: browser)
            let expected: Set<String> =
                [
                    "movie": ["Movie"], "series": ["Series"], "season": ["Season"], "album": ["MusicAlbum"],
                    "artist": ["MusicArtist"], "playlist": ["Playlist"], "collection": ["BoxSet"],
                    // A book in several parts is a plain `Folder` of `AudioBook`s on Jellyfin.
                    "audiobook": ["AudioBook", "Folder"], "book": ["Book"],
                ][kind.rawValue] ?? []
            let name: String?
            var forTracks = Select.trackKinds.contains(kind)
            if kind == .library {
                let views = try await browser.list(.library)
                guard let view = views.first(where: { $0.id == id }) else {
                    throw SyncError.notFound("no library with id \(id) (see `mediasync browse`)")
                }
                name = view.name
                forTracks = view.collectionType == "music"
            } else {
                let item = try await browser.item(id: id)
                guard expected.contains(item.type ?? "") else {
                    throw SyncError.invalidInput(
                        "\(id) is a \(item.type ?? "thing of unknown type"), not a \(kind.rawValue)")
                }
                name = item.name
            }
            let audio = forTracks ? try chosenAudioQuality() : nil
            let chosen = forTracks ? nil : try chosenQuality()
            if let chosen, chosen.container != "ts", Remuxer.locate() == nil {
                throw SyncError.configuration(
                    "ffmpeg is not installed (Debian: `apt install ffmpeg`): a transcode can only be kept as MPEG-TS "
                        + "(--container ts), which every player reads; nothing was selected")
            }
            let index = try rootOptions.openForReading().index
            try index.select(
                Selection(
                    id: id, kind: kind, allVersions: allVersions, season: season, nextUnplayed: nextUnplayed,
                    name: name, addedAt: ISO8601DateFormatter().string(from: Date()), priority: priority,
                    deletePlayedAfter: deletePlayed ? after.flatMap(TimeText.duration) ?? 86_400 : nil,
                    quality: chosen, audioQuality: audio, trickplay: try trickplayChoice()))
            print("Selected \(kind.rawValue) \(name ?? id). Run `mediasync sync` to download it.")
        }
    }
}

extension Select {
    /// The trickplay width asked for: the server's smallest unless told.
    func trickplayChoice() throws -> TrickplayChoice {
        if noTrickplay {
            guard trickplayWidth == nil else { throw ValidationError("--no-trickplay takes no --trickplay-width") }
            return .none
        }
        guard let trickplayWidth else { return .smallest }
        guard trickplayWidth > 0, trickplayWidth <= 8192 else {
            throw ValidationError("--trickplay-width takes a width in pixels, 1 to 8192")
        }
        return .width(trickplayWidth)
    }
    /// The id of the one item of this kind the server's search finds by `name`; several are listed to choose from
    /// by id, and none is said, both as a usage error (exit 64) that selects nothing.
    func itemId(named name: String, browser: ServerBrowser) async throws -> String {
        let type: ServerBrowser.ItemType =
            switch kind {
            case .movie: .movie
            case .series: .series
            case .season: .season
            case .library: .library
            case .album: .album
            case .artist: .artist
            case .playlist: .playlist
            case .collection: .collection
            case .audiobook: .audiobook
            case .book: .book
            }
        switch try await browser.find(type, named: name) {
        case .one(let item):
            guard SafeName.id(item.id) != nil else {
                throw SyncError.invalidInput(
                    "the server names \(name.debugDescription) by an unsafe id; nothing selected")
            }
            return item.id
        case .none:
            Console.error(
                "mediasync: no \(kind.rawValue) called \(name.debugDescription) on the server "
                    + "(see `mediasync browse --type \(type.rawValue) --search TEXT`)")
            throw ExitCodes.usage
        case .several(let items):
            Console.error(
                "mediasync: \(CountText.of(items.count, kind.rawValue, plural: Select.plural(kind))) match "
                    + "\(name.debugDescription); select one by its id:")
            let rows = items.map { item in
                [item.id, item.type ?? "", item.name ?? "", item.detail]
            }
            for line in TextTable.lines(header: ["ID", "KIND", "NAME", "DETAIL"], rows: rows) {
                Console.error("  " + line)
            }
            throw ExitCodes.usage
        }
    }

    static func plural(_ kind: Selection.Kind) -> String {
        switch kind {
        case .series: return "series"
        case .library: return "libraries"
        default: return kind.rawValue + "s"
        }
    }
}

extension Selection.Kind: ExpressibleByArgument {}

/// `mediasync unselect`: stop keeping an item offline.
struct Unselect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a selection. Its files stay until `mediasync sync --delete`.")

    @Argument(help: "The selected item's id.")
    var id: String

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            guard try rootOptions.openForReading().index.unselect(id: id) else {
                throw SyncError.notFound("\(id) is not selected (see `mediasync selections`)")
            }
            print("Unselected \(id).")
        }
    }
}

/// `mediasync selections`: what is kept offline.
struct Selections: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List what is selected for offline use.")

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @OptionGroup var rootOptions: RootOptions

    func run() async throws {
        try await reportingErrors {
            let selections = try rootOptions.openForReading().index.selections()
            try Table.print(selections, json: json, header: ["ID", "KIND", "NAME", "OPTIONS"]) {
                selections.map { selection in
                    var options: [String] = []
                    if selection.allVersions { options.append("all versions") }
                    if let season = selection.season { options.append("season \(season)") }
                    if let next = selection.nextUnplayed { options.append("next \(next) unplayed") }
                    if let after = selection.deletePlayedAfter {
                        options.append("played leave after \(TimeText.format(duration: after))")
                    }
                    if let priority = selection.priority { options.append("priority \(priority)") }
                    switch selection.trickplay {
                    case .smallest: break
                    case .none: options.append("no trickplay")
                    case .width(let width): options.append("trickplay \(width) px")
                    }
                    if let audio = selection.audioQuality {
                        options.append("tracks \(audio.description)")
                    } else {
                        options.append("quality \(selection.quality?.description ?? "original")")
                    }
                    return [
                        selection.id, selection.kind.rawValue, selection.name ?? "",
                        options.joined(separator: ", "),
                    ]
                }
            }
        }
    }
}
