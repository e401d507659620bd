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
}
