import Foundation
import Hummingbird
import MediaSyncCore
import MediaSyncJSON
import MediaSyncMirror

/// Trickplay and media segments, answered from the mirror alone.
extension ServeResponder {
    /// `GET /Videos/{itemId}/Trickplay/{width}/tiles.m3u8?mediaSourceId=` (`TrickplayController` L50–67): the playlist
    /// of `mediaSourceId ?? itemId` as `TrickplayManager.GetHlsPlaylist` writes it (L538–608, v10.10.7: the tile URLs
    /// carry the caller's token as `api_key`), for a width whose every tile is held; else 404.
    func trickplayPlaylist(_ id: String, width: Int, _ call: Call) throws -> Response {
        let (item, version) = try trickplayVersion(id, call)
        guard let (_, info, _) = JellyfinDTO.heldTrickplay(item, version).first(where: { $0.0 == width }),
            let text = TrickplayText.playlist(
                info, mediaSourceId: ServeIds.plain(version.id), tokenKey: "api_key",
                token: call.authorization.token ?? "")
        else { throw ServeFailure(.notFound, "no trickplay at that width") }
        return Self.text(text, contentType: "application/x-mpegURL")
    }

    /// `GET /Videos/{itemId}/Trickplay/{width}/{index}.jpg` (`TrickplayController` L79–104): the held tile, as an
    /// attachment (`image/jpeg`, ranges); 404 past the last one. `mediaSourceId` names the version when given, as
    /// 10.11 reads it (a version's own id in the path names it either way).
    func trickplayTile(_ id: String, width: Int, index: Int, _ call: Call) async throws -> Response {
        let (_, version) = try trickplayVersion(id, call)
        guard let tile = version.trickplay[width]?[index] else { throw ServeFailure(.notFound, "no such tile") }
        return try await file(tile, contentType: "image/jpeg", call, downloadName: "\(index).jpg")
    }

    /// The version a trickplay request names: `mediaSourceId`, else the id in the path.
    private func trickplayVersion(_ id: String, _ call: Call) throws -> (CatalogItem, HeldVersion) {
        let wanted = call.query.nonEmpty("mediaSourceId") ?? id
        guard ServeIds.isAcceptable(wanted) else { throw ServeFailure(.badRequest, "not an item id") }
        guard let found = state.catalog().version(wanted) else { throw ServeFailure(.notFound, "no such item") }
        return (found.item, found.version)
    }

    /// `GET /MediaSegments/{itemId}?includeSegmentTypes=` (`MediaSegmentsController` L45–60, v10.10.7): the held
    /// segments of the version (or item) with that id, ordered by start, only the types asked for (every type when
    /// none is); an item without segments → 200 with none; an unknown id → 404.
    func mediaSegments(_ id: String, _ call: Call) throws -> Response {
        guard ServeIds.isAcceptable(id) else { throw ServeFailure(.badRequest, "not an item id") }
        let catalog = state.catalog()
        let version: HeldVersion?
        if let found = catalog.version(id) {
            version = found.version
        } else if let item = catalog.item(id) {
            version = item.versions.first
        } else {
            throw ServeFailure(.notFound, "no such item")
        }
        let types = Set(call.query.list("includeSegmentTypes").map { $0.lowercased() })
        var segments: [JSONValue] = []
        if let held = version?.segments, let bytes = FileManager.default.contents(atPath: held.path),
            let document = try? JSONValue(parsing: [UInt8](bytes))
        {
            segments = (document["Items"]?.arrayValue ?? []).filter { segment in
                types.isEmpty || types.contains((segment["Type"]?.stringValue ?? "").lowercased())
            }
            segments.sort { ($0["StartTicks"]?.intValue ?? 0) < ($1["StartTicks"]?.intValue ?? 0) }
        }
        return Self.json(Self.queryResult(segments, total: segments.count, start: 0))
    }
}
