import Foundation

/// The playing time of a held podcast file, read from its own headers (no external program): MP3 (the frame count
/// of a Xing/Info or VBRI header, else the first frame's bit rate over the file's size) and MP4/M4A (the `mvhd`
/// box's duration). Nil for anything else, or for a file whose headers do not add up.
public enum MediaDuration {
    /// How much of an MP3 file's start is read to find its first frame (past an ID3v2 tag).
    static let headLength = 64 << 10

    /// The file's duration in whole seconds (rounded), or nil when it cannot be known.
    public static func seconds(ofFileAt path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size > 0 else { return nil }
        let duration: Double?
        if let mp4 = mp4Seconds(size: Int64(size), read: { offset, count in read(handle, offset, count) }) {
            duration = mp4
        } else {
            duration = mp3Seconds(
                read: { offset, count in read(handle, offset, count) }, fileSize: Int64(size))
        }
        guard let duration, duration.isFinite, duration > 0, duration < 1e7 else { return nil }
        return Int(duration.rounded())
    }

    private static func read(_ handle: FileHandle, _ offset: Int64, _ count: Int) -> [UInt8] {
        guard offset >= 0, count > 0, (try? handle.seek(toOffset: UInt64(offset))) != nil,
            let data = try? handle.read(upToCount: count)
        else { return [] }
        return [UInt8](data)
    }

    // MARK: MP3

    /// One MPEG audio frame header.
    struct FrameHeader: Equatable {
        var mpeg1: Bool
        var layer: Int
        var bitrate: Int
        var sampleRate: Int
        var padding: Bool
        var mono: Bool

        var samplesPerFrame: Int { layer == 1 ? 384 : (layer == 3 && !mpeg1 ? 576 : 1152) }

        var length: Int {
            if layer == 1 { return (12 * bitrate / sampleRate + (padding ? 1 : 0)) * 4 }
            let factor = layer == 3 && !mpeg1 ? 72 : 144
            return factor * bitrate / sampleRate + (padding ? 1 : 0)
        }

