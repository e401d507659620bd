/// How Jellyfin groups "latest" items (`UserViewManager.GetLatestItems` and `UserLibraryController.GetLatestMedia`,
/// v10.10.7 and v10.11.11): going through the items newest first, an episode joins its series' group and a song its
/// album's (`LatestItemsIndexContainer`), until `limit` groups are made. A group of one episode is answered as the
/// episode; a series with several new episodes as the series, with `ChildCount` the number of them; an album always
/// as the album.
enum LatestItems {
    struct Group: Equatable {
        /// The series or album the items are grouped under (nil: the item stands alone).
        var container: String?
        var items: [String]
    }

    /// - Parameters:
    ///   - newestFirst: the item ids, newest first.
    ///   - container: an item's series or album id, nil for an item that is never grouped (a movie).
    static func group(
        _ newestFirst: [String], groupItems: Bool, limit: Int, container: (String) -> String?
    ) -> [Group] {
        var groups: [Group] = []
        var position: [String: Int] = [:]
        for id in newestFirst {
            if groups.count >= limit { break }
            guard groupItems, let parent = container(id) else {
                groups.append(Group(container: nil, items: [id]))
                continue
            }
            if let index = position[parent] {
                groups[index].items.append(id)
            } else {
                position[parent] = groups.count
                groups.append(Group(container: parent, items: [id]))
            }
        }
        return groups
    }

    /// What a group is answered as: the container when it holds several items or is an album, else its item.
    static func answered(_ group: Group, containerIsAlbum: Bool) -> (id: String, childCount: Int) {
        if let container = group.container, group.items.count > 1 || containerIsAlbum {
            return (container, group.items.count)
        }
        return (group.items.first ?? "", 0)
    }
}
