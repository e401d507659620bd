import MediaSyncJSON

/// Audiobooks and books as ``Catalog/build(root:index:serverId:documents:)`` reads them from the mirror's
/// `metadata.json` files (`docs/layout.md`, "Audiobooks and books"), in a `books` view of their own, as Jellyfin lists
/// a books library: an audiobook of one file is an `AudioBook` in the view; a book in parts is a `Folder` in the view
/// with one `AudioBook` per part (`AudioResolver.ResolveMultipleAudio` L189–193, v10.10.7); a book is a `Book`, its
/// file answered by `/Items/{id}/Download` only (it has no media sources, `Book.cs`).
struct BookCatalog {
    /// The books view's id.
    let view: String
    let images: [String: [String: HeldFile]]
    /// The audiobooks, the folders of parts and their parts, and the books, in the order read.
    private(set) var items: [CatalogItem] = []

    init(view: String, images: [String: [String: HeldFile]]) {
        self.view = view
        self.images = images
    }

    /// One audiobook's folder: its item (the `AudioBook` of one file, or the `Folder` of its parts) and its parts as
    /// received, in play order. Only the parts with a media file held are kept; a folder none of whose parts is held
    /// is not listed.
    mutating func addAudiobook(
        folderId: String, item: JSONObject?, parts: [JSONValue], versions: (JSONObject, String) -> [HeldVersion]
    ) {
        let single = parts.count == 1 && parts.first?["Id"]?.stringValue == folderId
        var held: [CatalogItem] = []
        for value in parts {
            guard let raw = value.objectValue, let id = raw["Id"]?.stringValue else { continue }
            let versions = versions(raw, id)
            guard !versions.isEmpty else { continue }
            let name = raw["Name"]?.stringValue ?? id
            let number = raw["IndexNumber"]?.intValue.map { Int($0) }
            // Parts sort in play order: an `AudioBook` is an `Audio`, whose sort name is its number, then its name
            // (`Audio.CreateSortName`, v10.10.7).
            held.append(
                CatalogItem(
                    id: id, type: "AudioBook", name: name,
                    sortName: raw["SortName"]?.stringValue
                        ?? (single ? name : MusicCatalog.trackSortName(name, disc: nil, number: number)),
                    parentId: single ? view : folderId, viewId: view, indexNumber: number,
                    dateCreated: raw["DateCreated"]?.stringValue, premiereDate: raw["PremiereDate"]?.stringValue,
                    runTimeTicks: raw["RunTimeTicks"]?.intValue, raw: raw, versions: versions,
                    images: images[id] ?? [:]))
        }
        guard !held.isEmpty else { return }
        if single {
            items += held
            return
        }
        var raw = item ?? JSONObject()
        if raw["Id"] == nil {
            // The folder's item could not be read: one made of what its parts say of the book.
            raw["Id"] = .string(folderId)
            raw["Name"] = held.first?.upstream("Album") ?? .string(folderId)
            raw["Type"] = .string("Folder")
            raw["IsFolder"] = .bool(true)
        }
        raw["MediaType"] = .string("Unknown")
        let total = held.compactMap(\.runTimeTicks).reduce(0, +)
        items.append(
            CatalogItem(
                id: folderId, type: "Folder", name: raw["Name"]?.stringValue ?? folderId,
                sortName: raw["SortName"]?.stringValue, parentId: view, viewId: view,
                dateCreated: raw["DateCreated"]?.stringValue ?? held.compactMap(\.dateCreated).max(),
                runTimeTicks: total > 0 ? total : nil, isFolder: true, raw: raw, images: images[folderId] ?? [:]))
        items += held
    }

    /// A book with its file held (a book whose file is not held is not listed).
    mutating func addBook(_ raw: JSONObject, id: String, versions: [HeldVersion]) {
        guard !versions.isEmpty else { return }
        items.append(Catalog.catalogItem(raw, id: id, parent: view, view: view, versions: versions, images: images))
    }
}
