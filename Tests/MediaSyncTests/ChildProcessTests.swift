import Foundation
import Testing

@testable import MediaSyncMirror

#if canImport(Glibc)
    import Glibc
#endif

/// The external programs' runner (mpv, ffmpeg): exit status, signals, a failed start in one line, output to a pipe.
@Suite struct ChildProcessTests {
    @Test func exitStatusAndSignal() throws {
        let exited = try ChildProcess(name: "sh", executable: "/bin/sh", arguments: ["-c", "exit 3"])
        #expect(exited.wait() == 3)
        #expect(!exited.isRunning)
        let killed = try ChildProcess(name: "sh", executable: "/bin/sh", arguments: ["-c", "kill -TERM $$"])
        #expect(killed.wait() == -SIGTERM)
    }

    @Test func aProgramThatCannotStartIsOneLine() {
        #expect {
            try ChildProcess(name: "mpv", executable: "/nonexistent/mpv", arguments: [])
        } throws: { error in
            "\(error)" == "mpv (/nonexistent/mpv) could not be started: No such file or directory"
        }
    }

    @Test func outputGoesToTheDescriptorGiven() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let child = try ChildProcess(
            name: "sh", executable: "/bin/sh", arguments: ["-c", "echo hello >&2"], error: .descriptor(ends[1]))
        close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(ends[0], &buffer, buffer.count)
        close(ends[0])
        #expect(child.wait() == 0)
        #expect(count == 6 && String(decoding: buffer[0..<6], as: UTF8.self) == "hello\n")
    }
}
