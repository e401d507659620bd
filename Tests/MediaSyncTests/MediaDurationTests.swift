import Foundation
import MediaSyncTestSupport
import Testing

@testable import MediaSyncMirror

/// The length of a held podcast file, read from its own headers (a feed without `itunes:duration`).
@Suite struct MediaDurationTests {
    static func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    static func be64(_ value: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { be32(body.count + 8) + Array(type.utf8) + body }

    /// MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, stereo, no padding: 417 bytes and 1,152 samples a frame.
    static let frameHeader: [UInt8] = [0xFF, 0xFB, 0x90, 0x00]

    static func frames(_ count: Int) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: 417)
        frame[0...3] = frameHeader[0...3]
        return Array((0..<count).map { _ in frame }.joined())
    }

    /// An MP3 whose first frame is an Info header saying `count` frames follow (a variable bit rate file's way).
    static func infoMP3(frames count: Int) -> [UInt8] {
        var first = [UInt8](repeating: 0, count: 417)
        first[0...3] = frameHeader[0...3]
        let info = Array("Info".utf8) + be32(1) + be32(count)
        first[36..<48] = info[0..<12]
        // An ID3v2 tag of 100 bytes before it (sizes are 7 bits a byte).
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 100] + [UInt8](repeating: 0x41, count: 100)
        return tag + first + frames(20)
    }

    static func mp4(version: Int, scale: Int, duration: Int) -> [UInt8] {
        let mvhd: [UInt8] =
            version == 1
            ? [1, 0, 0, 0] + be64(0) + be64(0) + be32(scale) + be64(duration)
            : [0, 0, 0, 0] + be32(0) + be32(0) + be32(scale) + be32(duration)
        let ftyp = box("ftyp", Array("M4A ".utf8) + be32(0))
        // The media data first and the index last, as many encoders write it.
        return ftyp + box("mdat", [UInt8](repeating: 0xAB, count: 5_000))
            + box("moov", box("mvhd", mvhd + [UInt8](repeating: 0, count: 80)) + box("trak", []))
    }

    static let cases: [(String, [UInt8], Int?)] = [
        ("constant bit rate MP3: size over bit rate", frames(2300), 60),
        ("ID3v2 tag and Info frame count", infoMP3(frames: 4594), 120),
        ("M4A, mvhd version 0", mp4(version: 0, scale: 1000, duration: 90_400), 90),
        ("M4A, mvhd version 1", mp4(version: 1, scale: 44_100, duration: 44_100 * 300), 300),
        ("bytes that are not audio", [UInt8](repeating: 3, count: 2000), nil),
        ("a frame header not followed by a frame", frameHeader + [UInt8](repeating: 0, count: 1000), nil),
        ("an empty file", [], nil),
        ("an MP4 without moov", box("ftyp", Array("isom".utf8)) + box("mdat", [1, 2, 3]), nil),
    ]

    @Test(arguments: cases.indices)
    func lengthFromTheFilesHeaders(_ index: Int) throws {
        let (name, bytes, expected) = Self.cases[index]
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("episode")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(MediaDuration.seconds(ofFileAt: path) == expected, "\(name)")
    }
}
