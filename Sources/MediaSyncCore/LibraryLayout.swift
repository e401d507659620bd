/// Where each downloaded thing lives under the root, exactly as Swiftfin lays out its offline downloads, so
/// Swiftfin can read the same tree. Every path is relative to the root and starts with `Downloads/`.
///
/// ```
/// Downloads/<movieId>/<movieId>-<versionId>.<ext>      Downloads/<seriesId>/metadata.json
/// Downloads/<movieId>/Images/Primary.jpeg              Downloads/<seriesId>/Images/Series-<seriesId>-Primary.jpeg
/// Downloads/<movieId>/Images/Backdrop.jpeg             Downloads/<seriesId>/Season-01/metadata.json
/// Downloads/<movieId>/metadata.json                    Downloads/<seriesId>/Season-01/Images/Season-<seasonId>-Primary.jpeg
///                                                      Downloads/<seriesId>/Season-01/Images/Episode-<episodeId>-Primary.jpeg
///                                                      Downloads/<seriesId>/Season-01/<episodeId>-<versionId>.<ext>
/// ```
/// Music, in the same spirit (ids as names, one folder per album, every file listed in its `metadata.json`):
///
/// ```
/// Downloads/<albumId>/<trackId>-<versionId>.<ext>      Downloads/<playlistId>/metadata.json
/// Downloads/<albumId>/<trackId>.lrc                    Downloads/<playlistId>/Images/Primary.jpeg
/// Downloads/<albumId>/Images/Primary.jpeg              (a collection: the same, by its id)
/// Downloads/<albumId>/metadata.json
/// ```
/// External subtitles sit beside their media: `<media base name>.<stream index>.<language>[.forced].<format>`,
/// e.g. `Season-01/<episodeId>-<versionId>.3.eng.srt`, which players that match subtitles by the media's
/// base name pick up.
///
/// Callers pass ids already checked with ``SafeName/id(_:)``.
public enum LibraryLayout {
    /// The folder every download lives under.
    public static let downloads = "Downloads"
    /// The name of the metadata file at each level.
    public static let metadataFile = "metadata.json"
    /// The image file extension (Jellyfin serves JPEG unless asked otherwise).
    public static let imageExtension = "jpeg"

    /// The image types the layout keeps.
    public enum ImageType: String, Sendable, CaseIterable, Codable {
        case primary = "Primary"
        case backdrop = "Backdrop"
    }

    // MARK: Movies

    public static func movieFolder(_ movieId: String) -> String {
        "\(downloads)/\(movieId)"
    }

    public static func movieMedia(movieId: String, versionId: String, fileExtension: String) -> String {
        "\(movieFolder(movieId))/\(movieId)-\(versionId).\(fileExtension)"
    }

    public static func movieImage(movieId: String, type: ImageType) -> String {
        "\(movieFolder(movieId))/Images/\(type.rawValue).\(imageExtension)"
    }

    public static func movieMetadata(_ movieId: String) -> String {
        "\(movieFolder(movieId))/\(metadataFile)"
    }

    // MARK: Series

    public static func seriesFolder(_ seriesId: String) -> String {
        "\(downloads)/\(seriesId)"
    }

    public static func seriesMetadata(_ seriesId: String) -> String {
        "\(seriesFolder(seriesId))/\(metadataFile)"
    }

    public static func seriesImage(seriesId: String, type: ImageType) -> String {
        "\(seriesFolder(seriesId))/Images/Series-\(seriesId)-\(type.rawValue).\(imageExtension)"
    }

    /// `Season-XX`, zero-padded to two digits (specials are `Season-00`; season 100 is `Season-100`).
    public static func seasonFolderName(_ seasonNumber: Int) -> String {
        let number = max(0, seasonNumber)
        return number < 10 ? "Season-0\(number)" : "Season-\(number)"
    }

    public static func seasonFolder(seriesId: String, seasonNumber: Int) -> String {
        "\(seriesFolder(seriesId))/\(seasonFolderName(seasonNumber))"
    }

    public static func seasonMetadata(seriesId: String, seasonNumber: Int) -> String {
        "\(seasonFolder(seriesId: seriesId, seasonNumber: seasonNumber))/\(metadataFile)"
    }

    public static func seasonImage(seriesId: String, seasonNumber: Int, seasonId: String, type: ImageType) -> String {
        "\(seasonFolder(seriesId: seriesId, seasonNumber: seasonNumber))/Images/Season-\(seasonId)-\(type.rawValue).\(imageExtension)"
    }

    public static func episodeImage(seriesId: String, seasonNumber: Int, episodeId: String, type: ImageType) -> String {
        "\(seasonFolder(seriesId: seriesId, seasonNumber: seasonNumber))/Images/Episode-\(episodeId)-\(type.rawValue).\(imageExtension)"
    }

