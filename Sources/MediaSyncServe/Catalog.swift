import Foundation
import MediaSyncCore
import MediaSyncHTTP
import MediaSyncJSON
import MediaSyncMirror
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A file the mirror holds, as `serve` answers with it: found by an item id in the index, never by a path taken
/// from a request.
public struct HeldFile: Sendable, Equatable {
    /// The root's path and a slash, shared by every file a catalog holds under it, and how a file's stored text
    /// makes its path under the root.
    final class Base: Sendable {
        let prefix: String
        /// Nil: the stored text is the path under the root. Else the parts of the path around each place the stored
        /// text (an item's id) stands in it: `Downloads/<id>/<id>-<id>.mkv` is `["Downloads/", "/", "-", ".mkv"]`,
        /// shared by every file laid out so, which then keeps only its item's id, not a path of its own.
        let around: [String]?

        init(root: String) {
            prefix = root + "/"
            around = nil
        }

        init(prefix: String, around: [String]) {
            self.prefix = prefix
            self.around = around
        }

        func relative(_ stored: String) -> String { around?.joined(separator: stored) ?? stored }
    }

    /// The root (nil: `stored` is the whole path).
    private var base: Base?
    /// The path under ``base`` as the index records it (the one copy the index's row gave), or the item id it is
    /// made of, or the whole path: a catalog of 100,000 movies held their absolute paths, made again for each file,
    /// in 35 MB.
    private var stored: String

    /// The absolute path (under the root), joined when asked for (a file is opened by it).
    public var path: String {
        get { base.map { $0.prefix + $0.relative(stored) } ?? stored }
        set {
            base = nil
            stored = newValue
        }
    }
    public var size: Int64
    /// The modification time, whole seconds since 1970 (`Last-Modified`, the `ETag`).
    public var modified: Int64

    public init(path: String, size: Int64, modified: Int64) {
        self.stored = path
        self.size = size
        self.modified = modified
    }

    /// A file at `relative` under the root `base` stands for.
    init(base: Base, relative: String, size: Int64, modified: Int64) {
        self.base = base
        self.stored = relative
        self.size = size
        self.modified = modified
    }

    /// The path relative to the root, when the file was made so (the index's path).
    var relativePath: String? { base?.relative(stored) }

    public static func == (left: HeldFile, right: HeldFile) -> Bool {
        left.size == right.size && left.modified == right.modified
            && (left.base === right.base ? left.stored == right.stored : left.path == right.path)
    }

    /// A strong validator of these bytes (size and modification time, as ASP.NET's `PhysicalFile` makes its own).
    public var etag: String { "\"\(String(size, radix: 16))-\(String(modified, radix: 16))\"" }
}

/// An external subtitle held beside a version's media.
public struct HeldSubtitle: Sendable, Equatable {
    public var index: Int
    public var language: String
    public var forced: Bool
    public var format: String
    public var file: HeldFile

    public init(index: Int, language: String, forced: Bool, format: String, file: HeldFile) {
        self.index = index
        self.language = language
        self.forced = forced
        self.format = format
        self.file = file
    }
}

/// One version (media source) of a playable item, as held.
public struct HeldVersion: Sendable, Equatable {
    public var id: String
    public var container: String
    public var file: HeldFile
    public var subtitles: [HeldSubtitle]

    /// What most versions have none of, kept apart (nil when all are unset): a catalog holds a version per file.
    private struct More: Sendable, Equatable {
        var transcodeCodec: String?
        var transcodeBitrate: Int64?
        var trickplay: [Int: [Int: HeldFile]] = [:]
        var segments: HeldFile?
    }

    private final class MoreBox: Sendable, Equatable {
        let values: More

        init(_ values: More) { self.values = values }

        static func == (left: MoreBox, right: MoreBox) -> Bool { left === right || left.values == right.values }
    }

    private var more: MoreBox?

    private mutating func change(_ change: (inout More) -> Void) {
        var values = more?.values ?? More()
        change(&values)
        more = values == More() ? nil : MoreBox(values)
    }

    /// For a track held as the server's transcode (`mediasync select … --quality`): the codec and the highest bit
    /// rate asked for (the upstream `MediaStreams` describe the original file, not this one). Nil for an original.
    public var transcodeCodec: String? {
        get { more?.values.transcodeCodec }
        set { change { $0.transcodeCodec = newValue } }
    }
    public var transcodeBitrate: Int64? {
        get { more?.values.transcodeBitrate }
        set { change { $0.transcodeBitrate = newValue } }
    }
    /// Its trickplay tiles as held: width → tile index → file (its size as recorded; looked at when served).
    public var trickplay: [Int: [Int: HeldFile]] {
        get { more?.values.trickplay ?? [:] }
        set { change { $0.trickplay = newValue } }
    }
    /// Its media segments as the server answered them (`MediaSegmentDto` list), when held.
    public var segments: HeldFile? {
        get { more?.values.segments }
        set { change { $0.segments = newValue } }
    }

    public init(
        id: String, container: String, file: HeldFile, subtitles: [HeldSubtitle], transcodeCodec: String? = nil,
        transcodeBitrate: Int64? = nil
    ) {
        self.id = id
        self.container = container
        self.file = file
        self.subtitles = subtitles
        if transcodeCodec != nil || transcodeBitrate != nil {
            more = MoreBox(More(transcodeCodec: transcodeCodec, transcodeBitrate: transcodeBitrate))
        }
    }
}

/// One item `serve` lists: the upstream server's object (ids, names and fields as the home server gave them) and
/// what the mirror holds of it.
public struct CatalogItem: Sendable, Equatable {
    /// The stored values, shared by copies until one of them changes: listings copy items by the thousand, and a
    /// copy is then one reference count, not one per member.
    struct Fields: Sendable, Equatable {
        var id: String
        var type: String
        var name: String
        var sortName: String
        var parentId: String?
        var viewId: String?
        var dateCreated: String?
        var premiereDate: String?
        var runTimeTicks: Int64?
        /// The upstream object as compact JSON bytes (``PackedJSON``, its common names packed): first an object of the
        /// members requests read one by one (``CatalogItem/lookupKeys``), then one of the rest, each left out when
        /// empty. A parsed object takes three to
        /// four times the memory of its bytes (100,000 movies' parsed members held 59 MB), and only an answer that
        /// sends the item, or a filter on one of them, reads them.
        var encoded: [UInt8]
        /// Where the rest's object starts in ``encoded``.
        var restStart: Int32
        var isFolder: Bool
        var versions: [HeldVersion]
        var images: [String: HeldFile]
        /// What most items have none of (a movie none): kept apart, nil when all are unset.
        var more: MoreBox?
    }

