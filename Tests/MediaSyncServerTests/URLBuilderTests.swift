import MediaSyncServer
import Testing

@Suite struct URLBuilderTests {
    let client: JellyfinClient

    init() throws {
        client = try JellyfinClient(
            serverURL: "https://jf.example.org/jellyfin/", identity: testIdentity, accessToken: "tok")
    }

    @Test func serverAddressNormalisation() throws {
        #expect(try ServerAddress.normalize("https://jf.example.org/jellyfin/") == "https://jf.example.org/jellyfin")
        #expect(try ServerAddress.normalize("HTTPS://JF.Example.org///") == "https://jf.example.org")
        #expect(try ServerAddress.normalize("  http://127.0.0.1:8096/ ") == "http://127.0.0.1:8096")
        #expect(try ServerAddress.normalize("http://[::1]:8096/jf") == "http://[::1]:8096/jf")
        #expect(try ServerAddress.normalize("http://host/media%20server/") == "http://host/media%20server")
        #expect(client.serverURL == "https://jf.example.org/jellyfin")
    }

    @Test(arguments: [
        "ftp://jf.example.org", "jf.example.org", "", "file:///etc/passwd", "https://", "https://user:pw@host",
        "https://host/?api_key=1", "javascript:alert(1)",
    ])
    func unusableServerAddresses(_ text: String) {
        let error = #expect(throws: JellyfinError.self) { try ServerAddress.normalize(text) }
        #expect(error?.kind == .invalidServerURL)
        #expect(error?.message.contains("not a usable server address") == true)
        #expect(throws: JellyfinError.self) { try JellyfinClient(serverURL: text, identity: testIdentity) }
    }

    @Test func downloadURLHasNoQuery() throws {
        #expect(
            try client.downloadURL(mediaSourceId: "f6890000cdb1434c4ab3208fdf02da30")
                == "https://jf.example.org/jellyfin/Items/f6890000cdb1434c4ab3208fdf02da30/Download")
    }

    @Test func imageURLs() throws {
        #expect(
            try client.imageURL(
                itemId: "abc", type: "Primary", tag: "t1", maxWidth: JellyfinClient.primaryImageMaxWidth)
                == "https://jf.example.org/jellyfin/Items/abc/Images/Primary?tag=t1&maxWidth=300")
        #expect(
            try client.imageURL(itemId: "abc", type: "Backdrop", index: 0, tag: "b0", maxWidth: 600)
                == "https://jf.example.org/jellyfin/Items/abc/Images/Backdrop/0?tag=b0&maxWidth=600")
        #expect(
            try client.imageURL(itemId: "abc", type: "Logo") == "https://jf.example.org/jellyfin/Items/abc/Images/Logo")
        #expect(JellyfinClient.defaultImageMaxWidth(for: "Primary") == 300)
        #expect(JellyfinClient.defaultImageMaxWidth(for: "Backdrop") == 600)
        #expect(JellyfinClient.defaultImageMaxWidth(for: "Thumb") == nil)
    }

    @Test func subtitleURL() throws {
        #expect(
            try client.subtitleURL(itemId: "item1", mediaSourceId: "src2", streamIndex: 3, format: "srt")
                == "https://jf.example.org/jellyfin/Videos/item1/src2/Subtitles/3/Stream.srt")
    }

    @Test func idsArePercentEncodedPathSegments() throws {
        #expect(
            try client.downloadURL(mediaSourceId: "é d") == "https://jf.example.org/jellyfin/Items/%C3%A9%20d/Download")
        #expect(
            try client.downloadURL(mediaSourceId: "a?b#c") == "https://jf.example.org/jellyfin/Items/a%3Fb%23c/Download"
        )
        #expect(
            try client.imageURL(itemId: "x", type: "Primary", tag: "a&b=c")
                == "https://jf.example.org/jellyfin/Items/x/Images/Primary?tag=a%26b%3Dc")
    }

    static let hostileIDs = [
        "../../etc/passwd", "a/b", "..", "a..b", "a\\b", "a\u{0}b", "line\nbreak", "",
        String(repeating: "a", count: 129),
        String(repeating: "x", count: 4096),
    ]

    @Test(arguments: URLBuilderTests.hostileIDs)
    func hostileIDsAreRejected(_ id: String) {
        #expect(!JellyfinID.isValid(id))
        let errors = [
            #expect(throws: JellyfinError.self) { try client.downloadURL(mediaSourceId: id) },
            #expect(throws: JellyfinError.self) { try client.imageURL(itemId: id, type: "Primary") },
            #expect(throws: JellyfinError.self) { try client.imageURL(itemId: "ok", type: "Primary", tag: id) },
            #expect(throws: JellyfinError.self) {
                try client.subtitleURL(itemId: id, mediaSourceId: "ok", streamIndex: 2, format: "srt")
            },
            #expect(throws: JellyfinError.self) {
                try client.subtitleURL(itemId: "ok", mediaSourceId: id, streamIndex: 2, format: "srt")
            },
        ]
        #expect(errors.allSatisfy { $0?.kind == .invalidID })
    }

    @Test func longestAcceptedID() throws {
        let id = String(repeating: "a", count: 128)
        #expect(JellyfinID.isValid(id))
        #expect(try client.downloadURL(mediaSourceId: id).hasSuffix("/Items/\(id)/Download"))
    }

    @Test func badImageTypesFormatsAndIndexes() {
        #expect(throws: JellyfinError.self) { try client.imageURL(itemId: "x", type: "Primary/../x") }
        #expect(throws: JellyfinError.self) { try client.imageURL(itemId: "x", type: "") }
        #expect(throws: JellyfinError.self) { try client.imageURL(itemId: "x", type: "Backdrop", index: -1) }
        #expect(throws: JellyfinError.self) {
            try client.subtitleURL(itemId: "x", mediaSourceId: "y", streamIndex: 1, format: "srt?x")
        }
        #expect(throws: JellyfinError.self) {
            try client.subtitleURL(itemId: "x", mediaSourceId: "y", streamIndex: -1, format: "srt")
        }
    }

    @Test func hostileIDMessageIsClear() throws {
        do {
            _ = try client.downloadURL(mediaSourceId: "../x")
            Issue.record("no error")
        } catch let error as JellyfinError {
            #expect(error.message.contains("unusable media source id"))
            #expect(!error.isRetryable)
        }
    }
}
