import Foundation
import MediaSyncJSON
import Testing

/// The ordered object both the library and the test server use, and the compact writer the test server answers
/// with.
@Suite struct JSONObjectTests {
    private func parse(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    @Test func membersKeepTheDocumentsOrder() throws {
        let value = try parse(#"{"Name":"x","Id":"1","ServerId":"s","a":{"z":1,"b":2}}"#)
        #expect(value.objectValue?.keys == ["Name", "Id", "ServerId", "a"])
        #expect(value["a"]?.objectValue?.keys == ["z", "b"])
        #expect(
            String(decoding: JSONWriter.compactBytes(value), as: UTF8.self)
                == #"{"Name":"x","Id":"1","ServerId":"s","a":{"z":1,"b":2}}"#)
    }

    @Test(arguments: [
        (#"{"a":1,"b":2,"a":3}"#, ["a", "b"], 3.0),
        (#"{"b":0,"a":1,"a":2,"a":4}"#, ["b", "a"], 4.0),
        // Over 16 members the repeat is found through a set rather than pairwise.
        (
            "{" + (0..<20).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","a":7,"k3":9}"#,
            (0..<20).map { "k\($0)" } + ["a"], 7.0
        ),
    ])
    func aRepeatedKeyKeepsItsFirstPlaceAndLastValue(_ text: String, _ keys: [String], _ a: Double) throws {
        let value = try parse(text)
        #expect(value.objectValue?.keys == keys)
        #expect(value["a"] == .number(a))
        if keys.count > 16 { #expect(value["k3"] == .number(9)) }
    }

    @Test func objectsAreEqualInAnyOrderAndHashAlike() throws {
        let one = try parse(#"{"a":1,"b":[1,2],"c":{"x":null,"y":true}}"#)
        let other = try parse(#"{"c":{"y":true,"x":null},"b":[1,2],"a":1}"#)
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(Set([one, other]).count == 1)
        #expect(one != (try parse(#"{"a":1,"b":[2,1],"c":{"x":null,"y":true}}"#)))
        #expect(one != (try parse(#"{"a":1,"b":[1,2]}"#)))
        #expect(one != (try parse(#"{"a":1,"b":[1,2],"d":{"x":null,"y":true}}"#)))
    }

    @Test func settingReplacesInPlaceAppendsNewAndRemovesOnNil() {
        var object: JSONObject = ["a": .number(1), "b": .number(2), "c": .number(3)]
        object["b"] = .string("two")
        object["d"] = .null
        object["a"] = nil
        object["missing"] = nil
        #expect(object.keys == ["b", "c", "d"])
        #expect(object["b"] == .string("two"))
        #expect(object["d"] == .null)
        #expect(object["a"] == nil)
        var merged = object
        merged.merge(["c": .bool(true), "e": .number(5)])
        #expect(merged.keys == ["b", "c", "d", "e"])
        #expect(merged["c"] == .bool(true))
    }

    @Test func aDictionaryGivesItsMembersSortedAndBack() {
        let object = JSONObject(["b": .number(1), "a": .number(2), "B": .number(3)])
        #expect(object.keys == ["B", "a", "b"])
        #expect(object.dictionary == ["b": .number(1), "a": .number(2), "B": .number(3)])
    }

    @Test func compactBytesEscapeAndWriteNumbersAsThePrettyWriterDoes() throws {
        let value: JSONValue = .object([
            JSONMember("Text", .string("a\"b\\c\n\u{01}é/")),
            JSONMember("Ticks", .number(636_000_000_000)),
            JSONMember("Rate", .number(23.976)),
            JSONMember("Empty", .object([])),
            JSONMember("List", .array([.null, .bool(false), .number(-5)])),
            JSONMember("Infinite", .number(.infinity)),
        ])
        let text = String(decoding: JSONWriter.compactBytes(value), as: UTF8.self)
        #expect(
            text
                == #"{"Text":"a\"b\\c\n\u0001é/","Ticks":636000000000,"Rate":23.976,"Empty":{},"List":[null,false,-5],"Infinite":null}"#
        )
        // What can be read back is read back the same.
        var finite = value.objectValue ?? [:]
        finite["Infinite"] = nil
        #expect(try JSONValue(parsing: JSONWriter.compactBytes(.object(finite))) == .object(finite))
    }

    @Test func codableRoundTripKeepsEveryMember() throws {
        let value = try parse(#"{"z":1,"a":{"k":"v","j":[1,2.5]},"m":null}"#)
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONValue(parsing: Array(data)) == value)
    }
}
