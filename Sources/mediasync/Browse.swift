import ArgumentParser
import Foundation
import MediaSync

/// `mediasync browse`: what is on the server.
struct Browse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the server's libraries, movies, series, seasons or episodes.")

    @Option(help: "What to list: \(ServerBrowser.ItemType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var type: ServerBrowser.ItemType = .library

    @Option(help: "Only items whose name contains this text.")
    var search: String?

    @Option(help: "Only items under this library, series or season id.")
    var parent: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let session = try Session.open(config: ConfigDirectory.resolve())
            let rows = try await ServerBrowser(session: session).list(type, search: search, parent: parent)
            try Table.print(rows, json: json, header: ["ID", "TYPE", "NAME", "DETAIL"]) {
                rows.map { [$0.id, $0.type ?? "?", $0.name ?? "", $0.detail] }
            }
        }
    }
}

extension ServerBrowser.ItemType: ExpressibleByArgument {}

/// Plain tables for people.
enum Table {
    static func print(header: [String], rows: [[String]]) {
        guard !rows.isEmpty else {
            Swift.print("(none)")
            return
        }
        for line in TextTable.lines(header: header, rows: rows) { Swift.print(line) }
    }

    /// What `--json` chooses between: `value` as JSON for scripts, or for people the table of `rows` under `header`.
    static func print<Value: Encodable>(_ value: Value, json: Bool, header: [String], rows: () -> [[String]]) throws {
        if json {
            Swift.print(try JSONText.encode(value))
        } else {
            print(header: header, rows: rows())
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
