import Foundation
import MediaSyncCore
import MediaSyncJSON
import MediaSyncServer
import Testing

@Suite struct BaseItemTests {
    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    @Test func unknownFieldsSurviveARoundTrip() throws {
        let text = """
            {"Id":"abc123","Name":"Film","FutureField":{"Nested":[1,2.5,"x",null,true]},"Size":9007199254740000,
             "Negative":-3,"Type":"Movie","ChannelId":null}
            """
        let item = try decode(BaseItem.self, text)
        let encoded = try JSONEncoder().encode(item)
        let again = try decode(JSONValue.self, String(decoding: encoded, as: UTF8.self))
        #expect(again == item.raw)
        #expect(
            again["FutureField"]?["Nested"] == .array([.number(1), .number(2.5), .string("x"), .null, .bool(true)]))
        #expect(again["ChannelId"] == .null)
        // Whole numbers stay integers in the output.
        let output = String(decoding: encoded, as: UTF8.self)
        #expect(output.contains("9007199254740000"))
        #expect(!output.contains("e+"))
        let reloaded = try decode(BaseItem.self, output)
        #expect(reloaded == item)
    }

    @Test func missingOrNullFieldsAreNil() throws {
        let item = try decode(
            BaseItem.self,
            #"{"Id":"x1","Name":null,"IndexNumber":null,"UserData":null,"ImageTags":null,"MediaSources":null}"#)
        #expect(item.name == nil)
        #expect(item.indexNumber == nil)
        #expect(item.userData == nil)
        #expect(item.imageTags.isEmpty)
        #expect(item.backdropImageTags.isEmpty)
        #expect(item.mediaSources == nil)
        #expect(item.type == nil)
        #expect(!item.isVirtual)
    }

    @Test func wrongTypesAreNilNotErrors() throws {
        let item = try decode(
            BaseItem.self, #"{"Id":"x1","IndexNumber":"3","IsFolder":"yes","ImageTags":{"Primary":7}}"#)
        #expect(item.indexNumber == nil)
        #expect(item.isFolder == nil)
        #expect(item.imageTags.isEmpty)
    }

    @Test func anObjectWithoutIdIsAnError() {
        #expect(throws: DecodingError.self) { try decode(BaseItem.self, #"{"Name":"no id"}"#) }
        #expect(throws: DecodingError.self) { try decode(BaseItem.self, #"{"Id":null}"#) }
        #expect(throws: DecodingError.self) { try decode(BaseItem.self, #"{"Id":""}"#) }
        #expect(throws: DecodingError.self) { try decode(BaseItem.self, #"["Id"]"#) }
        #expect(throws: DecodingError.self) {
            try decode(QueryResult<BaseItem>.self, #"{"Items":[{"Id":"a"},{"Name":"b"}]}"#)
        }
        #expect(BaseItem(.object(["Name": .string("x")])) == nil)
        #expect(BaseItem(.object(["Id": .string("x")]))?.id == "x")
    }

    @Test func queryResultTolerance() throws {
        let nullItems = try decode(QueryResult<BaseItem>.self, #"{"Items":null,"TotalRecordCount":null}"#)
        #expect(nullItems.items.isEmpty)
        #expect(nullItems.totalRecordCount == nil)
        #expect(throws: DecodingError.self) { try decode(QueryResult<BaseItem>.self, #"{"TotalRecordCount":3}"#) }
    }

    @Test func numericEnumsMapToNames() throws {
        let streams = try decode(
            [MediaStream].self,
            #"[{"Type":0},{"Type":1},{"Type":2},{"Type":3},{"Type":4},{"Type":5},{"Type":9},{"Type":"Subtitle","DeliveryMethod":2}]"#
        )
        #expect(
            streams.map(\.type) == ["Audio", "Video", "Subtitle", "EmbeddedImage", "Data", "Lyric", "9", "Subtitle"])
        #expect(streams[7].deliveryMethod == "External")
        let source = try decode(MediaSource.self, #"{"Id":"s","Protocol":1,"Type":0}"#)
        #expect(source.protocol == "Http")
        #expect(source.type == "Default")
        let virtual = try decode(BaseItem.self, #"{"Id":"v","LocationType":2}"#)
        #expect(virtual.locationType == "Virtual")
        #expect(virtual.isVirtual)
        #expect(try decode(BaseItem.self, #"{"Id":"v","LocationType":"Virtual"}"#).isVirtual)
    }

    @Test func quickConnectStateHidesItsSecret() throws {
        let state = try decode(
            QuickConnectState.self,
            #"{"Authenticated":false,"Secret":"s3cr3t-value","Code":"123456","DeviceId":"d","AppName":"mediasync"}"#)
        #expect(state.code == "123456")
        #expect(state.secret == "s3cr3t-value")
        #expect(!state.authenticated)
        #expect(state.appName == "mediasync")
        #expect(!state.description.contains("s3cr3t-value"))
        var dumped = ""
        dump(state, to: &dumped)
        #expect(!dumped.contains("s3cr3t-value"))
        #expect(throws: DecodingError.self) { try decode(QuickConnectState.self, #"{"Code":"1"}"#) }
    }

    @Test func authenticationResultNeedsAToken() {
        #expect(throws: DecodingError.self) {
            try decode(AuthenticationResult.self, #"{"User":{"Id":"u"},"AccessToken":""}"#)
        }
        #expect(throws: DecodingError.self) { try decode(AuthenticationResult.self, #"{"AccessToken":"t"}"#) }
    }
}
