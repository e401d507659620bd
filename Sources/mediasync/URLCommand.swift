import ArgumentParser
import MediaSync

/// `mediasync url`: the server URLs for an item (the token is never put in a URL; send the auth header).
struct URLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "url", abstract: "Print an item's download, image or subtitle URL.")

    @Argument(help: "The item's id.")
    var item: String

    @Option(help: "The version (media source id) to download; default: the item itself.")
    var version: String?

    @Option(help: "Print the URL of this image type instead (Primary, Backdrop, …).")
    var image: String?

    @Option(help: "Print the URL of the external subtitle stream with this index instead.")
    var subtitle: Int?

    @Option(help: "The subtitle format (srt, vtt, ass).")
    var format = "srt"

    func run() async throws {
        try await reportingErrors {
            let client = try Session.open(config: ConfigDirectory.resolve()).client
            if let image {
                let width = image.lowercased() == "backdrop" ? MirrorFiles.backdropWidth : MirrorFiles.primaryWidth
                print(try client.imageURL(itemId: item, type: image, index: nil, tag: nil, maxWidth: width))
            } else if let subtitle {
                print(
                    try client.subtitleURL(
                        itemId: item, mediaSourceId: version ?? item, streamIndex: subtitle, format: format))
            } else {
                print(try client.downloadURL(mediaSourceId: version ?? item))
            }
        }
    }
}
