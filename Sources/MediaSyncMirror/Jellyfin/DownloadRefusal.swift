import MediaSyncHTTP
import MediaSyncServer

/// Why the server says an item cannot be downloaded (`CanDownload: false`).
///
/// On Jellyfin 10.8–10.11 an item's `CanDownload` is `item.CanDownload() && user's
/// Policy.EnableContentDownloading` (`BaseItem.CanDownload(User)`, BaseItem.cs L859–862 at v10.10.7, L875 at
/// v10.8.13, L885 at v10.11.11; read by `DtoService` L240–245 at v10.10.7). `Video.CanDownload()` is false for
/// a DVD or Blu-ray folder and for anything not on the server's file system (Video.cs L316–324); `Audio` only
/// for the latter (Audio.cs L85); an active recording is always false (DtoService L253–256). So the same
/// `false` has four causes, and only one of them is the user's to change.
public enum DownloadRefusal: Equatable, Sendable {
    /// The user lacks `Policy.EnableContentDownloading`: every item says false, and Download answers 403.
    case userPolicy
    /// A disc folder (`VideoType` `Dvd` or `BluRay`, or an `Iso` a server refuses): no single file to send.
    case discFolder(videoType: String)
    /// A remote stream (`LocationType` `Remote`, or every media source `Protocol` other than `File`).
    case remoteStream
    /// A recording still in progress (`Type` `Recording`).
    case recording
    /// None of the above: the server gives no reason.
    case unexplained

    /// Tells the causes apart from what the item says of itself and what the user may do.
    ///
    /// - Parameters:
    ///   - userMayDownload: the user's `Policy.EnableContentDownloading`, nil when unknown (signed in with an
    ///     API key, or `/Users/Me` failed).
    public static func reason(
        type: String?, videoType: String?, locationType: String?, sourceProtocols: [String], userMayDownload: Bool?
    ) -> DownloadRefusal {
        // The policy first: with it off every item is false whatever else it is, so nothing else can be told.
        if userMayDownload == false { return .userPolicy }
        if let videoType, ["dvd", "bluray", "iso"].contains(videoType.lowercased()) {
            return .discFolder(videoType: videoType)
        }
        if type?.lowercased() == "recording" { return .recording }
        if locationType?.lowercased() == "remote"
            || (!sourceProtocols.isEmpty && sourceProtocols.allSatisfy { $0.lowercased() != "file" })
        {
            return .remoteStream
        }
        return .unexplained
    }

    /// The reason for one item of the server's listing.
    static func reason(for item: BaseItem, userMayDownload: Bool?) -> DownloadRefusal {
        reason(
            type: item.type, videoType: item.raw["VideoType"]?.stringValue, locationType: item.locationType,
            sourceProtocols: (item.mediaSources ?? []).compactMap(\.protocol), userMayDownload: userMayDownload)
    }

    /// One line for the report about `name`, true to the item (nil for ``userPolicy``, reported once per sync).
    public func line(name: String) -> String? {
        switch self {
        case .userPolicy:
            return nil
        case .discFolder(let videoType):
            let what =
                switch videoType.lowercased() {
                case "dvd": "a DVD folder"
                case "bluray": "a Blu-ray folder"
                default: "a disc image"
                }
            return "\(name) cannot be downloaded: it is \(what) (VideoType \(videoType)), which the server does not "
                + "send as one file; skipped"
        case .remoteStream:
            return "\(name) cannot be downloaded: it is a remote stream, not a file on the server; skipped"
        case .recording:
            return "\(name) cannot be downloaded yet: it is a recording still in progress; skipped"
        case .unexplained:
            return "\(name) cannot be downloaded: the server says so (CanDownload false) and gives no reason; skipped"
        }
    }

    /// The one line a sync reports when the user may not download.
    public static let policyLine =
        "Jellyfin: this user may not download (the server's Policy.EnableContentDownloading is off; an "
        + "administrator can allow media downloading in the user's settings): nothing was downloaded from Jellyfin"
}

/// The user's download permission, asked of the server once per sync and only when an item says it cannot be
/// downloaded (a sync where every item may be downloaded makes no request for it).
final class DownloadPermission: Sendable {
    private let server: any MediaServer
    private let answer = Locked<Task<Bool?, Never>?>(nil)

    init(server: any MediaServer) {
        self.server = server
    }

    /// `Policy.EnableContentDownloading`, nil when unknown.
    func userMayDownload() async -> Bool? {
        let task = answer.withLock { answer in
            if let answer { return answer }
            let server = self.server
            let task = Task { await server.userMayDownload() }
            answer = task
            return task
        }
        return await task.value
    }
}
