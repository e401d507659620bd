import ArgumentParser
import Foundation
import MediaSync
import MediaSyncCore
import MediaSyncServer

/// `mediasync browse`: what is on the server.
struct Browse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the server's libraries, movies, series, seasons or episodes.")

    enum ItemType: String, ExpressibleByArgument, CaseIterable {
        case library, movie, series, season, episode
    }

    @Option(help: "What to list: \(ItemType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: ItemType = .library

    @Option(help: "Only items whose name contains this text.")
    var search: String?

    @Option(help: "Only items under this library, series or season id.")
    var parent: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let session = try Session.open(config: ConfigDirectory.resolve())
            let items: [BaseItem]
            switch type {
            case .library:
                items = try await session.client.userViews()
            case .season where parent != nil:
                items = try await session.client.seasons(seriesId: parent ?? "")
            default:
                let typeName =
                    ["movie": "Movie", "series": "Series", "season": "Season", "episode": "Episode"][type.rawValue]
                    ?? ""
                items = try await session.client.items(
                    ItemsQuery(parentId: parent, recursive: true, includeItemTypes: [typeName], searchTerm: search))
            }
            let rows = items.filter {
                search == nil || type != .library || ($0.name ?? "").localizedCaseInsensitiveContains(search ?? "")
            }
            if json {
                print(try JSONText.encode(rows.map(BrowseRow.init)))
            } else {
                Table.print(
                    header: ["ID", "TYPE", "NAME", "DETAIL"],
                    rows: rows.map { [$0.id, $0.type ?? "?", $0.name ?? "", BrowseRow.detail($0)] })
            }
        }
    }
}

/// One listed item, as `browse --json` prints it.
struct BrowseRow: Encodable {
    var id: String
    var type: String?
    var name: String?
    var seriesName: String?
    var seasonNumber: Int?
    var episodeNumber: Int?
    var year: Int?
    var collectionType: String?
    var versions: Int?

    init(_ item: BaseItem) {
        id = item.id
        type = item.type
        name = item.name
        seriesName = item.seriesName
        seasonNumber = item.type == "Season" ? item.indexNumber : item.parentIndexNumber
        episodeNumber = item.type == "Episode" ? item.indexNumber : nil
        year = item.productionYear
        collectionType = item.collectionType
        versions = item.mediaSources?.count
    }

    static func detail(_ item: BaseItem) -> String {
        switch item.type {
        case "Episode":
            let season = item.parentIndexNumber.map { String(format: "S%02d", $0) } ?? ""
            let episode = item.indexNumber.map { String(format: "E%02d", $0) } ?? ""
            return [item.seriesName ?? "", season + episode].filter { !$0.isEmpty }.joined(separator: " ")
        case "Season":
            return item.seriesName ?? ""
        case "CollectionFolder", "UserView":
            return item.collectionType ?? ""
        default:
            var parts: [String] = []
            if let year = item.productionYear { parts.append(String(year)) }
            if let count = item.mediaSources?.count, count > 1 { parts.append("\(count) versions") }
            return parts.joined(separator: ", ")
        }
    }
}

/// Plain tables for people.
enum Table {
    static func print(header: [String], rows: [[String]]) {
        guard !rows.isEmpty else {
            Swift.print("(none)")
            return
        }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { column, text in
                column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            Swift.print(cells.joined(separator: "  "))
        }
    }
}

/// JSON output for scripts: sorted keys, pretty printed.
enum JSONText {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
