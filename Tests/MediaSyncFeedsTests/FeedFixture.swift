import Foundation

/// Finds the golden fixtures in `Fixtures/feeds` from this file's location (three levels below the package root).
enum FeedFixture {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let folder = packageRoot.appendingPathComponent("Fixtures/feeds")
    static let defaultBaseURL = "https://feeds.example.org/show.xml"

    /// Behaviour names: every `<name>.xml` in the folder.
    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.filter { $0.hasSuffix(".xml") }.map { String($0.dropLast(4)) }.sorted()
    }

    static func bytes(_ name: String, ext: String = "xml") throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent("\(name).\(ext)")))
    }
}