    /// The values most items leave unset, and those most leave at their default.
    struct More: Sendable, Equatable {
        var seriesId: String?
        var seasonId: String?
        var indexNumber: Int?
        var parentIndexNumber: Int?
        /// What the upstream `UserData` says of the item's played state, read once: filters and sorts on it read it
        /// for every item of a library, on every page.
        var upstreamState = UserState()
        /// The upstream `MediaType`, when it is a string (the `MediaTypes` filter reads it for every item).
        var upstreamMediaType: String?
        /// Nil when it is the item's id.
        var markId: String?
        var lyrics: HeldFile?
    }

    final class MoreBox: Sendable, Equatable {
        let values: More

        init(_ values: More) { self.values = values }

        static func == (left: MoreBox, right: MoreBox) -> Bool { left === right || left.values == right.values }
    }

    /// The values kept apart, as set.
    private var more: More { box.fields.more?.values ?? More() }

    private mutating func change(_ change: (inout More) -> Void) {
        makeUnique()
        var values = more
        change(&values)
        box.fields.more = values == More() ? nil : MoreBox(values)
    }

    private final class Box: @unchecked Sendable {
        // Changed only through `CatalogItem`'s accessors, and only while this item alone holds the box.
        var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    /// The identity of the stored values: the same for copies of an item no one changed.
    var identity: ObjectIdentifier { ObjectIdentifier(box) }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
    }

    public static func == (left: CatalogItem, right: CatalogItem) -> Bool {
        left.box === right.box || left.box.fields == right.box.fields
    }

    public var id: String {
        get { box.fields.id }
        set {
            // The mark id kept unset is the id: an item given another id keeps the one it had.
            let old = box.fields.id
            if more.markId == nil, newValue != old { change { $0.markId = old } }
            // An upstream `Id` kept as the id's code keeps the old id.
            let raw = box.fields.encoded.contains(PackedJSON.fieldMark) ? self.raw : nil
            makeUnique()
            box.fields.id = newValue
            if let raw { self.raw = raw }
        }
    }
    /// Jellyfin's `Type`: `CollectionFolder`, `UserView`, `Movie`, `MusicVideo`, `Video`, `Series`, `Season`,
    /// `Episode`, `MusicAlbum`, `Audio`, `MusicArtist`, `Playlist`, `BoxSet`, `AudioBook`, `Folder` (a book in
    /// parts), `Book`.
    public var type: String {
        get { box.fields.type }
        _modify {
            makeUnique()
            yield &box.fields.type
        }
    }
    public var name: String {
        get { box.fields.name }
        _modify {
            makeUnique()
            yield &box.fields.name
        }
    }
    /// For sorting: `SortName` as the server gave it, else the name; lowercased.
    public var sortName: String {
        get { box.fields.sortName }
        _modify {
            makeUnique()
            yield &box.fields.sortName
        }
    }
    /// The parent in `serve`'s tree: a view for a movie, series, podcast, album, playlist or box set; the series for a
    /// season; the season for an episode; the podcast for a podcast episode; the album for a track (the music view
    /// for a track without one); nil for a view and for an artist (see ``Catalog/init(views:items:entries:problems:)``).
    public var parentId: String? {
        get { box.fields.parentId }
        _modify {
            makeUnique()
            yield &box.fields.parentId
        }
    }
    /// The view (collection folder) the item is in.
    public var viewId: String? {
        get { box.fields.viewId }
        _modify {
            makeUnique()
            yield &box.fields.viewId
        }
    }
    public var seriesId: String? {
        get { more.seriesId }
        set { change { $0.seriesId = newValue } }
    }
    public var seasonId: String? {
        get { more.seasonId }
        set { change { $0.seasonId = newValue } }
    }
    public var indexNumber: Int? {
        get { more.indexNumber }
        set { change { $0.indexNumber = newValue } }
    }
    public var parentIndexNumber: Int? {
        get { more.parentIndexNumber }
        set { change { $0.parentIndexNumber = newValue } }
    }
    /// ISO 8601, as the server wrote it (sorting compares the text).
    public var dateCreated: String? {
        get { box.fields.dateCreated }
        _modify {
            makeUnique()
            yield &box.fields.dateCreated
        }
    }
    public var premiereDate: String? {
        get { box.fields.premiereDate }
        _modify {
            makeUnique()
            yield &box.fields.premiereDate
        }
    }
    public var runTimeTicks: Int64? {
        get { box.fields.runTimeTicks }
        _modify {
            makeUnique()
            yield &box.fields.runTimeTicks
        }
    }
    public var isFolder: Bool {
        get { box.fields.isFolder }
        _modify {
            makeUnique()
            yield &box.fields.isFolder
        }
    }
    /// The upstream object (empty for `serve`'s own views and the podcasts, built from their metadata): the members
    /// kept parsed first, then the rest, parsed from its bytes on each read (see ``upstream(_:)`` for one member).
    public var raw: JSONObject {
        get {
            // The members read from the box, not a copy of all its fields (a retain of each) per answered item.
            let encoded = box.fields.encoded
            let restStart = Int(box.fields.restStart)
            guard restStart > 0, restStart < encoded.count else { return object(encoded[...]) }
            // Both objects parsed as one: the looked-up members' object without its `}`, a comma, the rest's without
            // its `{` (one pass of the parser per answered item, not two).
            var joined = encoded
            joined[restStart - 1] = UInt8(ascii: ",")
            joined.remove(at: restStart)
            return object(joined[...])
        }
        set {
            makeUnique()
            let split = CatalogItem.split(newValue, fields: box.fields)
            box.fields.encoded = split.encoded
            box.fields.restStart = split.restStart
            change {
                $0.upstreamState = split.state
                $0.upstreamMediaType = split.mediaType
            }
        }
    }

