/// Parses `itunes:duration`: seconds (`3723`), `MM:SS`, `HH:MM:SS`, each optionally with a fraction
/// (`1:02:03.5`); fractions are truncated. Anything else is `nil`.
enum DurationParser {
    static func seconds(_ text: String) -> Int? {
        var copy = text
        return copy.withUTF8 { seconds(bytes: $0) }
    }

    static func seconds(bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0A || bytes[start] == 0x0D
        {
            start += 1
        }
        while end > start,
            bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0A
                || bytes[end - 1] == 0x0D
        {
            end -= 1
        }
        guard start < end else { return nil }
        var total = 0
        var part = 0
        var digits = 0
        var parts = 1
        var inFraction = false
        for index in start..<end {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if !inFraction {
                    part = part * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                    guard part < 1_000_000_000 else { return nil }
                }
            case UInt8(ascii: ":"):
                guard digits > 0, !inFraction, parts < 3 else { return nil }
                total = total * 60 + part
                part = 0
                digits = 0
                parts += 1
            case UInt8(ascii: "."):
                guard digits > 0, !inFraction else { return nil }
                inFraction = true
            default:
                return nil
            }
        }
        guard digits > 0 else { return nil }
        return total * 60 + part
    }
}
