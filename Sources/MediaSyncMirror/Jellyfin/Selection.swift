import Foundation
import MediaSyncCore

/// Something the user asked to keep offline.
public struct Selection: Codable, Equatable, Sendable {
    /// What kind of thing was selected.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case movie, series, season, library, album, artist, playlist, collection, audiobook, book
    }

    /// The Jellyfin id of the selected item (or library view).
    public var id: String
    public var kind: Kind
    /// Whether every version is kept, or only the primary (first) one.
    public var allVersions: Bool
    /// For a series: only this season number.
    public var season: Int?
    /// For a series or season: keep only the next N unplayed episodes (per the server's UserData).
    public var nextUnplayed: Int?
    /// The name shown to people, as the server had it when selected.
    public var name: String?
    /// When it was selected, ISO 8601.
    public var addedAt: String
    /// Where it stands when a budget decides what fits: 1 first; nil after every numbered one, in the order added.
    public var priority: Int?
    /// Played items of this selection leave this long after they were played (and once the server has their
    /// played state), without `--delete`; nil keeps them.
    public var deletePlayedAfter: TimeInterval?
    /// The quality its movies and episodes are kept at; nil for the original files.
    public var quality: Quality?
    /// The quality its tracks are kept at; nil for the original files.
    public var audioQuality: AudioQuality?
    /// The trickplay width its movies and episodes keep (the server's smallest unless told).
    public var trickplay: TrickplayChoice = .smallest

    public init(
        id: String, kind: Kind, allVersions: Bool = false, season: Int? = nil, nextUnplayed: Int? = nil,
        name: String? = nil, addedAt: String, priority: Int? = nil, deletePlayedAfter: TimeInterval? = nil,
        quality: Quality? = nil, audioQuality: AudioQuality? = nil, trickplay: TrickplayChoice = .smallest
    ) {
        self.trickplay = trickplay
        self.quality = quality
        self.audioQuality = audioQuality
        self.priority = priority
        self.deletePlayedAfter = deletePlayedAfter
        self.id = id
        self.kind = kind
        self.allVersions = allVersions
        self.season = season
        self.nextUnplayed = nextUnplayed
        self.name = name
        self.addedAt = addedAt
    }
}