    /// The object in these bytes (empty when there are none).
    private func object(_ bytes: ArraySlice<UInt8>) -> JSONObject {
        guard !bytes.isEmpty else { return JSONObject() }
        let unpacked = PackedJSON.unpacked(bytes) { code, output in
            switch code {
            case 0: JSONWriter.writeString(box.fields.id, into: &output)
            case 1: JSONWriter.writeString(box.fields.name, into: &output)
            case 2: JSONWriter.writeString(box.fields.dateCreated ?? "", into: &output)
            case 3: JSONWriter.writeString(box.fields.premiereDate ?? "", into: &output)
            case 4: output.append(contentsOf: JSONWriter.format(Double(box.fields.runTimeTicks ?? 0)).utf8)
            default: output.append(contentsOf: "null".utf8)
            }
        }
        return (try? JSONValue(parsing: unpacked))?.objectValue ?? JSONObject()
    }

    /// The code (see `object(_:)`) an upstream member is written as when its value is the same as one of the item's
    /// fields: `Id`, `Name`, `DateCreated`, `PremiereDate`, `RunTimeTicks`, kept once, not twice.
    private static func fieldCode(_ member: JSONMember, _ fields: Fields) -> UInt8? {
        switch member.key {
        case "Id": return member.value == .string(fields.id) ? 0 : nil
        case "Name": return member.value == .string(fields.name) ? 1 : nil
        case "DateCreated": return fields.dateCreated.map { member.value == .string($0) } == true ? 2 : nil
        case "PremiereDate": return fields.premiereDate.map { member.value == .string($0) } == true ? 3 : nil
        case "RunTimeTicks":
            return fields.runTimeTicks.map { member.value == .number(Double($0)) } == true ? 4 : nil
        default: return nil
        }
    }

    /// The member `key` of the upstream object: read from the members requests look up when it is one of them, else
    /// from the whole object.
    public func upstream(_ key: String) -> JSONValue? {
        guard CatalogItem.lookupKeys.contains(key) else { return raw[key] }
        let encoded = box.fields.encoded
        return object(encoded[..<Int(box.fields.restStart)])[key]
    }

    /// The upstream members requests read one by one (filters, sorting, image tags, user data, a view's type):
    /// kept apart from the rest, whose bytes such a read does not parse.
    public static let lookupKeys: Set<String> = [
        "Id", "Type", "CollectionType", "ProductionYear", "Genres", "Album", "AlbumArtist", "AlbumArtists", "Artists",
        "ArtistItems", "ImageTags", "BackdropImageTags", "UserData", "MediaType", "Trickplay",
    ]

    /// An upstream object as the bytes of its looked-up members and of the rest, with what is read of it for every
    /// item. Its own `MediaStreams` are not kept: every answer replaces them with its primary version's.
    /// - Parameter fields: the item's fields (a member whose value is one of them is written as its code).
    static func split(_ raw: JSONObject, fields: Fields) -> (
        encoded: [UInt8], restStart: Int32, state: UserState, mediaType: String?
    ) {
        var lookup: [JSONMember] = []
        var rest: [JSONMember] = []
        rest.reserveCapacity(raw.count)
        for member in raw.members where member.key != "MediaStreams" {
            if lookupKeys.contains(member.key) { lookup.append(member) } else { rest.append(member) }
        }
        var encoded: [UInt8] = []
        let field = { (member: JSONMember) in fieldCode(member, fields) }
        if !lookup.isEmpty {
            PackedJSON.write(.object(JSONObject(distinctMembers: lookup)), into: &encoded, field: field)
        }
        let restStart = Int32(encoded.count)
        if !rest.isEmpty { PackedJSON.write(.object(JSONObject(distinctMembers: rest)), into: &encoded, field: field) }
        if encoded.capacity > encoded.count + 16 {
            // Exactly their size: grown by doubling, an array holds up to twice its bytes.
            encoded = Array(unsafeUninitializedCapacity: encoded.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: encoded)
            }
        }
        let userData = raw["UserData"]?.objectValue
        return (
            encoded, restStart, userData.map { UserState(upstream: $0) } ?? UserState(),
            raw["MediaType"]?.stringValue
        )
    }
    public var versions: [HeldVersion] {
        get { box.fields.versions }
        _modify {
            makeUnique()
            yield &box.fields.versions
        }
    }
    /// Held images by type (`Primary`, `Backdrop`).
    public var images: [String: HeldFile] {
        get { box.fields.images }
        _modify {
            makeUnique()
            yield &box.fields.images
        }
    }
    /// The id the mirror keeps played state under: the item's id, except for a podcast episode, which `serve`
    /// answers under an id of its own (clients read every id as a GUID; a feed's episode id is not one).
    public var markId: String {
        get { more.markId ?? box.fields.id }
        set {
            let id = box.fields.id
            change { $0.markId = newValue == id ? nil : newValue }
        }
    }
    /// A track's lyrics, held beside it as LRC (`Downloads/<album>/<track>.lrc`).
    public var lyrics: HeldFile? {
        get { more.lyrics }
        set { change { $0.lyrics = newValue } }
    }

    public init(
        id: String, type: String, name: String, sortName: String? = nil, parentId: String? = nil,
        viewId: String? = nil, seriesId: String? = nil, seasonId: String? = nil, indexNumber: Int? = nil,
        parentIndexNumber: Int? = nil, dateCreated: String? = nil, premiereDate: String? = nil,
        runTimeTicks: Int64? = nil, isFolder: Bool = false, raw: JSONObject = JSONObject(),
        versions: [HeldVersion] = [], images: [String: HeldFile] = [:], markId: String? = nil, lyrics: HeldFile? = nil
    ) {
        var fields = Fields(
            id: id, type: type, name: name, sortName: (sortName ?? name).lowercased(), parentId: parentId,
            viewId: viewId, dateCreated: dateCreated, premiereDate: premiereDate, runTimeTicks: runTimeTicks,
            encoded: [], restStart: 0, isFolder: isFolder, versions: versions, images: images)
        let split = CatalogItem.split(raw, fields: fields)
        (fields.encoded, fields.restStart) = (split.encoded, split.restStart)
        box = Box(fields)
        let more = More(
            seriesId: seriesId, seasonId: seasonId, indexNumber: indexNumber, parentIndexNumber: parentIndexNumber,
            upstreamState: split.state, upstreamMediaType: split.mediaType, markId: markId == id ? nil : markId,
            lyrics: lyrics)
        if more != More() { box.fields.more = MoreBox(more) }
    }

    /// The item's upstream `UserData` object, if the metadata holds one.
    public var upstreamUserData: JSONObject? { upstream("UserData")?.objectValue }

    /// The played state the upstream `UserData` gives (a default state when there is none).
    var upstreamState: UserState { more.upstreamState }

    /// A movie, an episode or a podcast episode: something with media.
    public var isPlayable: Bool { !versions.isEmpty }

    /// Jellyfin's `MediaType` (`Video`, `Audio`): the upstream object's, else by type; nil for a folder.
    public var mediaType: String? {
        if let upstream = more.upstreamMediaType, upstream != "Unknown" { return upstream }
        switch type {
        case "Audio", "AudioBook": return "Audio"
        case "Book": return "Book"
        case "Movie", "Episode", "MusicVideo", "Video", "Trailer": return "Video"
        default: return nil
        }
    }
}

