/// Which Jellyfin version the test server answers like (`--jellyfin 10.8|10.9|10.10|10.11`, default the newest).
///
/// Modelled from Jellyfin's code (tags v10.8.13, v10.9.11, v10.10.7, v10.11.11; see
/// `../shared/jellyfin-api/SERVER-FACTS.md`):
/// - 10.8 has no `/UserViews` (only `/Users/{userId}/Views`, `UserViewsController` 10.8.13 L69) and no
///   `GET /Items/{itemId}` (405, `Allow: DELETE, POST`; only `/Users/{userId}/Items/{itemId}`, `UserLibraryController`
///   10.8.13 L73); Quick Connect `Initiate` is GET only (POST → 405, `QuickConnectController` 10.8.13 L53);
///   `PlaybackInfo` needs `userId` (`MediaInfoController`).
/// - 10.9+: `POST /QuickConnect/Initiate` (GET kept as obsolete, 10.9.11 L53 + L74), `/UserViews?userId=`.
/// - Listing order without `sortBy`: 10.10 sends no ORDER BY (here: library order); 10.11 orders by `SortName` only
///   and with `sortBy=SortName` adds `Name` (`BaseItemRepository.ApplyOrder`, v10.11.11): ties come in any order,
///   here a shuffle seeded per request, so two pages of one listing may order ties differently.
public enum JellyfinProfile: String, Sendable, CaseIterable {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case v10_8 = "10.8"
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case v10_9 = "10.9"
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case v10_10 = "10.10"
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case v10_11 = "10.11"

    /// The newest: what the test server answers like unless told otherwise.
    public static let newest = JellyfinProfile.v10_11

    /// `Version` in `/System/Info/Public`.
    public var version: String {
        switch self {
        case .v10_8: return "10.8.13"
        case .v10_9: return "10.9.11"
        case .v10_10: return "10.10.7"
        case .v10_11: return "10.11.11"
        }
    }

    /// Whether this version has the 10.9 routes (`/UserViews`, `GET /Items/{id}`, `POST /QuickConnect/Initiate`).
    public var hasUnifiedRoutes: Bool { self != .v10_8 }
}
