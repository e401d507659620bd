import Testing

@testable import MediaSyncHTTP

@Suite struct HTTPHeadersTests {
    @Test(arguments: [
        ("ETag", "etag", true), ("Content-Type", "CONTENT-TYPE", true), ("content-type", "Content-Type", true),
        ("ETag", "ETags", false), ("X-A", "X-B", false), ("X@", "X`", false), ("X[", "X{", false), ("", "", true),
        ("Ü", "ü", false),
    ])
    func namesMatchWithoutCaseForASCIILettersOnly(_ one: String, _ other: String, _ same: Bool) {
        #expect(HTTPHeaders.sameName(one, other) == same)
        #expect(HTTPHeaders.sameName(other, one) == same)
    }

    @Test func lookupAndRemovalIgnoreTheCaseOfNames() {
        var headers: HTTPHeaders = ["Content-Type": "video/mp4", "ETag": "\"a\"", "etag": "\"b\""]
        #expect(headers["content-type"] == "video/mp4")
        #expect(headers["ETAG"] == "\"a\"")
        headers.remove(name: "Etag")
        #expect(headers["etag"] == nil)
        #expect(headers.fields.count == 1)
    }

    @Test(arguments: [
        ("Content-Type: video/mp4\r\n", "Content-Type", "video/mp4"), ("ETag:\t\"x\" \r\n", "ETag", "\"x\""),
        ("Bad Name: v\r\n", nil, nil), ("HTTP/1.1 200 OK\r\n", nil, nil), ("\r\n", nil, nil),
    ])
    func parsesOneHeaderLine(_ line: String, _ name: String?, _ value: String?) {
        let field = HTTPHeaders.parseLine(line)
        #expect(field?.name == name)
        #expect(field?.value == value)
    }

    @Test(arguments: [
        ("https://Example.org:8096/Items/1/Download?x=1", "example.org:8096"),
        ("http://user:pass@Host/a", "host"), ("http://h#frag", "h"), ("no-scheme/path", ""), ("https://", ""),
    ])
    func theHostOfARequestIsItsLowercasedAuthority(_ url: String, _ host: String) {
        #expect(TransferRequest(id: "x", url: url, destination: "/d").host == host)
    }

    @Test(arguments: [
        ("/a/b.mkv", true), ("/a", true), ("/a/..b/.c/...", true), ("/", false), ("", false), ("a/b", false),
        ("//a", false), ("/a//b", false), ("/a/", false), ("/./a", false), ("/a/.", false), ("/a/../b", false),
        ("/a/..", false),
    ])
    func aDestinationMustBeANormalisedAbsolutePath(_ path: String, _ accepted: Bool) {
        #expect(TransferEngine.isNormalisedAbsolute(path) == accepted)
    }

    @Test(arguments: [
        ("http://h/a", "http://h/a", true), ("http://h/a", "http://h/ab", false), ("http://h/ab", "http://h/a", false),
        ("", "", true), ("x", "", false), ("", "x", false), ("http://h/é", "http://h/é", true),
    ])
    func anAnswersAddressIsTheRequestsWhenItSpellsIt(_ text: String, _ url: String, _ same: Bool) {
        #expect(text.withCString { CurlOperation.spells($0, url) } == same)
    }
}

@Suite struct TrimmedTests {
    @Test(arguments: [
        ("  a b  ", " ", "a b"), ("\t x\r\n", " \t", "x"), ("\r\n", " ", ""), ("", " ", ""), ("é ", " ", "é"),
        (" \"q\" ", " \"", "q"), ("  日本 語\t", " \t", "日本 語"), ("x", "", "x"),
    ])
    func dropsTheSetAndLineBreaksAtBothEnds(_ text: String, _ set: String, _ trimmed: String) {
        #expect(text.trimmed(of: set) == trimmed)
        #expect(text[...].trimmed(of: set) == trimmed)
    }
}
