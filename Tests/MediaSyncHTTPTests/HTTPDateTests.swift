import MediaSyncHTTP
import Testing

@Suite struct HTTPDateTests {
    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777.0),
        ("Sun Nov  6 08:49:37 1994", 784_111_777.0),
        ("Tue, 14 Nov 2023 22:13:20 GMT", 1_700_000_000.0),
    ])
    func parsesTheThreeForms(text: String, seconds: Double) {
        #expect(HTTPDate.parse(text) == seconds)
    }

    @Test func rejectsNonsense() {
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 25:49:37 GMT") == nil)
    }

    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(1_700_000_000) == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(1_234_567_890)) == 1_234_567_890)
    }
}