/// What a catalog build keeps for the next one: each podcast file's playing time, with the size and modification time
/// it was read at (a file that did not change is not read again). Files not asked for in a pass are forgotten at its
/// end. `metadata.json` files are read again at each build: kept parsed, those of 100,000 movies held 200 MB.
public final class MetadataDocuments: Sendable {
    private struct Store {
        var seen: Set<String> = []
        /// Podcast files' playing times in seconds (nil: not known), with the signature they were read at.
        var durations: [String: (signature: [Int64], seconds: Int?)] = [:]
    }

    private let store = Mutex(Store())

    public init() {}

    func beginPass() {
        store.withLock { $0.seen = [] }
    }

    func endPass() {
        store.withLock { store in
            store.durations = store.durations.filter { store.seen.contains($0.key) }
        }
    }

    /// A podcast file's playing time in ticks, from its own headers (read again only when the file changed).
    func runTimeTicks(of file: HeldFile) -> Int64? {
        let signature = [file.size, file.modified]
        let kept = store.withLock { store -> Int?? in
            store.seen.insert(file.path)
            guard let old = store.durations[file.path], old.signature == signature else { return nil }
            return .some(old.seconds)
        }
        let seconds = kept ?? MediaDuration.seconds(ofFileAt: file.path)
        if kept == nil { store.withLock { $0.durations[file.path] = (signature, seconds) } }
        return seconds.map { Int64($0) * 10_000_000 }
    }

    /// The parsed file at `path`, nil when it cannot be read or is not JSON.
    func document(at path: String) -> JSONValue? {
        guard let bytes = FileBytes.read(path) else { return nil }
        return try? JSONValue(parsing: bytes)
    }
}

/// Whole selections of listing queries over one catalog, in order (see ``ItemQuery/selectPage(_:state:)``). A catalog
/// built again starts with an empty memo, so nothing kept outlives the mirror's state it was read from.
public final class ListingMemo: Sendable {
    /// Selections kept at most: a client pages through a few listings at a time; beyond this the memo starts over.
    static let capacity = 64
    private let kept = Mutex<[ItemQuery: [CatalogItem]]>([:])

    public init() {}

    func selection(for query: ItemQuery) -> [CatalogItem]? {
        kept.withLock { $0[query] }
    }

    func keep(_ selection: [CatalogItem], for query: ItemQuery) {
        kept.withLock { kept in
            if kept.count >= ListingMemo.capacity { kept.removeAll() }
            kept[query] = selection
        }
    }
}

/// What the mirror holds, as `serve` lists it: built once from the index and the `metadata.json` files, rebuilt
/// when the index changes, never read per request.
public struct Catalog: Sendable {
    /// The listings already answered from this catalog.
    public let listings = ListingMemo()
    public private(set) var items: [String: CatalogItem] = [:]
    /// The views, in the order they are listed (movies, shows, music, music videos, home videos, podcasts,
    /// collections, playlists).
    public private(set) var views: [CatalogItem] = []
    /// Child ids by parent id. A playlist's or box set's children are its entries in its order (an item it lists
    /// twice stands twice); an artist's are the albums (and tracks without one) it is an album artist of.
    public private(set) var children: [String: [String]] = [:]
    /// The artists (`MusicArtist`) by the view they belong to: listed by a recursive query of that view, but no
    /// view's children (the view's children are its albums).
    public private(set) var artistsByView: [String: [String]] = [:]
    /// Problems met while reading (unreadable metadata), for the log.
    public private(set) var problems: [String] = []
    /// The item holding each alternate version, by the version's id (plain, lowercased): on Jellyfin each alternate
    /// version is an item of its own, which `/Items/{id}/Download` finds by its id.
    public private(set) var versionOwners: [String: String] = [:]

    public init() {}

    /// A catalog of exactly these items (views first): for tests and for ``build(root:index:serverId:documents:)``.
    /// - Parameter entries: the entries of each playlist and box set, in its order (ids of items here).
    public init(
        views: [CatalogItem], items: [CatalogItem], entries: [String: [String]] = [:], problems: [String] = []
    ) {
        self.views = views
        self.problems = problems
        for item in views + items {
            self.items[item.id] = item
            if let parent = item.parentId { children[parent, default: []].append(item.id) }
            for version in item.versions where ServeIds.plain(version.id) != ServeIds.plain(item.id) {
                versionOwners[ServeIds.plain(version.id)] = item.id
            }
        }
        // A playlist's or box set's children are its linked children in their order (`Playlist.GetChildren`,
        // `BoxSet.GetChildren`, v10.10.7).
        for (list, ids) in entries.sorted(by: { $0.key < $1.key }) where self.items[list] != nil {
            children[list, default: []] += ids.filter { self.items[$0] != nil }
        }
        // An artist holds the albums it is album artist of, as a folder artist holds its album folders (Jellyfin's
        // `MusicArtistResolver` layout); a track without an album counts as one. Matched by name, as Jellyfin
        // matches artists (`ItemValues.CleanValue`, `SqliteItemRepository` v10.10.7 L3578–3592).
        var byName: [String: [String]] = [:]
        for item in items where item.type == "MusicAlbum" || (item.type == "Audio" && item.parentId == item.viewId) {
            for name in Set(item.albumArtistNames) {
                byName["\(item.viewId ?? ""):\(name)", default: []].append(item.id)
            }
        }
        for artist in items where artist.type == "MusicArtist" {
            let key = "\(artist.viewId ?? ""):\(artist.name.lowercased())"
            children[artist.id] = byName[key] ?? []
            if let view = artist.viewId { artistsByView[view, default: []].append(artist.id) }
        }
    }

