import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer

/// Audiobooks and books: what audiobook and book selections (and a books library) expand to.
///
/// In a Jellyfin library of `CollectionType` `books` every audio file is an `AudioBook` (an `Audio` with media
/// sources), and a book in several parts is a plain `Folder` holding one `AudioBook` per part (the resolver skips the
/// stack, `AudioResolver.ResolveMultipleAudio` L189–193, v10.10.7). A `Book` (`.epub`, `.pdf`, `.cbz`…) has no media
/// sources: its file comes from `/Items/{id}/Download` alone.
///
/// An audiobook is kept like an album: its folder is the multi-part `Folder`'s id (its parts the folder's tracks,
/// in play order) or, for a book of one file, the audiobook's own id. A book is kept like a movie, its one version
/// being the item itself.
extension SelectionExpander {
    /// The item types of a books library's listing.
    static let bookItemTypes = ["AudioBook", "Book"]

    /// Parts in the order Jellyfin lists them by `SortName` (an `Audio`'s sort name is its number as `0000 - `, then
    /// its name: `Audio.CreateSortName`, v10.10.7): by `IndexNumber`, a part without one after the numbered, then
    /// by name.
    static func partOrder(_ first: BaseItem, _ second: BaseItem) -> Bool {
        let a = (first.indexNumber ?? Int.max, first.name ?? "", first.id)
        let b = (second.indexNumber ?? Int.max, second.name ?? "", second.id)
        return a < b
    }

    /// The audiobooks a list of `AudioBook` items makes: the parts of one book are those whose files lie together in
    /// the folder that is their parent (a multi-part book's `Folder`); any other audiobook is a book of its own (a
    /// book's single file sits in a folder of its own, below the author's). Items without a `Path` (`mediasync
    /// serve` never says where a file is) are grouped by their parent alone (``audiobookMembers`` then parts a group
    /// whose parent is no `Folder`, such as `serve`'s books view). Books keep the order of their first item; parts are
    /// in play order (``partOrder(_:_:)``).
    public static func audiobookGroups(_ items: [BaseItem]) -> [(folderId: String, parts: [BaseItem])] {
        func directory(_ path: String?) -> String? {
            guard let path, let slash = path.lastIndex(where: { $0 == "/" || $0 == "\\" }) else { return nil }
            return String(path[..<slash])
        }
        var keys: [String] = []
        var byKey: [String: [BaseItem]] = [:]
        for item in items {
            let key: String
            if let parent = item.parentId, let folder = directory(item.path) {
                key = "\(parent)\u{0}\(folder)"
            } else if let parent = item.parentId, item.path == nil {
                key = "\(parent)\u{0}"
            } else {
                key = "\u{0}\(item.id)"
            }
            if byKey[key] == nil { keys.append(key) }
            byKey[key, default: []].append(item)
        }
        var groups: [(folderId: String, parts: [BaseItem])] = []
        for key in keys {
            let members = byKey[key] ?? []
            if members.count > 1, let parent = members.first?.parentId {
                groups.append((parent, members.sorted(by: partOrder)))
            } else {
                groups += members.map { ($0.id, [$0]) }
            }
        }
        return groups
    }

    /// An audiobook selection: one `AudioBook`, or a `Folder` of parts (every audiobook below it, grouped as
    /// ``audiobookGroups(_:)`` does).
    func audiobook(_ selection: Selection, listed: inout Set<String>, result: inout MirrorItems) async throws
        -> Members
    {
        let item = overlaid(try await server.item(id: selection.id))
        listed.insert(item.id)
        let name = item.name ?? item.id
        if item.type == "AudioBook" {
            return try await audiobookMembers(
                [item], folders: [:], selection: selection, context: "audiobook \(name)", result: &result)
        }
        let parts = try await server.items(
            ItemsQuery(
                parentId: item.id, recursive: true, includeItemTypes: ["AudioBook"], fields: SelectionExpander.fields,
                sortBy: ["SortName"], limit: pageSize)
        ).map(overlaid)
        listed.formUnion(parts.map(\.id))
        if parts.isEmpty {
            result.rejected.append("audiobook \(name) has no audiobook files on the server; nothing to fetch")
        }
        return try await audiobookMembers(
            parts, folders: [item.id: item], selection: selection, context: "audiobook \(name)", result: &result)
    }

