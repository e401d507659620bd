import MediaSyncJSON
import MediaSyncServe
import Testing

/// An item's upstream object as the catalog keeps it (packed names, values that are the item's fields kept once)
/// reads back as it was given: the looked-up members first, then the rest, without its own `MediaStreams`.
@Suite struct CatalogItemTests {
    static let id = "0123456789abcdef0123456789abcdef"

    static func upstream(name: String = "A \u{1}\u{2} \"film\"") -> JSONObject {
        JSONObject([
            JSONMember("Name", .string(name)), JSONMember("Id", .string(id)), JSONMember("ServerId", .string("s")),
            JSONMember("DateCreated", .string("2026-01-01T00:00:00.0000000Z")),
            JSONMember("PremiereDate", .string("2001-02-03T00:00:00.0000000Z")),
            JSONMember("RunTimeTicks", .number(72_000_000_000)), JSONMember("Type", .string("Movie")),
            JSONMember("Not A Known Name \u{1}", .array([.null, .bool(true), .number(1.5)])),
            JSONMember("MediaStreams", .array([.object(JSONObject([JSONMember("Codec", .string("h264"))]))])),
            JSONMember(
                "MediaSources",
                .array([
                    .object(
                        JSONObject([
                            JSONMember("Id", .string(id)), JSONMember("Name", .string(name)),
                            JSONMember("RunTimeTicks", .number(72_000_000_000)),
                        ]))
                ])),
            JSONMember("UserData", .object(JSONObject([JSONMember("Played", .bool(true))]))),
        ])
    }

    static func item(_ raw: JSONObject, name: String = "A \u{1}\u{2} \"film\"") -> CatalogItem {
        CatalogItem(
            id: id, type: "Movie", name: name, dateCreated: "2026-01-01T00:00:00.0000000Z",
            premiereDate: "1999-01-01T00:00:00.0000000Z", runTimeTicks: 72_000_000_000, raw: raw)
    }

    /// The object given, the looked-up members first and without `MediaStreams`.
    static func expected(_ raw: JSONObject) -> JSONObject {
        let kept = raw.members.filter { $0.key != "MediaStreams" }
        return JSONObject(
            kept.filter { CatalogItem.lookupKeys.contains($0.key) }
                + kept.filter { !CatalogItem.lookupKeys.contains($0.key) })
    }

    @Test func theUpstreamObjectReadsBackAsGiven() {
        let raw = Self.upstream()
        let item = Self.item(raw)
        #expect(item.raw == Self.expected(raw))
        #expect(JSONWriter.compactBytes(.object(item.raw)) == JSONWriter.compactBytes(.object(Self.expected(raw))))
        #expect(item.upstream("Id") == .string(Self.id))
        #expect(item.upstream("Name") == raw["Name"])
        #expect(item.upstreamUserData == JSONObject([JSONMember("Played", .bool(true))]))
        // A name that is not the item's field is kept as it is.
        let other = Self.item(Self.upstream(name: "Upstream"), name: "Local")
        #expect(other.raw["Name"] == .string("Upstream"))
    }

    /// An item given another id (an alternate version answered as an item) keeps its upstream object's `Id` and its
    /// mark id until they are changed.
    @Test func anotherIdLeavesTheUpstreamObjectAsItWas() {
        var item = Self.item(Self.upstream())
        item.id = "fedcba9876543210fedcba9876543210"
        #expect(item.upstream("Id") == .string(Self.id))
        #expect(item.markId == Self.id)
        #expect(item.raw == Self.expected(Self.upstream()))
        item.raw["Id"] = .string(item.id)
        #expect(item.upstream("Id") == .string("fedcba9876543210fedcba9876543210"))
        item.raw["Name"] = .string("Renamed")
        #expect(item.raw["Name"] == .string("Renamed"))
        #expect(item.name == "A \u{1}\u{2} \"film\"")
    }
}