    public func item(_ id: String) -> CatalogItem? {
        items[id] ?? items[id.lowercased()] ?? items[ServeIds.plain(id)]
    }

    /// The held version with this id and the item it belongs to: an item's own id names its primary version, an
    /// alternate version's id the alternate (Jellyfin's `LibraryController.GetDownload` looks the id up as an item,
    /// and each alternate version is one, v10.10.7 L667-702).
    public func version(_ id: String) -> (item: CatalogItem, version: HeldVersion)? {
        let plain = ServeIds.plain(id)
        if let item = item(id) {
            guard let version = item.versions.first(where: { ServeIds.plain($0.id) == plain }) ?? item.versions.first
            else { return nil }
            return (item, version)
        }
        guard let (owner, index) = heldAlternate(plain) else { return nil }
        return (owner, owner.versions[index])
    }

    /// The item holding the alternate version of this (plain) id, and the version's place among its versions.
    private func heldAlternate(_ plain: String) -> (owner: CatalogItem, index: Int)? {
        guard let owner = versionOwners[plain].flatMap({ items[$0] }),
            let index = owner.versions.firstIndex(where: { ServeIds.plain($0.id) == plain })
        else { return nil }
        return (owner, index)
    }

    /// An alternate version answered as the item it is on Jellyfin: the movie (or episode) it belongs to under the
    /// version's own id, with that version's source first and its streams as the item's (`Video.GetMediaSources`
    /// lists the queried item's own source, then the versions it is grouped with; `DtoService` takes the item's
    /// streams from its own source, v10.10.7). Played state is the owner's, which the mirror keeps once for all its
    /// versions; images stay with the owner (nil: `id` is no alternate version held here).
    public func alternate(_ id: String) -> CatalogItem? {
        guard let (owner, index) = heldAlternate(ServeIds.plain(id)) else { return nil }
        var item = owner
        let versionId = owner.versions[index].id
        item.id = versionId
        if item.upstream("Id") != nil { item.raw["Id"] = .string(versionId) }
        item.versions.remove(at: index)
        item.versions.insert(owner.versions[index], at: 0)
        item.images = [:]
        item.raw["ImageTags"] = nil
        item.raw["BackdropImageTags"] = nil
        return item
    }

    /// Every item under `id` at any depth, each once.
    public func descendants(of id: String) -> [CatalogItem] {
        var result: [CatalogItem] = []
        // Told apart by their stored values' box (one per id here): half the room of their ids, and no text hashed.
        var seen = Set<ObjectIdentifier>()
        var stack = Array((children[id] ?? []).reversed())
        while let next = stack.popLast() {
            guard let item = items[next], seen.insert(item.identity).inserted else { continue }
            result.append(item)
            stack.append(contentsOf: (children[next] ?? []).reversed())
        }
        return result
    }

    /// What a query with `ParentId` = `parent` looks at: its children, or with `recursive` everything under it. A
    /// playlist's or box set's entries keep their order and repeats, each followed by what is under it; a view's
    /// recursive members include its artists.
    public func members(of parent: CatalogItem, recursive: Bool) -> [CatalogItem] {
        let direct = (children[parent.id] ?? []).compactMap { items[$0] }
        guard recursive else { return direct }
        if parent.isList { return direct.flatMap { [$0] + descendants(of: $0.id) } }
        return descendants(of: parent.id) + (artistsByView[parent.id] ?? []).compactMap { items[$0] }
    }

    /// The view ids, to tell a view from an item.
    public var viewIds: Set<String> { Set(views.map(\.id)) }

    /// The id `serve` answers a podcast under (32 hex digits, stable).
    public static func podcastId(serverId: String, podcastId: String) -> String {
        ServeIds.hex32("\(serverId):podcast:\(podcastId)")
    }

    /// The id `serve` answers a podcast episode under (32 hex digits, stable).
    public static func podcastEpisodeId(serverId: String, podcastId: String, episodeId: String) -> String {
        ServeIds.hex32("\(serverId):podcast-episode:\(podcastId):\(episodeId)")
    }

    /// The stable id of one of `serve`'s views: 32 hex digits made of the server id and the collection type.
    public static func viewId(serverId: String, collectionType: String) -> String {
        ServeIds.hex32("\(serverId):view:\(collectionType)")
    }
}

