/// How a response body is cut short by an injected fault.
enum BodyCut: Sendable {
    case reset(afterBytes: Int)
    case truncate(afterBytes: Int)
    case stall(afterBytes: Int, seconds: Double)

    var afterBytes: Int {
        switch self {
        case .reset(let n), .truncate(let n), .stall(let n, _): return n
        }
    }
}
