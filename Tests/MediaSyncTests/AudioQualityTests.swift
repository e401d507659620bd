import MediaSyncJSON
import MediaSyncServer
import Testing

@testable import MediaSyncMirror

/// Which tracks are kept as they are at a quality, and what a transcode is planned as.
@Suite struct AudioQualityTests {
    static func source(container: String, codec: String, bitrate: Int?, streamBitrate: Int? = nil) -> MediaSource {
        var stream = #"{"Type":"Audio","Codec":"\#(codec)","Channels":2"#
        if let streamBitrate { stream += #","BitRate":\#(streamBitrate)"# }
        stream += "}"
        let rate = bitrate.map { #","Bitrate":\#($0)"# } ?? ""
        let text = #"{"Id":"s","Container":"\#(container)"\#(rate),"MediaStreams":[\#(stream)]}"#
        return MediaSource(unchecked: (try? JSONValue(parsing: Array(text.utf8))) ?? .null)
    }

    static let cases: [(what: String, quality: AudioQuality, source: MediaSource, fits: Bool)] = [
        (
            "an MP3 within the cap", AudioQuality(codec: "mp3", maxBitrate: 192_000),
            source(container: "mp3", codec: "mp3", bitrate: 128_000), true
        ),
        (
            "an MP3 over the cap", AudioQuality(codec: "mp3", maxBitrate: 128_000),
            source(container: "mp3", codec: "mp3", bitrate: 320_000), false
        ),
        (
            "FLAC never fits a lossy codec", AudioQuality(codec: "opus", maxBitrate: 1_000_000),
            source(container: "flac", codec: "flac", bitrate: 900_000), false
        ),
        (
            "AAC in ffprobe's MP4 list", AudioQuality(codec: "aac", maxBitrate: 256_000),
            source(container: "mov,mp4,m4a,3gp,3g2,mj2", codec: "aac", bitrate: 256_000), true
        ),
        (
            "Opus in Ogg, the stream's bit rate when the source has none",
            AudioQuality(codec: "opus", maxBitrate: 128_000),
            source(container: "ogg", codec: "opus", bitrate: nil, streamBitrate: 96_000), true
        ),
        (
            "an unknown bit rate is not taken to fit", AudioQuality(codec: "mp3", maxBitrate: 320_000),
            source(container: "mp3", codec: "mp3", bitrate: nil), false
        ),
        (
            "the codec asked in another codec's container", AudioQuality(codec: "mp3", maxBitrate: 320_000),
            source(container: "mkv", codec: "mp3", bitrate: 128_000), false
        ),
    ]

    @Test(arguments: 0..<cases.count)
    func aTrackIsKeptAsItIsOnlyWhenItAlreadyFits(_ index: Int) {
        let (what, quality, source, fits) = Self.cases[index]
        #expect(quality.fits(source) == fits, "\(what)")
    }

    @Test func aTranscodeIsPlannedAtTheServersCap() {
        let opus = AudioQuality(codec: "opus", maxBitrate: 320_000)
        #expect(opus.container == "ogg")
        #expect(AudioQuality(codec: "aac", maxBitrate: 128_000).container == "aac")
        #expect(AudioQuality(codec: "mp3", maxBitrate: 128_000).container == "mp3")
        // Stereo is capped at 256 kbit/s whatever was asked: 60 s is 1.92 MB.
        #expect(opus.estimatedBytes(runtimeTicks: 600_000_000, channels: 2) == 1_920_000)
        #expect(
            AudioQuality(codec: "mp3", maxBitrate: 128_000).estimatedBytes(runtimeTicks: 600_000_000, channels: 2)
                == 960_000)
        #expect(opus.estimatedBytes(runtimeTicks: nil, channels: 2) == nil)
        #expect(opus.signature != AudioQuality(codec: "opus", maxBitrate: 256_000).signature)
    }
}
