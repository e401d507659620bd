import MediaSyncJSON

/// One page of a listing (`BaseItemDtoQueryResult`): `Items`, `TotalRecordCount`, `StartIndex`.
public struct QueryResult<Item: Sendable>: Sendable {
    /// `Items` (an absent or `null` list is empty).
    public var items: [Item]
    /// `TotalRecordCount`: how many items the whole listing has, as the server claims (may be absent).
    public var totalRecordCount: Int?
    /// `StartIndex` of this page.
    public var startIndex: Int?

    /// Creates a page.
    public init(items: [Item], totalRecordCount: Int? = nil, startIndex: Int? = nil) {
        self.items = items
        self.totalRecordCount = totalRecordCount
        self.startIndex = startIndex
    }
}

extension QueryResult: Decodable where Item: Decodable {
    /// Decodes `Items`, `TotalRecordCount` and `StartIndex`.
    /// - Throws: `DecodingError` when the value is not an object, has no `Items` key, or an item does not decode.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: WireKey.self)
        // A missing key means this is not a listing at all; null is tolerated as an empty page.
        guard container.contains(WireKey("Items")) else {
            throw DecodingError.keyNotFound(
                WireKey("Items"),
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "missing Items"))
        }
        items = try container.decodeIfPresent([Item].self, forKey: WireKey("Items")) ?? []
        totalRecordCount = try? container.decodeIfPresent(Int.self, forKey: WireKey("TotalRecordCount"))
        startIndex = try? container.decodeIfPresent(Int.self, forKey: WireKey("StartIndex"))
    }
}

extension QueryResult: Encodable where Item: Encodable {
    /// Encodes `Items`, `TotalRecordCount` and `StartIndex`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: WireKey.self)
        try container.encode(items, forKey: WireKey("Items"))
        try container.encodeIfPresent(totalRecordCount, forKey: WireKey("TotalRecordCount"))
        try container.encodeIfPresent(startIndex, forKey: WireKey("StartIndex"))
    }
}

extension QueryResult: Equatable where Item: Equatable {}

extension QueryResult: WireDecodable where Item: WireDecodable {
    /// As the `Decodable` conformance: `Items` must be there (null is an empty page); the counts are optional.
    init(wire value: JSONValue, codingPath: [any CodingKey]) throws {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self,
                DecodingError.Context(codingPath: codingPath, debugDescription: "expected a JSON object"))
        }
        guard let list = members["Items"] else {
            throw DecodingError.keyNotFound(
                WireKey("Items"), DecodingError.Context(codingPath: codingPath, debugDescription: "missing Items"))
        }
        let itemsPath = codingPath + [WireKey("Items")]
        switch list {
        case .null:
            items = []
        case .array(let elements):
            items = try elements.enumerated().map { index, element in
                try Item(wire: element, codingPath: itemsPath + [WireIndexKey(index)])
            }
        default:
            throw DecodingError.typeMismatch(
                [JSONValue].self, DecodingError.Context(codingPath: itemsPath, debugDescription: "expected an array"))
        }
        totalRecordCount = members["TotalRecordCount"]?.wireInt
        startIndex = members["StartIndex"]?.wireInt
    }
}
