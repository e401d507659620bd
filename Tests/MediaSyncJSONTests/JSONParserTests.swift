import Foundation
import MediaSyncJSON
import MediaSyncTestSupport
import Testing

@Suite struct JSONParserTests {
    private func parse(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    @Test(arguments: [
        #"{"a":1,"b":[true,false,null],"c":"x","d":{}}"#,
        #"[]"#,
        #"  {"Name":"Caf\u00e9 \"quoted\" \\ \/ \n\t","Ticks":636000000000,"Rate":23.976,"Neg":-5,"Exp":1.5e3}  "#,
        #"{"emoji":"\ud83c\udfac","raw":"🎬 déjà","small":1e-7,"big":12345678901234567890}"#,
        #""just a string""#,
        #"0"#,
    ])
    func agreesWithJSONDecoder(_ text: String) throws {
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(try parse(text) == decoded)
    }

    @Test func readsTheRecordedJellyfinResponses() throws {
        let documents = try RecordedResponses.all()
        #expect(documents.count > 20)
        for (name, data) in documents {
            let expected = try JSONDecoder().decode(JSONValue.self, from: data)
            #expect(try JSONValue(parsing: [UInt8](data)) == expected, "\(name)")
        }
    }

    @Test(arguments: [
        ("", JSONParseError.unexpectedEnd),
        (#"{"a":1"#, .unexpectedEnd),
        (#"{"a" 1}"#, .unexpected(byte: UInt8(ascii: "1"), offset: 5)),
        (#"[1,]"#, .unexpected(byte: UInt8(ascii: "]"), offset: 3)),
        (#"01"#, .invalidNumber(offset: 0)),
        (#"-"#, .invalidNumber(offset: 0)),
        (#"1."#, .invalidNumber(offset: 0)),
        (#""\x""#, .invalidEscape(offset: 1)),
        (#""\u12G4""#, .invalidEscape(offset: 1)),
        (#"{} x"#, .trailingData(offset: 3)),
        (#"nul"#, .unexpectedEnd),
        (#"trUe"#, .unexpected(byte: UInt8(ascii: "U"), offset: 2)),
        ("\"a\u{01}b\"", .unexpected(byte: 1, offset: 2)),
    ])
    func refusesBrokenDocuments(_ text: String, _ error: JSONParseError) {
        #expect(throws: error) { try parse(text) }
    }

    /// `value` with every object member outside `keys` removed, at any depth.
    private static func pruned(_ value: JSONValue, _ keys: Set<String>) -> JSONValue {
        switch value {
        case .object(let members):
            var kept: JSONObject = [:]
            for (key, member) in members where keys.contains(key) { kept[key] = pruned(member, keys) }
            return .object(kept)
        case .array(let elements): return .array(elements.map { pruned($0, keys) })
        default: return value
        }
    }

    @Test func keepingKeysIsTheFullParsePruned() throws {
        let keys: Set<String> = ["Id", "Name", "MediaSources", "item", "a"]
        var documents = try RecordedResponses.all().map { [UInt8]($0.data) }
        #expect(documents.count > 20)
        documents.append(Array(#"{"a":{"b":[1,{"a":"x\u00e9\n","Id":-1.5e3}],"a":null},"Id":"\ud83c\udfac"}"#.utf8))
        for bytes in documents {
            let full = try JSONValue(parsing: bytes)
            #expect(try JSONValue(parsing: bytes, keepingKeys: keys) == Self.pruned(full, keys))
            #expect(full.keeping(keys) == Self.pruned(full, keys))
        }
    }

    @Test(arguments: [
        #"{"skipped":[1,]}"#, #"{"skipped":{"x" 1}}"#, #"{"skipped":"\x"}"#, #"{"skipped":01}"#,
        "{\"skipped\":\"a\u{01}\"}", #"{"skipped":tru}"#, #"{"skipped":{"a":1}"#, #"{"skipped":[}"#,
        "{\"skipped\":" + String(repeating: "[", count: 300) + String(repeating: "]", count: 300) + "}",
    ])
    func aFaultInASkippedMemberIsAFault(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes, keepingKeys: ["kept"]) }
    }

    @Test func refusesDeepNestingWithoutExhaustingTheStack() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.tooDeep(offset: JSONValue.maximumDepth)) { try parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? parse(fine)) != nil)
    }

    @Test func loneSurrogatesAndBadUTF8BecomeReplacementCharacters() throws {
        #expect(try parse(#""\ud800x""#) == .string("\u{FFFD}x"))
        #expect(try parse(#""\udc00""#) == .string("\u{FFFD}"))
        #expect(try JSONValue(parsing: [0x22, 0x61, 0xFF, 0x22]) == .string("a\u{FFFD}"))
    }

    @Test func laterDuplicateKeysWin() throws {
        #expect(try parse(#"{"a":1,"a":2}"#)["a"] == .number(2))
    }

    /// Repeated text is read into one copy, but text that is only canonically equivalent (the same letters in NFC
    /// and NFD, equal under Swift's `==`) keeps its own bytes.
    @Test func equivalentTextKeepsItsOwnBytes() throws {
        let nfc = "0123456789abcdef-caf\u{E9}"
        let nfd = "0123456789abcdef-cafe\u{301}"
        let id = "0123456789abcdef0123456789abcdef"
        let text = #"[""# + nfc + #"",""# + nfd + #"",""# + id + #"",""# + id + #""]"#
        guard case .array(let values) = try parse(text) else {
            Issue.record("not an array")
            return
        }
        let bytes = values.map { Array(($0.stringValue ?? "").utf8) }
        #expect(bytes == [Array(nfc.utf8), Array(nfd.utf8), Array(id.utf8), Array(id.utf8)])
    }

    /// A document's outermost object and array keep room for their own members only, not for every member the
    /// document nested inside them (the parser's stacks held those at once).
    @Test func outermostContainersAreTheirOwnSize() throws {
        let inner = (0..<40).map { #""m\#($0)":\#($0)"# }.joined(separator: ",")
        guard case .object(let object) = try parse(#"{"only":{\#(inner)}}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.members.count == 1)
        #expect(object.members.capacity < 8)
        let elements = (0..<40).map(String.init).joined(separator: ",")
        guard case .array(let array) = try parse("[[\(elements)]]") else {
            Issue.record("not an array")
            return
        }
        #expect(array.count == 1)
        #expect(array.capacity < 8)
    }
}

@Suite struct JSONWriterTests {
    @Test(arguments: [
        ("a", "b", true), ("b", "a", false), ("a", "a", false), ("a", "ab", true), ("ab", "a", false), ("", "a", true),
        ("a", "", false), ("", "", false), ("Z", "a", true), ("_x", "a", true), ("zz", "é", true), ("é", "🎬", true),
        ("Name", "NameA", true), ("ParentId", "ParentBackdropItemId", false),
    ])
    func keysSortByTheirBytes(_ left: String, _ right: String, _ precedes: Bool) {
        #expect(JSONMember.keyPrecedes(left, right) == precedes)
        #expect(JSONMember.keyPrecedes(left, right) == left.utf8.lexicographicallyPrecedes(right.utf8))
    }

    @Test func writesWhatJSONEncoderWritesForTheRecordedResponses() throws {
        let documents = try RecordedResponses.all()
        #expect(documents.count > 20)
        for (name, data) in documents {
            let value = try JSONValue(parsing: [UInt8](data))
            #expect(try JSONWriter.prettyBytes(value) == JSONEncoderOracle.prettyBytes(value), "\(name)")
            #expect(
                try JSONWriter.sortedCompactBytes(value) == JSONEncoderOracle.sortedCompactBytes(value), "\(name)")
        }
    }

    @Test func writesWhatJSONEncoderWritesForAwkwardValues() throws {
        let value = JSONValue.object([
            "text": .string("x/y \u{1} \u{8}\u{c}\u{1f}\u{7f} é \"q\" \\ \n\t\r \u{2028} 🎬"),
            "numbers": .array(
                [0, -0.0, 1.5, 100, 2.5e-5, 1e300, 9.5e15, 23.976, 1e-7, 123456.789, 1e16, -5].map(JSONValue.number)),
            "empty": .object([:]), "none": .array([]),
            "nested": .array([.array([]), .object(["z": .null, "B": .bool(true)])]),
            "Zb": .bool(false), "_x": .null, "é": .string(""),
        ])
        #expect(try JSONWriter.prettyBytes(value) == JSONEncoderOracle.prettyBytes(value))
        #expect(try JSONWriter.sortedCompactBytes(value) == JSONEncoderOracle.sortedCompactBytes(value))
    }
}

/// The recorded real Jellyfin responses in `Fixtures/server`, by file name.
enum RecordedResponses {
    static func all() throws -> [(name: String, data: Data)] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fixtures/server").standardizedFileURL
        let files = (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".json") }.sorted()
        return try files.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) }
    }
}
