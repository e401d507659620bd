/// Converts UTF-16 documents (recognised by their BOM, or by `<` followed or preceded by a zero byte) to UTF-8, so
/// the byte-level preparation in ``InputRewriter`` only ever deals with ASCII-compatible input.
enum UTF16Input {
    /// Whether a document starting with these two bytes is read as UTF-16.
    static func isUTF16(_ first: UInt8, _ second: UInt8) -> Bool {
        switch (first, second) {
        case (0xFE, 0xFF), (0xFF, 0xFE), (0x00, 0x3C), (0x3C, 0x00): true
        default: false
        }
    }

    static func utf8(from bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 2 else { return nil }
        let bigEndian: Bool
        var start = 0
        switch (bytes[0], bytes[1]) {
        case (0xFE, 0xFF):
            bigEndian = true
            start = 2
        case (0xFF, 0xFE):
            bigEndian = false
            start = 2
        case (0x00, 0x3C): bigEndian = true
        case (0x3C, 0x00): bigEndian = false
        default: return nil
        }
        var units: [UInt16] = []
        units.reserveCapacity((bytes.count - start) / 2)
        var index = start
        while index + 1 < bytes.count {
            let high = UInt16(bytes[bigEndian ? index : index + 1])
            let low = UInt16(bytes[bigEndian ? index + 1 : index])
            units.append(high << 8 | low)
            index += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }
}