extension Catalog {
    /// Reads what the mirror at `root` holds through its index: the media, images, subtitles and lyrics on disk, and
    /// the `metadata.json` files that describe them. Only what is held is listed: a movie, music video, home video,
    /// episode or track with a media file, a season with such an episode, a series with such a season, an album with
    /// such a track, a podcast with an episode on disk, a playlist or box set with such an entry.
    /// - Parameter documents: parsed `metadata.json` files kept from the last build, so a rebuild reads again only
    ///   the files that changed.
    public static func build(
        root: MirrorRoot, index: MirrorIndex, serverId: String, documents: MetadataDocuments? = nil
    ) throws -> Catalog {
        let base = HeldFile.Base(root: root.path)
        var layouts = PathLayouts()
        var media = HeldMediaTable()
        var subtitles: [String: [IndexEntry]] = [:]
        var images: [String: [String: HeldFile]] = [:]
        var podcastEpisodes: [String: [String: HeldFile]] = [:]
        var podcastImages: [String: [String: HeldFile]] = [:]
        var lyrics: [String: HeldFile] = [:]
        var extras = VersionExtras()
        // The records are read one at a time and sorted by what they are: only what the build reads of each stays.
        try index.forEachEntryForServing { entry in
            switch entry.file.key.parts {
            case .media(let itemId, _):
                // The record's own copy of the id (its version's, most often), not the one read from its key.
                let itemId = entry.file.itemId == itemId ? entry.file.itemId : itemId
                if let file = held(root, entry, base, layouts: &layouts) {
                    media.add(entry, itemId: itemId, file: file)
                }
            case .lyrics(let itemId):
                if let held = held(root, entry, base) { lyrics[itemId] = held }
            case .subtitle(let itemId, _, _): subtitles[itemId, default: []].append(entry)
            case .image(let itemId, let type):
                if let held = held(root, entry, base, layouts: &layouts) { images[itemId, default: [:]][type] = held }
            // Read in runs below, once what they describe is known.
            case .metadata, .podcastMetadata: break
            case .podcastEpisode(let podcastId, let episodeId):
                if let held = held(root, entry, base) { podcastEpisodes[podcastId, default: [:]][episodeId] = held }
            case .trickplay, .segments: extras.add(entry, root: root, base: base)
            case .podcastExtra(let podcastId, let episodeId, let what) where what == "image":
                if let held = held(root, entry, base) { podcastImages[podcastId, default: [:]][episodeId] = held }
            default: break
            }
        }
        var problems: [String] = []
        let movieView = viewId(serverId: serverId, collectionType: "movies")
        let showView = viewId(serverId: serverId, collectionType: "tvshows")
        // The podcasts' view keeps the id it had before music was served; the music library has its own.
        let musicView = viewId(serverId: serverId, collectionType: "music")
        let views = MusicViews(serverId: serverId)

        func versions(of raw: JSONObject, id: String) -> [HeldVersion] {
            let sources = raw["MediaSources"]?.arrayValue ?? []
            let unknown = media.unknownContainers(of: id)
            return media.finish(id) { version in
                let mediaPath = version.file.relativePath ?? version.file.path
                if unknown.contains(version.id) {
                    let source = sources.first { $0["Id"]?.stringValue == version.id }
                    version.container =
                        source?["Container"]?.stringValue ?? String(mediaPath.split(separator: ".").last ?? "bin")
                }
                var held: [HeldSubtitle] = []
                for subtitle in (subtitles[id] ?? []).filter({ $0.versionId == version.id }) {
                    guard
                        let parts = ExportNaming.subtitleParts(mirrorPath: subtitle.file.path, mediaPath: mediaPath),
                        let file = Catalog.held(root, subtitle, base)
                    else { continue }
                    held.append(
                        HeldSubtitle(
                            index: parts.index, language: parts.language, forced: parts.forced, format: parts.format,
                            file: file))
                }
                version.subtitles = held.sorted { $0.index < $1.index }
                extras.attach(to: &version, itemId: id)
            }
        }

        var seriesById: [String: CatalogItem] = [:]
        var seasons: [CatalogItem] = []
        var episodes: [CatalogItem] = []
        var podcasts: [CatalogItem] = []
        var audio: [CatalogItem] = []
        var videos: [String: [CatalogItem]] = [:]
        var music = MusicCatalog(views: views, images: images, lyrics: lyrics)
        var books = BookCatalog(view: viewId(serverId: serverId, collectionType: "books"), images: images)
        let documents = documents ?? MetadataDocuments()
        documents.beginPass()
        defer { documents.endPass() }
        // The metadata files' records in runs, each let go once its files are read.
        var run: [IndexEntry] = []
        var after: String?
        repeat {
            run = try index.metadataEntriesForServing(after: after, limit: Catalog.metadataRun)
            after = run.last?.file.path
            for entry in run {
                switch entry.file.key.parts {
                case .metadata, .podcastMetadata: break
                default: continue
                }
                let (relative, isPodcast, itemId) = (entry.file.path, entry.file.key.isPodcast, entry.file.itemId)
                guard let path = root.absolute(relative), let document = documents.document(at: path) else {
                    problems.append("\(relative): cannot be read")
                    continue
                }
                if isPodcast {
                    guard let podcastId = document["podcastID"]?.stringValue else { continue }
                    // Podcasts and their episodes get ids of 32 hex digits, as every Jellyfin id is, made from the
                    // server id and the mirror's ids (the episode's own id is kept for its played state).
                    let podcastServeId = Catalog.podcastId(serverId: serverId, podcastId: podcastId)
                    let title = document["podcastTitle"]?.stringValue ?? podcastId
                    let held = podcastEpisodes[podcastId] ?? [:]
                    var newest: String?
                    for episode in document["episodes"]?.arrayValue ?? [] {
                        guard let episodeId = episode["episodeID"]?.stringValue, let file = held[episodeId] else {
                            continue
                        }
                        let fileName = episode["fileName"]?.stringValue ?? file.path
                        let container = String(fileName.split(separator: ".").last ?? "mp3").lowercased()
                        let published = episode["published"]?.stringValue
                        let created = episode["downloadDate"]?.stringValue
                        if let date = created, date > (newest ?? "") { newest = date }
                        var images: [String: HeldFile] = [:]
                        if let image = podcastImages[podcastId]?[episodeId] { images["Primary"] = image }
                        let serveId = Catalog.podcastEpisodeId(
                            serverId: serverId, podcastId: podcastId, episodeId: episodeId)
                        audio.append(
                            CatalogItem(
                                id: serveId, type: "Audio", name: episode["title"]?.stringValue ?? episodeId,
                                parentId: podcastServeId, viewId: musicView, dateCreated: created,
                                premiereDate: published,
                                runTimeTicks: documents.runTimeTicks(of: file),
                                raw: ["Album": .string(title), "AlbumId": .string(podcastServeId)],
                                versions: [HeldVersion(id: serveId, container: container, file: file, subtitles: [])],
                                images: images, markId: episodeId))
                    }
                    podcasts.append(
                        CatalogItem(
                            id: podcastServeId, type: "MusicAlbum", name: title, parentId: musicView, viewId: musicView,
                            dateCreated: newest, isFolder: true, raw: ["AlbumArtist": .string(title)]))
                    continue
                }
                // An audiobook's folder: the book of one file, or the folder of its parts.
                if document["itemType"]?.stringValue == "AudioBook", let parts = document["tracks"]?.arrayValue {
                    let folderId = document["itemId"]?.stringValue ?? itemId
                    books.addAudiobook(
                        folderId: folderId, item: document["item"]?.objectValue, parts: parts, versions: versions)
                    continue
                }
                // An album's (or a loose track's) folder: its held tracks.
                if let tracks = document["tracks"]?.arrayValue {
                    let folderId = document["itemId"]?.stringValue ?? itemId
                    music.addAlbum(
                        folderId: folderId, album: document["item"]?.objectValue, tracks: tracks, versions: versions)
                    continue
                }
                guard let item = document["item"]?.objectValue, let read = item["Id"]?.stringValue else { continue }
                // One copy of the id for the item, its versions and the catalog's table.
                let id = media.sharedId(read)
                let type = document["itemType"]?.stringValue ?? item["Type"]?.stringValue
                switch type {
                case "Movie", "MusicVideo", "Video":
                    // Music videos and home videos are kept as movies are, each kind in a view of its own.
                    let view = type == "Movie" ? movieView : type == "MusicVideo" ? views.musicVideos : views.homeVideos
                    let held = versions(of: item, id: id)
                    if !held.isEmpty {
                        videos[view, default: []].append(
                            catalogItem(item, id: id, parent: view, view: view, versions: held, images: images))
                    }
                case "Book":
                    books.addBook(item, id: id, versions: versions(of: item, id: id))
                case "Playlist", "BoxSet":
                    let entries = (document["entries"]?.arrayValue ?? []).compactMap { $0["itemId"]?.stringValue }
                    music.addList(item, id: id, entries: entries)
                case "Series":
                    seriesById[id] = catalogItem(
                        item, id: id, parent: showView, view: showView, versions: [], images: images)
                case "Season":
                    let seriesId = item["SeriesId"]?.stringValue ?? ""
                    var held = 0
                    for episode in document["episodes"]?.arrayValue ?? [] {
                        guard let episode = episode.objectValue, let read = episode["Id"]?.stringValue else {
                            continue
                        }
                        let episodeId = media.sharedId(read)
                        let versions = versions(of: episode, id: episodeId)
                        guard !versions.isEmpty else { continue }
                        held += 1
                        episodes.append(
                            catalogItem(
                                episode, id: episodeId, parent: id, view: showView, versions: versions, images: images))
                    }
                    if held > 0 {
                        var season = catalogItem(
                            item, id: id, parent: seriesId, view: showView, versions: [], images: images)
                        season.seriesId = seriesId
                        seasons.append(season)
                    }
                default:
                    continue
                }
            }
        } while run.count == Catalog.metadataRun
        // What the index gave is let go before the catalog's tables are made.
        (media, subtitles, podcastEpisodes, podcastImages, extras) = (HeldMediaTable(), [:], [:], [:], VersionExtras())
        let heldSeries = Set(seasons.compactMap(\.seriesId))
        let series = seriesById.values.filter { heldSeries.contains($0.id) }
        let heldSeasons = Set(seasons.filter { seriesById[$0.seriesId ?? ""] != nil }.map(\.id))
        let shownSeasons = seasons.filter { heldSeasons.contains($0.id) }
        let shownEpisodes = episodes.filter { heldSeasons.contains($0.parentId ?? "") }

        let movies = videos[movieView] ?? []
        let shownPodcasts = podcasts.filter { podcast in audio.contains { $0.parentId == podcast.id } }
        let shown = music.finished()
        let listed =
            movies + (videos[views.musicVideos] ?? []) + (videos[views.homeVideos] ?? []) + series
            + shownSeasons + shownEpisodes + shown + shownPodcasts + audio + books.items
        let lists = music.lists(among: listed)

        var viewItems: [CatalogItem] = []
        func view(
            _ id: String, _ name: String, _ collectionType: String, _ members: [CatalogItem],
            type: String = "CollectionFolder"
        ) {
            guard !members.isEmpty else { return }
            viewItems.append(
                CatalogItem(
                    id: id, type: type, name: name, dateCreated: members.compactMap(\.dateCreated).max(),
                    isFolder: true, raw: ["CollectionType": .string(collectionType)]))
        }
        view(movieView, "Movies", "movies", movies)
        view(showView, "Shows", "tvshows", series)
        view(views.music, "Music", "music", shown.filter { $0.parentId == views.music })
        view(views.musicVideos, "Music Videos", "musicvideos", videos[views.musicVideos] ?? [])
        view(views.homeVideos, "Home Videos", "homevideos", videos[views.homeVideos] ?? [])
        view(musicView, "Podcasts", "music", shownPodcasts)
        view(books.view, "Books", "books", books.items.filter { $0.parentId == books.view })
        view(views.boxSets, "Collections", "boxsets", lists.items.filter { $0.type == "BoxSet" })
        // The playlists folder is listed as a `UserView` (`UserViewManager.GetUserViews` makes a named view of a
        // user-specific `playlists` folder: `UserView.IsUserSpecific`, v10.10.7).
        view(views.playlists, "Playlists", "playlists", lists.items.filter { $0.type == "Playlist" }, type: "UserView")
        return Catalog(views: viewItems, items: listed + lists.items, entries: lists.entries, problems: problems)
    }

