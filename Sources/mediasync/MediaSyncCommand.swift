import ArgumentParser
import MediaSync

@main
struct MediaSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediasync",
        abstract: "Keep an offline mirror of a Jellyfin server and of podcast feeds.",
        version: MediaSyncVersion.string,
        subcommands: [
            Login.self, Logout.self, Browse.self, Select.self, Unselect.self, Selections.self, Sync.self,
            URLCommand.self, Podcast.self, PathCommand.self, DiskUsage.self, Verify.self, Remove.self,
            GarbageCollect.self, Reindex.self, List.self, Schedule.self, Export.self,
            Get.self, Played.self, Play.self, Config.self, Serve.self,
        ]
    )

    /// ArgumentParser's own start, after making sure descriptors 0, 1 and 2 are open: started with one closed, the
    /// first file this process opened would take its number.
    static func main() async {
        StandardStreams.openMissing()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
