import Foundation
import MediaSyncTestSupport

/// SHA-256 from coreutils' `sha256sum`, an implementation independent of ours.
enum SHA256Reference {
    static func hex(_ bytes: [UInt8]) -> String {
        let output = (try? Spawned("/usr/bin/sha256sum", [], input: bytes).finish().stdout) ?? ""
        return output.split(separator: " ").first.map(String.init) ?? ""
    }
}
