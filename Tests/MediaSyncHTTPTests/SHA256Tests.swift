import Testing

@testable import MediaSyncHTTP

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func knownVectors(input: String, digest: String) {
        #expect(SHA256.hex(Array(input.utf8)) == digest)
    }

    @Test func chunkedUpdatesMatchOneShot() {
        let bytes = testBytes(10_000)
        var hasher = SHA256()
        for chunk in stride(from: 0, to: bytes.count, by: 777) {
            bytes[chunk..<min(chunk + 777, bytes.count)].withUnsafeBytes { hasher.update($0) }
        }
        #expect(hasher.finalize() == SHA256.hex(bytes))
        #expect(
            SHA256.hex(Array(repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
