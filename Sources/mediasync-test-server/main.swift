import Foundation
import MediaSyncTestServer

#if canImport(Glibc)
    import Glibc
#endif

/// Command-line options of `mediasync-test-server`.
struct Options {
    var port = 0
    var fixtures = "./Fixtures/server"
    var movies = 2
    var series = 1
    var mediaSize = 64 * 1024
    var filesDirectory: String?
    var throttle: Int?
    var mediaSizes: [Int] = []
    var requestLog: String?
    var control = false
    var mediaSourceCost = 0.0
    var profile = JellyfinProfile.newest
    var musicArtists = 0
    var albumsPerArtist = 2
    var discsPerAlbum = 1
    var tracksPerAlbum = 6
    var trackSize: Int?
    var musicExtras = true
    var richMedia = false
    var books = false
}

let usage = """
    usage: mediasync-test-server [--port N] [--fixtures DIR] [--movies N] [--series N] [--media-size BYTES] [--files DIR]
                                 [--media-sizes BYTES,BYTES,...] [--throttle BYTES-PER-SECOND] [--request-log FILE] [--control]
                                 [--jellyfin 10.8|10.9|10.10|10.11] [--media-source-cost SECONDS]
                                 [--music-artists N] [--albums-per-artist N] [--discs-per-album N] [--tracks-per-album N]
                                 [--track-size BYTES] [--no-music-extras] [--rich-media] [--books]

      --media-sizes      sizes given to the media sources in library order, repeated as needed (mixed sizes)
      --jellyfin         answer like this Jellyfin version (routes, methods, Version, errors, listing order;
                         default 10.11)
      --media-source-cost  seconds each item's media sources cost to build in a listing (a 10.11 server's cost)
      --music-artists    folder artists with albums (0, the default: no music, playlists or collections); with
                         N > 0 the library also has a Music library, a playlists folder with one playlist and a
                         Collections library with one box set, a guest artist and an artist without albums
      --albums-per-artist  albums of each artist (default 2)
      --discs-per-album  discs of each album (default 1)
      --tracks-per-album tracks of each disc (default 6); the library has artists x albums x discs x tracks tracks
      --track-size       base size of a track's file (default: --media-size)
      --no-music-extras  only artists, albums and tracks (no two-disc album, guest, lyrics, playlist, box set)
      --rich-media       every video with 3 chapter images, trickplay at 320 px (a thumbnail every 10 s of its
                         runtime, 10 x 10 tiles) and an intro and an outro segment
      --books            a Books library: an audiobook of one .m4b, a book in three parts (a folder of audiobooks)
                         and an .epub, a .cbz and a .pdf book
      --throttle         cap each response body at this rate (0: unlimited)
      --request-log      append one JSON line per finished response: method, path, range, status, body bytes
                         planned and sent, start and end on CLOCK_MONOTONIC (nanoseconds)
      --control          serve /__control/stats (in flight, responses, body bytes sent, generation),
                         /__control/throttle?bytes=N and /__control/change-media?count=N (new bytes and ETag
                         for the next N media sources, round-robin)
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n" + usage + "\n").utf8))
    exit(2)
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var index = 0
    func value(_ name: String) -> String {
        index += 1
        guard index < arguments.count else { fail("missing value for \(name)") }
        return arguments[index]
    }
    func integer(_ name: String) -> Int {
        let text = value(name)
        guard let number = Int(text), number >= 0 else { fail("invalid value for \(name): \(text)") }
        return number
    }
    while index < arguments.count {
        let argument = arguments[index]
        switch argument {
        case "--port": options.port = integer(argument)
        case "--fixtures": options.fixtures = value(argument)
        case "--movies": options.movies = integer(argument)
        case "--series": options.series = integer(argument)
        case "--media-size": options.mediaSize = integer(argument)
        case "--files": options.filesDirectory = value(argument)
        case "--throttle": options.throttle = integer(argument)
        case "--request-log": options.requestLog = value(argument)
        case "--control": options.control = true
        case "--media-source-cost":
            let text = value(argument)
            guard let seconds = Double(text), seconds >= 0, seconds < 10 else {
                fail("invalid value for \(argument): \(text)")
            }
            options.mediaSourceCost = seconds
        case "--jellyfin":
            let name = value(argument)
            guard let profile = JellyfinProfile(rawValue: name) else { fail("invalid value for --jellyfin: \(name)") }
            options.profile = profile
        case "--music-artists": options.musicArtists = integer(argument)
        case "--albums-per-artist": options.albumsPerArtist = integer(argument)
        case "--discs-per-album": options.discsPerAlbum = integer(argument)
        case "--tracks-per-album": options.tracksPerAlbum = integer(argument)
        case "--track-size": options.trackSize = integer(argument)
        case "--no-music-extras": options.musicExtras = false
        case "--rich-media": options.richMedia = true
        case "--books": options.books = true
        case "--media-sizes":
            let text = value(argument)
            let sizes = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? -1) >= 0 }) else {
                fail("invalid value for --media-sizes: \(text)")
            }
            options.mediaSizes = sizes.compactMap { $0 }
        case "-h", "--help":
            print(usage)
            exit(0)
        default: fail("unknown argument: \(argument)")
        }
        index += 1
    }
    return options
}

func contentType(for path: String) -> String {
    switch (path as NSString).pathExtension.lowercased() {
    case "mkv": return "video/x-matroska"
    case "mp4", "m4v": return "video/mp4"
    case "mp3": return "audio/mpeg"
    case "m4a": return "audio/mp4"
    case "json": return "application/json; charset=utf-8"
    case "xml", "rss": return "application/rss+xml"
    case "txt", "srt": return "text/plain; charset=utf-8"
    case "png": return "image/png"
    case "jpg", "jpeg": return "image/jpeg"
    default: return "application/octet-stream"
    }
}

/// Serves every regular file under `directory` at `/files/<relative path>`; returns how many.
func serveFiles(from directory: String, on server: TestServer) -> Int {
    let root = URL(fileURLWithPath: directory).standardizedFileURL
    let manager = FileManager.default
    guard
        let enumerator = manager.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey, .contentModificationDateKey])
    else {
        fail("cannot read directory \(directory)")
    }
    var count = 0
    for case let url as URL in enumerator {
        let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .contentModificationDateKey])
        guard values?.isRegularFile == true, let data = manager.contents(atPath: url.path) else { continue }
        let full = url.standardizedFileURL.path
        guard full.hasPrefix(root.path) else { continue }
        let relative = full.dropFirst(root.path.count).drop(while: { $0 == "/" })
        server.setFile(
            "/files/\(relative)", contents: Array(data),
            lastModified: values?.contentModificationDate ?? Date(timeIntervalSince1970: 1_700_000_000),
            contentType: contentType(for: full))
        count += 1
    }
    return count
}

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
var library = TestLibrary(movies: options.movies, series: options.series, mediaSize: options.mediaSize)
if options.musicArtists > 0 {
    library.addMusic(
        TestLibrary.MusicSpec(
            artists: options.musicArtists, albumsPerArtist: options.albumsPerArtist,
            discsPerAlbum: options.discsPerAlbum, tracksPerDisc: options.tracksPerAlbum,
            mediaSize: options.trackSize ?? options.mediaSize, extras: options.musicExtras))
}
if options.richMedia { library.addRichMedia(chapters: 3, trickplayWidths: [320], thumbnailCount: nil) }
if options.books { library.addBooks() }
if !options.mediaSizes.isEmpty {
    for (number, source) in library.allMediaSources.enumerated() {
        let size = options.mediaSizes[number % options.mediaSizes.count]
        library.updateMediaSource(source.id) { $0.size = size }
    }
}
let fixturesURL = URL(fileURLWithPath: options.fixtures)
var isDirectory: ObjCBool = false
let fixtures =
    FileManager.default.fileExists(atPath: fixturesURL.path, isDirectory: &isDirectory) && isDirectory.boolValue
    ? fixturesURL : nil
if fixtures == nil {
    FileHandle.standardError.write(
        Data("warning: fixtures directory \(options.fixtures) not found; using built-in shapes\n".utf8))
}

let server: TestServer
do {
    server = try TestServer(library: library, fixturesDirectory: fixtures, port: options.port)
    server.profile = options.profile
} catch {
    fail("cannot start server: \(error)")
}
if let directory = options.filesDirectory {
    let count = serveFiles(from: directory, on: server)
    FileHandle.standardError.write(Data("serving \(count) file(s) from \(directory) at /files/\n".utf8))
}
if let throttle = options.throttle, throttle > 0 {
    server.setThrottle(bytesPerSecond: throttle)
}
if let path = options.requestLog {
    guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
    else {
        fail("cannot write the request log \(path)")
    }
    let writeLock = NSLock()
    server.observeResponses { response in
        writeLock.lock()
        handle.write(Data((response.jsonLine + "\n").utf8))
        writeLock.unlock()
    }
}
if options.control {
    installControl(on: server)
}
server.counters.mediaSourceCost = options.mediaSourceCost

let stop = DispatchSemaphore(value: 0)
var signalSources: [DispatchSourceSignal] = []
for signalNumber in [SIGINT, SIGTERM] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
    source.setEventHandler { stop.signal() }
    source.resume()
    signalSources.append(source)
}

FileHandle.standardOutput.write(Data("listening on \(server.baseURL)\n".utf8))
FileHandle.standardError.write(
    Data("user \(library.userName)/\(library.password), token \(library.accessToken), api key \(library.apiKey)\n".utf8)
)

stop.wait()
server.shutdown()
exit(0)