    /// How many metadata files' records a build reads from the index at once.
    static let metadataRun = 1000

    static func catalogItem(
        _ raw: JSONObject, id: String, parent: String, view: String, versions: [HeldVersion],
        images: [String: [String: HeldFile]]
    ) -> CatalogItem {
        let type = raw["Type"]?.stringValue ?? "Movie"
        let folders: Set<String> = ["Series", "Season", "MusicAlbum", "Playlist", "BoxSet", "Folder"]
        return CatalogItem(
            id: id, type: type, name: raw["Name"]?.stringValue ?? id, sortName: raw["SortName"]?.stringValue,
            parentId: parent, viewId: view, seriesId: raw["SeriesId"]?.stringValue,
            seasonId: raw["SeasonId"]?.stringValue, indexNumber: raw["IndexNumber"]?.intValue.map { Int($0) },
            parentIndexNumber: raw["ParentIndexNumber"]?.intValue.map { Int($0) },
            dateCreated: raw["DateCreated"]?.stringValue, premiereDate: raw["PremiereDate"]?.stringValue,
            runTimeTicks: raw["RunTimeTicks"]?.intValue, isFolder: folders.contains(type), raw: raw,
            versions: versions, images: images[id] ?? [:])
    }

    /// The file an index entry names, when it is on disk (a regular file).
    /// - Parameter base: the root's path, shared by the files the catalog holds (each keeps its path relative to it).
    static func held(_ root: MirrorRoot, _ entry: IndexEntry, _ base: HeldFile.Base) -> HeldFile? {
        guard let (size, modified) = onDisk(root, entry) else { return nil }
        return HeldFile(base: base, relative: entry.file.path, size: size, modified: modified)
    }