    /// What `AudioBook` items expand to: each book (``audiobookGroups(_:)``) an album-like folder of its parts.
    /// - Parameter folders: multi-part folders already at hand, by id (the others are asked for by id).
    func audiobookMembers(
        _ items: [BaseItem], folders known: [String: BaseItem], selection: Selection, context: String,
        result: inout MirrorItems
    ) async throws -> Members {
        var members = Members()
        var folders = known
        var groups = SelectionExpander.audiobookGroups(items.filter { !$0.isVirtual })
        let missing = groups.filter { $0.parts.count > 1 && folders[$0.folderId] == nil }.map(\.folderId)
        for folder in try await itemsById(missing) { folders[folder.id] = folder }
        // Parts of a parent that is no `Folder` (a library view: where `serve`, which sends no paths, lists the books
        // of one file) are books of their own.
        groups = groups.flatMap { group -> [(folderId: String, parts: [BaseItem])] in
            guard group.parts.count > 1, let type = folders[group.folderId]?.type, type != "Folder" else {
                return [group]
            }
            return group.parts.map { ($0.id, [$0]) }
        }
        for group in groups {
            guard SafeName.id(group.folderId) != nil else {
                result.rejected.append(
                    "\(context): the audiobook id \(group.folderId.debugDescription) cannot be a folder name; skipped")
                continue
            }
            var entries: [TrackEntry] = []
            for part in group.parts {
                guard SafeName.id(part.id) != nil else {
                    result.rejected.append(
                        "audiobook \(part.id.debugDescription): its id cannot be a file name; skipped")
                    continue
                }
                let versions = try await versions(of: part, all: selection.allVersions, rejected: &result.rejected)
                if !versions.isEmpty { entries.append(TrackEntry(item: part, versions: versions)) }
            }
            guard !entries.isEmpty else { continue }
            // A book of one file is its own folder's item; a multi-part book's folder item is the `Folder`.
            let folderItem = group.parts.count == 1 ? group.parts.first : folders[group.folderId]
            members.albums.append(AlbumEntry(folderId: group.folderId, album: folderItem, tracks: entries))
        }
        return members
    }

    /// Books with their `People` (a book's author is one of them; a listing leaves them out unless asked, and only
    /// books are asked for them, by id): in their order, each as listed when the server does not answer it again.
    func withPeople(_ books: [BaseItem]) async throws -> [BaseItem] {
        guard !books.isEmpty else { return books }
        var full: [String: BaseItem] = [:]
        for book in try await itemsById(books.map(\.id), fields: SelectionExpander.fields + ["People"]) {
            full[book.id] = book
        }
        return books.map { book in full[book.id].map(overlaid) ?? book }
    }

    /// A book selection: the `Book` item, its file its one version.
    func book(_ selection: Selection, listed: inout Set<String>, result: inout MirrorItems) async throws -> Members {
        // Asked again with its `People` (its author), as a library's books are.
        let item = try await withPeople([overlaid(try await server.item(id: selection.id))]).first
        guard let item else { return Members() }
        listed.insert(item.id)
        var members = Members()
        if let entry = await bookEntry(item, rejected: &result.rejected) { members.movies.append(entry) }
        return members
    }

    /// A `Book` kept like a movie: one folder, one version whose id is the book's (`/Items/{id}/Download` serves its
    /// file). The server gives a book no media sources, so the version is made from the item: its `Etag` signs the
    /// file (a file replaced on the server is saved again and gets a new one), its `Path`'s extension names it.
    func bookEntry(_ item: BaseItem, rejected: inout [String]) async -> MovieEntry? {
        let name = item.name ?? item.id
        guard SafeName.id(item.id) != nil else {
            rejected.append("book \(item.id.debugDescription): its id cannot be a folder name; skipped")
            return nil
        }
        if item.canDownload == false {
            let refusal = DownloadRefusal.reason(for: item, userMayDownload: await permission.userMayDownload())
            if let line = refusal.line(name: name) {
                rejected.append(line)
                return nil
            }
        }
        return MovieEntry(item: item, versions: [SelectionExpander.bookVersion(of: item)])
    }

    /// The one version of a `Book`: its id, its file's extension as the container, its `Etag` as the file's.
    public static func bookVersion(of item: BaseItem) -> MediaSource {
        var members: [JSONMember] = [JSONMember("Id", .string(item.id))]
        if let path = item.path { members.append(JSONMember("Path", .string(path))) }
        let fileExtension = item.path.flatMap(bookExtension)
        if let fileExtension { members.append(JSONMember("Container", .string(fileExtension))) }
        if let etag = item.etag { members.append(JSONMember("ETag", .string(etag))) }
        members.append(JSONMember("Protocol", .string("File")))
        return MediaSource(unchecked: .object(JSONObject(members)))
    }

    /// A book file's extension, from its name on the server (nil when it has none usable).
    static func bookExtension(_ path: String) -> String? {
        let name = path.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return SafeName.fileExtension(name[name.index(after: dot)...].lowercased())
    }

    /// A book's or an audiobook's author: the first `People` entry of type `Author` (a book's, with the `People`
    /// field or a look-up by id), else its album artist or first artist (an audiobook's file tags); nil if none.
    public static func author(of item: BaseItem) -> String? {
        if let people = item.raw["People"]?.arrayValue {
            for person in people where person["Type"]?.stringValue == "Author" {
                if let name = person["Name"]?.stringValue, !name.isEmpty { return name }
            }
        }
        if let artist = item.albumArtist, !artist.isEmpty { return artist }
        return item.raw["Artists"]?.arrayValue?.first?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }
}
