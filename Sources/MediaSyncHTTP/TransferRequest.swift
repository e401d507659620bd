/// One file to download to a final path.
public struct TransferRequest: Sendable, Equatable {
    /// The caller's key for this transfer; reported back in outcomes and progress.
    public var id: String
    /// The absolute http(s) URL.
    public var url: String
    /// The absolute final path. Nothing is written there until the file is complete (and verified).
    public var destination: String
    /// Extra request header fields, such as `Authorization`.
    public var headers: HTTPHeaders
    /// The size the file must have; a different size fails the transfer before the rename.
    public var expectedSize: Int64?
    /// The lowercase hex SHA-256 the file must have; checked before the rename.
    public var expectedSHA256: String?
    /// Higher runs earlier; equal priorities keep the given order.
    public var priority: Int

    public init(
        id: String, url: String, destination: String, headers: HTTPHeaders = [:], expectedSize: Int64? = nil,
        expectedSHA256: String? = nil, priority: Int = 0
    ) {
        self.id = id
        self.url = url
        self.destination = destination
        self.headers = headers
        self.expectedSize = expectedSize
        self.expectedSHA256 = expectedSHA256
        self.priority = priority
    }

    /// The host part of the URL, lowercased, for the per-host cap.
    var host: String {
        // The standard library's search over bytes (`range(of:)` is Foundation's, per character).
        let bytes = url.utf8
        guard let schemeEnd = bytes.firstRange(of: "://".utf8) else { return "" }
        let rest = bytes[schemeEnd.upperBound...]
        let (slash, question, hash) = (UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"))
        let authority = rest.prefix { $0 != slash && $0 != question && $0 != hash }
        let userEnd = authority.lastIndex(of: UInt8(ascii: "@"))
        let hostPort = userEnd.map { authority[authority.index(after: $0)...] } ?? authority
        let text = String(decoding: hostPort, as: UTF8.self)
        let upper = UInt8(ascii: "A")...UInt8(ascii: "Z")
        return hostPort.contains(where: upper.contains) ? text.lowercased() : text
    }
}

/// How a batch of transfers runs.
public struct TransferOptions: Sendable {
    /// Transfers running at the same time.
    public var concurrency: Int
    /// Transfers running at the same time against one host (host and port); nil means ``concurrency``.
    public var perHostLimit: Int?
    /// Whether each file is flushed to stable storage before its rename, and its directory after, so a power
    /// cut never leaves an empty or torn file at a final path. Off is faster for throwaway mirrors.
    public var durable: Bool
    /// How failed transfers are retried.
    public var retryPolicy: RetryPolicy
    /// A cap on the whole batch's download rate, in bytes per second, shared out among running transfers.
    /// The corresponding libcurl option is `CURLOPT_MAX_RECV_SPEED_LARGE`.
    public var bandwidthLimit: Int?
    /// Where partial files live until they are complete. It must be on the destinations' file system;
    /// when nil (or on another file system) a `.mediasync-staging` folder beside each destination is used.
    public var stagingDirectory: String?
    /// Seconds between progress reports.
    public var progressInterval: Double
    /// libcurl's receive buffer; larger buffers mean fewer, larger writes. The option is `CURLOPT_BUFFERSIZE`.
    public var bufferSize: Int

    public init(
        concurrency: Int = 4, perHostLimit: Int? = nil, durable: Bool = true, retryPolicy: RetryPolicy = RetryPolicy(),
        bandwidthLimit: Int? = nil, stagingDirectory: String? = nil, progressInterval: Double = 0.25,
        bufferSize: Int = 512 << 10
    ) {
        self.concurrency = concurrency
        self.perHostLimit = perHostLimit
        self.durable = durable
        self.retryPolicy = retryPolicy
        self.bandwidthLimit = bandwidthLimit
        self.stagingDirectory = stagingDirectory
        self.progressInterval = progressInterval
        self.bufferSize = bufferSize
    }
}

/// A file that was downloaded and placed at its destination.
public struct TransferSuccess: Sendable, Equatable {
    /// Where the file was placed: what the batch's ``DownloadPlacing`` returned (by default the destination).
    public var path: String
    /// The file's size.
    public var size: Int64
    /// Bytes that were already on disk from an earlier, interrupted attempt or run.
    public var resumedFrom: Int64
    /// Attempts made, the successful one included.
    public var attempts: Int
    /// The response's `Last-Modified`, if any.
    public var lastModified: String?
    /// The response's `ETag`, if any.
    public var etag: String?
    /// The response's `Content-Type`, if any.
    public var contentType: String?
    /// The file name from `Content-Disposition`, if any (not sanitised: treat as untrusted).
    public var suggestedFilename: String?
    /// The validator (strong `ETag`, or a strong `Last-Modified`) of the version the bytes belong to, if any.
    public var validator: String?
    /// The ``ContentHash`` of the placed bytes (16 hex digits), for `verify --deep`.
    public var contentHash: String?
    /// Whether a SHA-256 (expected by the caller, or announced by the server) was checked.
    public var digestVerified: Bool
    /// The URL the bytes came from after the redirects were followed (nil when not known).
    public var effectiveURL: String?

    public init(
        path: String, size: Int64, resumedFrom: Int64, attempts: Int, lastModified: String? = nil, etag: String? = nil,
        contentType: String? = nil, suggestedFilename: String? = nil, validator: String? = nil,
        contentHash: String? = nil, digestVerified: Bool = false, effectiveURL: String? = nil
    ) {
        self.path = path
        self.size = size
        self.resumedFrom = resumedFrom
        self.attempts = attempts
        self.lastModified = lastModified
        self.etag = etag
        self.contentType = contentType
        self.suggestedFilename = suggestedFilename
        self.validator = validator
        self.contentHash = contentHash
        self.digestVerified = digestVerified
        self.effectiveURL = effectiveURL
    }
}

/// What became of one transfer.
public struct TransferOutcome: Sendable {
    /// The request.
    public var request: TransferRequest
    /// The placed file, or why it failed.
    public var result: Result<TransferSuccess, HTTPError>

    /// The error, when it failed.
    public var error: HTTPError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

/// The result of a batch: which transfers succeeded and which failed, and why.
public struct BatchResult: Sendable {
    /// One outcome per request, in the order given.
    public var outcomes: [TransferOutcome]

    /// The outcomes that succeeded.
    public var succeeded: [TransferOutcome] { outcomes.filter { $0.error == nil } }
    /// The outcomes that failed.
    public var failed: [TransferOutcome] { outcomes.filter { $0.error != nil } }
    /// The requests that failed, to run again ("retry the failed only").
    public var failedRequests: [TransferRequest] { failed.map(\.request) }
    /// Whether every transfer succeeded.
    public var allSucceeded: Bool { outcomes.allSatisfy { $0.error == nil } }
}