    /// ``held(_:_:_:)``, a path made of the item's id and parts other files share kept as the id and those parts
    /// (see ``HeldFile/Base/around``).
    static func held(
        _ root: MirrorRoot, _ entry: IndexEntry, _ base: HeldFile.Base, layouts: inout PathLayouts
    ) -> HeldFile? {
        guard let (size, modified) = onDisk(root, entry) else { return nil }
        if let (laid, id) = layouts.base(for: entry.file.path, id: entry.file.itemId, base) {
            return HeldFile(base: laid, relative: id, size: size, modified: modified)
        }
        return HeldFile(base: base, relative: entry.file.path, size: size, modified: modified)
    }

    /// The size and modification time of the file an index entry names, when it is on disk (a regular file).
    private static func onDisk(_ root: MirrorRoot, _ entry: IndexEntry) -> (size: Int64, modified: Int64)? {
        guard let path = root.absolute(entry.file.path) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(info.st_size), Int64(info.st_mtim.tv_sec))
    }
}

/// The layouts a build's files share: a path that holds its item's id is kept as the id and the parts around it,
/// those parts once for all the files laid out alike (Swiftfin's `Downloads/<id>/<id>-<id>.mkv`, a movie's
/// `Downloads/<id>/Images/Primary.jpeg`). Parts longer than ``limit`` in all are not shared (they hold some other
/// file's name or id) and the path is kept whole.
struct PathLayouts {
    static let limit = 48
    private var bases: [[String]: HeldFile.Base] = [:]

    /// The base laid out as `relative` is around `id`, and `id` as the file keeps it; nil when `relative` does not
    /// hold `id` or its parts are too long.
    mutating func base(for relative: String, id: String, _ root: HeldFile.Base) -> (HeldFile.Base, String)? {
        guard id.utf8.count >= 8, relative.contains(id) else { return nil }
        let around = relative.components(separatedBy: id)
        // Byte for byte (`==` on strings is canonical equivalence, and so may be Foundation's split).
        guard around.count > 1, around.reduce(0, { $0 + $1.utf8.count }) <= Self.limit,
            around.joined(separator: id).utf8.elementsEqual(relative.utf8)
        else { return nil }
        if let known = bases[around] { return (known, id) }
        let base = HeldFile.Base(prefix: root.prefix, around: around)
        bases[around] = base
        return (base, id)
    }
}

/// A build's media files by item id, as versions: made when the index's record is read, finished (subtitles,
/// trickplay, segments, order) when the item's metadata is. The finished array is the item's own: held once, where a
/// table of the records until then held each file twice at the build's peak.
struct HeldMediaTable {
    /// Each item's versions, in the index's order until finished.
    private var versions: [String: [HeldVersion]] = [:]
    /// The records' keys that are not those ``FileKey/media(itemId:versionId:)`` makes of the ids, by item id and
    /// place (versions are ordered by key; most keys need not be kept).
    private var unusualKeys: [String: [Int: FileKey]] = [:]
    /// The versions whose record names no container, by item id (their metadata's source names it, or the path).
    private var unknownContainers: [String: Set<String>] = [:]

    mutating func add(_ entry: IndexEntry, itemId: String, file: HeldFile) {
        let versionId = entry.versionId.map { $0 == itemId ? itemId : $0 } ?? itemId
        let transcode = MusicCatalog.transcode(validator: entry.validator)
        let place = versions[itemId]?.count ?? 0
        versions[itemId, default: []].append(
            HeldVersion(
                id: versionId, container: entry.container ?? "", file: file, subtitles: [],
                transcodeCodec: transcode?.codec, transcodeBitrate: transcode?.bitrate))
        if entry.container == nil { unknownContainers[itemId, default: []].insert(versionId) }
        if entry.versionId.map({ FileKey.media(itemId: itemId, versionId: $0) != entry.file.key }) ?? true {
            unusualKeys[itemId, default: [:]][place] = entry.file.key
        }
    }

    /// The ids of the item's versions whose records name no container.
    func unknownContainers(of itemId: String) -> Set<String> { unknownContainers[itemId] ?? [] }

    /// The item's versions ordered by their records' keys, the primary version (its id is the item's) first, as
    /// Jellyfin lists MediaSources, each given what `finish` adds.
    mutating func finish(_ id: String, _ finish: (inout HeldVersion) -> Void) -> [HeldVersion] {
        // Taken out of the table, the array is changed in place (no copy), then kept there again, shared.
        guard var held = versions.removeValue(forKey: id) else { return [] }
        if held.count > 1 {
            let unusual = unusualKeys[id] ?? [:]
            let keys = held.indices.map { unusual[$0] ?? FileKey.media(itemId: id, versionId: held[$0].id) }
            let sorted = held.indices.sorted { keys[$0] < keys[$1] }.map { held[$0] }
            held = []
            for version in sorted {
                if version.id == id { held.insert(version, at: 0) } else { held.append(version) }
            }
        }
        for place in held.indices { finish(&held[place]) }
        versions[id] = held
        return held
    }

    /// The table's copy of an item's id, when it holds media of it (the item then keeps one copy of its id).
    func sharedId(_ id: String) -> String {
        versions.index(forKey: id).map { versions[$0].key } ?? id
    }
}
