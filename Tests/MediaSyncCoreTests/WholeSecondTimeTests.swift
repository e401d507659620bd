import Foundation
import MediaSyncCore
import Testing

@Suite struct WholeSecondTimeTests {
    /// The text put together by hand is Foundation's `ISO8601DateFormatter` text (`.withInternetDateTime`), to the
    /// byte, across the epoch, leap days, the ends of years and fractions of seconds (cut, not rounded); dates before
    /// 1600 (Julian in Foundation's calendar) and past 9999 are Foundation's own.
    @Test(arguments: [
        0, -1, 1, 59.999, 951_782_400, 951_868_799.5, 1_798_761_599, 1_798_761_600, 1_700_000_000.25, -2_208_988_800,
        -62_135_596_800, 253_402_300_799,
    ])
    func matchesFoundationsFormatter(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        #expect(WholeSecondTime.string(date) == formatter.string(from: date))
        #expect(
            WholeSecondTime.date(WholeSecondTime.string(date))
                == formatter.date(from: formatter.string(from: date)))
    }
}