        /// Reads the four bytes at `offset`; nil when they are not a valid frame header.
        init?(_ bytes: [UInt8], at offset: Int) {
            guard offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xE0 == 0xE0 else {
                return nil
            }
            let version = Int(bytes[offset + 1] >> 3) & 3
            let layerBits = Int(bytes[offset + 1] >> 1) & 3
            let bitrateIndex = Int(bytes[offset + 2] >> 4)
            let rateIndex = Int(bytes[offset + 2] >> 2) & 3
            guard version != 1, layerBits != 0, (1...14).contains(bitrateIndex), rateIndex < 3 else { return nil }
            mpeg1 = version == 3
            layer = 4 - layerBits
            let kbps: [Int]
            switch (mpeg1, layer) {
            case (true, 1): kbps = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
            case (true, 2): kbps = [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
            case (true, _): kbps = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            case (false, 1): kbps = [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
            case (false, _): kbps = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
            }
            bitrate = kbps[bitrateIndex - 1] * 1000
            let base = [44_100, 48_000, 32_000][rateIndex]
            sampleRate = version == 3 ? base : (version == 2 ? base / 2 : base / 4)
            padding = bytes[offset + 2] & 0x02 != 0
            mono = bytes[offset + 3] >> 6 == 3
        }
    }

    /// An MP3 file's duration in seconds: past an ID3v2 tag, the first frame whose successor is a frame too; its
    /// Xing/Info or VBRI frame count when it has one, else (a constant bit rate) the bytes from it to the end over
    /// its bit rate.
    static func mp3Seconds(read: (Int64, Int) -> [UInt8], fileSize: Int64) -> Double? {
        var start: Int64 = 0
        let tag = read(0, 10)
        if tag.count == 10, tag[0] == 0x49, tag[1] == 0x44, tag[2] == 0x33 {
            let size = tag[6...9].reduce(Int64(0)) { $0 << 7 | Int64($1 & 0x7F) }
            start = 10 + size + (tag[5] & 0x10 != 0 ? 10 : 0)
        }
        let head = read(start, headLength)
        var offset = 0
        while offset + 4 <= head.count {
            guard let frame = FrameHeader(head, at: offset), frame.length > 4 else {
                offset += 1
                continue
            }
            let next = offset + frame.length
            let followed = next + 4 > head.count ? start + Int64(next) >= fileSize : FrameHeader(head, at: next) != nil
            guard followed else {
                offset += 1
                continue
            }
            let sideInfo = frame.mpeg1 ? (frame.mono ? 17 : 32) : (frame.mono ? 9 : 17)
            let perFrame = Double(frame.samplesPerFrame) / Double(frame.sampleRate)
            let xing = offset + 4 + sideInfo
            if let frames = infoFrames(head, at: xing) { return Double(frames) * perFrame }
            if let frames = vbriFrames(head, at: offset + 36) { return Double(frames) * perFrame }
            let audioBytes = fileSize - start - Int64(offset)
            return Double(audioBytes) * 8 / Double(frame.bitrate)
        }
        return nil
    }

    private static func word(_ bytes: [UInt8], _ offset: Int) -> Int? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The frame count of a Xing or Info header at `offset`, when it has one.
    private static func infoFrames(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard offset + 12 <= bytes.count else { return nil }
        let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
        guard id == "Xing" || id == "Info", let flags = word(bytes, offset + 4), flags & 1 != 0,
            let frames = word(bytes, offset + 8), frames > 0
        else { return nil }
        return frames
    }

    /// The frame count of a VBRI header at `offset`, when there is one.
    private static func vbriFrames(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard offset + 18 <= bytes.count, String(decoding: bytes[offset..<offset + 4], as: UTF8.self) == "VBRI",
            let frames = word(bytes, offset + 14), frames > 0
        else { return nil }
        return frames
    }

    // MARK: MP4

    /// An MP4/M4A file's duration in seconds: its top-level `moov` box's `mvhd` duration over its time scale.
    static func mp4Seconds(size: Int64, read: (Int64, Int) -> [UInt8]) -> Double? {
        let first = read(0, 8)
        guard first.count == 8, String(decoding: first[4..<8], as: UTF8.self) == "ftyp" else { return nil }
        guard let moov = box("moov", from: 0, to: size, read: read),
            let mvhd = box("mvhd", from: moov.start, to: moov.end, read: read)
        else { return nil }
        let body = read(mvhd.start, 32)
        guard let version = body.first else { return nil }
        let (scaleAt, durationAt, durationLength) = version == 1 ? (20, 24, 8) : (12, 16, 4)
        guard body.count >= durationAt + durationLength, let scale = word(body, scaleAt), scale > 0 else {
            return nil
        }
        let duration = body[durationAt..<durationAt + durationLength].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard duration != UInt64.max, duration != UInt64(UInt32.max) else { return nil }
        return Double(duration) / Double(scale)
    }

    /// The body of the first box of a type among the boxes in `[start, end)`.
    private static func box(_ type: String, from start: Int64, to end: Int64, read: (Int64, Int) -> [UInt8])
        -> (start: Int64, end: Int64)?
    {
        var offset = start
        for _ in 0..<10_000 {
            guard offset + 8 <= end else { return nil }
            let header = read(offset, 16)
            guard header.count >= 8, let small = word(header, 0) else { return nil }
            var length = Int64(small)
            var headerLength: Int64 = 8
            if small == 1 {
                guard header.count == 16 else { return nil }
                length = Int64(bitPattern: header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                headerLength = 16
            } else if small == 0 {
                length = end - offset
            }
            guard length >= headerLength, offset + length <= end else { return nil }
            if String(decoding: header[4..<8], as: UTF8.self) == type {
                return (offset + headerLength, offset + length)
            }
            offset += length
        }
        return nil
    }
}
