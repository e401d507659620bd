import ArgumentParser
import Foundation
import MediaSync

/// `mediasync schedule print`: the systemd units and the cron line for unattended runs, filled in.
struct Schedule: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run mediasync every night with systemd or cron.", subcommands: [Print.self])

    struct Print: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a systemd user service and timer, and a cron line, for this binary and root.")

        @Option(help: "What to print: systemd or cron.")
        var format: Format = .systemd

        @OptionGroup var rootOptions: RootOptions

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case systemd, cron
        }

        func run() async throws {
            let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            let root = rootOptions.mirrorRoot.path
            func fill(_ template: String) -> String {
                template.replacingOccurrences(of: "@ROOT@", with: root).replacingOccurrences(
                    of: "@BINARY@", with: binary)
            }
            switch format {
            case .cron:
                print(fill(ScheduleTemplates.cron))
            case .systemd:
                print("# ~/.config/systemd/user/mediasync.service")
                print(fill(ScheduleTemplates.service))
                print("# ~/.config/systemd/user/mediasync.timer")
                print(fill(ScheduleTemplates.timer))
                print("# then: systemctl --user daemon-reload && systemctl --user enable --now mediasync.timer")
            }
        }
    }
}

/// The same units as `Scripts/schedule/`, with `@ROOT@` and `@BINARY@` to fill in.
enum ScheduleTemplates {
    static let service = """
        [Unit]
        Description=Mirror Jellyfin selections and podcasts (mediasync)
        Wants=network-online.target
        After=network-online.target

        [Service]
        Type=oneshot
        Environment=MEDIASYNC_ROOT=@ROOT@
        ExecStart=@BINARY@ sync --max-delete 50
        Nice=10
        IOSchedulingClass=idle

        """

    static let timer = """
        [Unit]
        Description=Nightly mediasync

        [Timer]
        OnCalendar=*-*-* 03:30
        RandomizedDelaySec=15m
        Persistent=true

        [Install]
        WantedBy=timers.target

        """

    static let cron = "30 3 * * *  MEDIASYNC_ROOT=@ROOT@ @BINARY@ sync --quiet --max-delete 50"
}