    public static func episodeMedia(
        seriesId: String, seasonNumber: Int, episodeId: String, versionId: String, fileExtension: String
    ) -> String {
        "\(seasonFolder(seriesId: seriesId, seasonNumber: seasonNumber))/\(episodeId)-\(versionId).\(fileExtension)"
    }

    // MARK: Music

    /// An album's folder: its tracks, their lyrics, its image and its `metadata.json`. A track with no album (a loose
    /// file in a music library) gets a folder of its own, named by its id.
    public static func albumFolder(_ albumId: String) -> String {
        "\(downloads)/\(albumId)"
    }

    public static func trackMedia(albumId: String, trackId: String, versionId: String, fileExtension: String) -> String
    {
        "\(albumFolder(albumId))/\(trackId)-\(versionId).\(fileExtension)"
    }

    public static func albumImage(albumId: String, type: ImageType) -> String {
        "\(albumFolder(albumId))/Images/\(type.rawValue).\(imageExtension)"
    }

    /// A track's lyrics, as an LRC file beside it.
    public static func lyrics(albumId: String, trackId: String) -> String {
        "\(albumFolder(albumId))/\(trackId).lrc"
    }

    public static func albumMetadata(_ albumId: String) -> String {
        "\(albumFolder(albumId))/\(metadataFile)"
    }

    // MARK: Playlists and collections

    /// A playlist's or collection's folder: its `metadata.json` (its ordered entries, pointing at the folders their
    /// files live in) and its images. The entries' files live in their own folders, held once.
    public static func listFolder(_ listId: String) -> String {
        "\(downloads)/\(listId)"
    }

    public static func listImage(listId: String, type: ImageType) -> String {
        "\(listFolder(listId))/Images/\(type.rawValue).\(imageExtension)"
    }

    public static func listMetadata(_ listId: String) -> String {
        "\(listFolder(listId))/\(metadataFile)"
    }

    // MARK: Subtitles

    /// An external subtitle beside its media file.
    public static func subtitle(
        mediaPath: String, streamIndex: Int, language: String?, forced: Bool, format: String
    ) -> String {
        let base = mediaPath.lastIndex(of: ".").map { String(mediaPath[..<$0]) } ?? mediaPath
        let language = language.flatMap(SafeName.fileExtension) ?? "und"
        let format = SafeName.fileExtension(format) ?? "srt"
        return "\(base).\(streamIndex).\(language)\(forced ? ".forced" : "").\(format)"
    }

    // MARK: Chapters, trickplay, media segments

    /// The image type a chapter image is kept under: `Chapter-<index>` (the chapter's position in `Chapters`).
    public static func chapterImageType(_ index: Int) -> String {
        "Chapter-\(index)"
    }

    /// The chapter index of an image type made by ``chapterImageType(_:)``; nil for any other.
    public static func chapterIndex(imageType: String) -> Int? {
        guard imageType.hasPrefix("Chapter-"), let index = Int(imageType.dropFirst(8)), index >= 0,
            chapterImageType(index) == imageType
        else { return nil }
        return index
    }

    /// A movie's (or home video's) chapter image: `Downloads/<movieId>/Images/Chapter-<index>.jpeg`.
    public static func movieChapterImage(movieId: String, index: Int) -> String {
        "\(movieFolder(movieId))/Images/\(chapterImageType(index)).\(imageExtension)"
    }

    /// An episode's chapter image: `Season-XX/Images/Episode-<episodeId>-Chapter-<index>.jpeg`.
    public static func episodeChapterImage(seriesId: String, seasonNumber: Int, episodeId: String, index: Int)
        -> String
    {
        "\(seasonFolder(seriesId: seriesId, seasonNumber: seasonNumber))/Images/Episode-\(episodeId)-\(chapterImageType(index)).\(imageExtension)"
    }

    /// A version's media path without its extension: what its trickplay folder and segments file are named after
    /// (the extension can change with the download's type; the base name never does).
    static func mediaBase(_ mediaPath: String) -> String {
        guard let dot = mediaPath.lastIndex(of: "."), mediaPath[dot...].contains("/") == false else { return mediaPath }
        return String(mediaPath[..<dot])
    }

    /// One trickplay tile of a version, beside its media as Jellyfin saves trickplay with media:
    /// `<media base name>.trickplay/<width>/<index>.jpg`.
    public static func trickplayTile(mediaPath: String, width: Int, index: Int) -> String {
        "\(mediaBase(mediaPath)).trickplay/\(width)/\(index).jpg"
    }

    /// A version's media segments (the server's `MediaSegmentDto` list as JSON), beside its media:
    /// `<media base name>.segments.json`.
    public static func segments(mediaPath: String) -> String {
        "\(mediaBase(mediaPath)).segments.json"
    }

    /// The version id of a media source: its id, with nil normalised to the item's id (as Swiftfin names versions).
    public static func versionId(itemId: String, mediaSourceId: String?) -> String {
        mediaSourceId ?? itemId
    }
}
