/// Settings shared by API calls and file transfers.
public struct HTTPClientConfiguration: Sendable {
    /// Sent as `User-Agent`. Names mediasync and its version.
    public var userAgent: String
    /// Seconds allowed to establish a connection. The corresponding libcurl option is `CURLOPT_CONNECTTIMEOUT_MS`.
    public var connectTimeout: Double
    /// Seconds allowed for a whole API call (not for file transfers). The libcurl option is `CURLOPT_TIMEOUT_MS`.
    public var requestTimeout: Double
    /// A transfer slower than this many bytes per second for ``lowSpeedTime`` seconds fails as stalled.
    /// The corresponding libcurl option is `CURLOPT_LOW_SPEED_LIMIT`.
    public var lowSpeedLimit: Int
    /// See ``lowSpeedLimit``. The corresponding libcurl option is `CURLOPT_LOW_SPEED_TIME`.
    public var lowSpeedTime: Int
    /// The most redirects followed. The corresponding libcurl option is `CURLOPT_MAXREDIRS`.
    public var maxRedirects: Int
    /// A PEM file of CA certificates to trust instead of the system's. The libcurl option is `CURLOPT_CAINFO`.
    public var caFile: String?
    /// Turns TLS certificate and host verification off. Only for servers the user has chosen to trust blindly.
    public var insecure: Bool
    /// The largest in-memory response body accepted for an API call.
    public var maxBodySize: Int

    public init(
        userAgent: String = "mediasync/\(MediaSyncVersion.string)",
        connectTimeout: Double = 15,
        requestTimeout: Double = 120,
        lowSpeedLimit: Int = 1,
        lowSpeedTime: Int = 30,
        maxRedirects: Int = 10,
        caFile: String? = nil,
        insecure: Bool = false,
        maxBodySize: Int = 256 * 1024 * 1024
    ) {
        self.userAgent = userAgent
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.maxRedirects = maxRedirects
        self.caFile = caFile
        self.insecure = insecure
        self.maxBodySize = maxBodySize
    }
}
