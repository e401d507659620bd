import MediaSyncHTTP
import MediaSyncServer
import Testing

@Suite struct AuthorizationHeaderTests {
    @Test func formatWithToken() throws {
        let identity = ClientIdentity(device: "box", deviceId: "dev-1", version: "1.2.3")
        let client = try JellyfinClient(serverURL: "https://jf.example.org", identity: identity, accessToken: "abc123")
        let header = client.authorizationHeader
        #expect(header.name == "Authorization")
        #expect(
            header.value
                == #"MediaBrowser Client="mediasync", Device="box", DeviceId="dev-1", Version="1.2.3", Token="abc123""#)
    }

    @Test func tokenOmittedWhenNotSignedIn() throws {
        let identity = ClientIdentity(device: "box", deviceId: "dev-1", version: "1.2.3")
        let client = try JellyfinClient(serverURL: "https://jf.example.org", identity: identity)
        #expect(
            client.authorizationHeader.value
                == #"MediaBrowser Client="mediasync", Device="box", DeviceId="dev-1", Version="1.2.3""#)
        #expect(identity.authorizationValue(token: "") == client.authorizationHeader.value)
    }

    @Test func valuesArePercentEncoded() {
        let identity = ClientIdentity(
            client: "media sync", device: "Jo's \"Laptop\", é", deviceId: "a=b,c", version: "1.0~beta_2-x")
        let value = identity.authorizationValue(token: "t/k+n")
        #expect(
            value == "MediaBrowser Client=\"media%20sync\", Device=\"Jo%27s%20%22Laptop%22%2C%20%C3%A9\", "
                + "DeviceId=\"a%3Db%2Cc\", Version=\"1.0~beta_2-x\", Token=\"t%2Fk%2Bn\"")
    }

    @Test func defaultIdentity() {
        let identity = ClientIdentity(device: "d", deviceId: "i")
        #expect(identity.client == "mediasync")
        #expect(identity.version == MediaSyncVersion.string)
    }

    @Test func descriptionHidesTheToken() throws {
        let client = try JellyfinClient(
            serverURL: "https://jf.example.org", identity: testIdentity, accessToken: "supersecrettoken", userId: "u1")
        #expect(!client.description.contains("supersecrettoken"))
        #expect(!String(describing: client).contains("supersecrettoken"))
        #expect(client.description.contains("u1"))
    }
}
