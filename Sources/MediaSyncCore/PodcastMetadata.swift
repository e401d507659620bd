/// A podcast's `metadata.json`, in the podcast layout's format (docs/layout.md).
public struct PodcastMetadata: Codable, Equatable, Sendable {
    /// One downloaded episode.
    public struct Episode: Codable, Equatable, Sendable {
        public var episodeID: String
        public var title: String
        public var fileName: String
        public var fileSize: Int64
        public var downloadDate: String
        /// The episode's guid as the feed gives it (the id is derived from it).
        public var guid: String?
        /// The publication date, ISO 8601, when the feed gives one.
        public var published: String?
        /// The extras held beside the episode (Podcasting 2.0 transcript and chapters, the episode's image): their
        /// file names in the podcast's folder.
        public var transcriptFile: String?
        public var chaptersFile: String?
        public var imageFile: String?

        public init(
            episodeID: String, title: String, fileName: String, fileSize: Int64, downloadDate: String, guid: String?,
            published: String?, transcriptFile: String? = nil, chaptersFile: String? = nil, imageFile: String? = nil
        ) {
            self.transcriptFile = transcriptFile
            self.chaptersFile = chaptersFile
            self.imageFile = imageFile
            self.episodeID = episodeID
            self.title = title
            self.fileName = fileName
            self.fileSize = fileSize
            self.downloadDate = downloadDate
            self.guid = guid
            self.published = published
        }
    }

    public var podcastID: String
    public var podcastTitle: String
    public var feedURL: String?
    public var episodes: [Episode]
    public var totalSize: Int64
    /// The latest download date among the episodes (so that an unchanged podcast gets the same bytes).
    public var lastUpdated: String

    public init(podcastID: String, podcastTitle: String, feedURL: String?, episodes: [Episode]) {
        self.podcastID = podcastID
        self.podcastTitle = podcastTitle
        self.feedURL = feedURL
        self.episodes = episodes
        self.totalSize = episodes.reduce(0) { $0 + $1.fileSize }
        self.lastUpdated = episodes.map(\.downloadDate).max() ?? ""
    }
}
