import Foundation
import MediaSyncJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A local, in-process HTTP/1.1 server that imitates a Jellyfin server (and serves arbitrary files)
/// for integration tests and demos. Plain POSIX sockets, one thread per connection, keep-alive aware.
///
/// Not part of the product API: a test tool.
///
/// Routing order: injected faults (by exact decoded path, or `"*"`), then files registered with
/// `setFile`, then the Jellyfin routes, else 404. Jellyfin routes (case-insensitive paths and query keys):
/// - anonymous: `GET /System/Info/Public`, `GET /QuickConnect/Enabled`, `POST /QuickConnect/Initiate`,
///   `GET /QuickConnect/Connect?secret=`, `POST /Users/AuthenticateByName`,
///   `POST /Users/AuthenticateWithQuickConnect`, `GET /Items/{id}/Images/{type}[/{index}]` (anonymous as in Jellyfin)
/// - with `Authorization: MediaBrowser ..., Token="..."` (else 401, empty body): `GET /System/Info`, `/Users/Me`,
///   `/Users/{id}`, `/UserViews`, `/Users/{id}/Views`, `/Items`, `/Users/{id}/Items`, `/Items/{id}`,
///   `/Users/{id}/Items/{id}`, `/Shows/{id}/Seasons`, `/Shows/{id}/Episodes`, `GET|POST /Items/{id}/PlaybackInfo`,
///   `GET|HEAD /Items/{id}/Download`, `/Videos/{id}/{mediaSourceId}/Subtitles/{index}[/{ticks}]/Stream.{srt|vtt}`;
///   with music (``TestLibrary/addMusic(_:)``): `GET /Playlists/{id}/Items`, `GET /Playlists/{id}` (10.10+),
///   `GET /Audio/{id}/Lyrics` (10.9+), `GET|HEAD /Audio/{id}/universal`, `GET /Items/{id}/File` (see
///   `MusicRoutes.swift`).
public final class TestServer: @unchecked Sendable {
    /// Mutable server state; always accessed under `lock`.
    struct State {
        var library: TestLibrary
        var files: [String: ServedFile] = [:]
        var faults: [FaultRule] = []
        var requests: [RecordedRequest] = []
        var connections: [Int: Int32] = [:]
        var nextConnectionID = 0
        var inFlight = 0
        var maxInFlight = 0
        var throttle: Int?
        var shuttingDown = false
        var listenerClosed = false
        var quickConnectPolls: [String: Int] = [:]
        var quickConnectCounter = 0
        var mediaCache: [String: CachedMedia] = [:]
        var responses: [ServedResponse] = []
        var bodyBytesSent = 0
        var responseObserver: (@Sendable (ServedResponse) -> Void)?
        var handlers: [String: @Sendable (RecordedRequest) -> CustomResponse] = [:]
        var stallResets = 0
        /// Paged `/Items` listing requests answered so far, and the scans waiting for their page.
        var listingPages = 0
        var profile = JellyfinProfile.newest
        var scans: [(afterPage: Int, change: @Sendable (inout TestLibrary) -> Void)] = []
    }

    /// What a handler registered with ``setHandler(_:_:)`` answers.
    public struct CustomResponse: Sendable {
        public var status: Int
        public var contentType: String
        public var body: [UInt8]
        /// More header fields (a `WWW-Authenticate` challenge).
        public var headers: [(String, String)]

        public init(
            status: Int = 200, contentType: String = "application/json; charset=utf-8", body: [UInt8],
            headers: [(String, String)] = []
        ) {
            self.headers = headers
            self.status = status
            self.contentType = contentType
            self.body = body
        }
    }

    struct FaultRule {
        var fault: Fault
        var path: String
        var remaining: Int
        var then: (@Sendable () -> Void)?
    }

    struct CachedMedia {
        var key: TestMediaSource
        var bytes: [UInt8]
    }

    let lock = NSLock()
    /// Transcoding: the encodings running, and the knobs of a slow or lying server.
    public let transcodes = TranscodeState()
    /// The server's own work: media sources built (and their per-item cost).
    public let counters = ServerCounters()
    /// The gPodder sync APIs (mygpo and Nextcloud), answered once a user is added.
    public let gpodder = GPodderServer()
    /// Held while a request is matched against the faults and routed (see ``handle(_:)``).
    private let routingGate = NSLock()
    var state: State
    private let listenFD: Int32
    private let acceptFinished = DispatchSemaphore(value: 0)
    private let connectionGroup = DispatchGroup()
    /// The directory holding recorded JSON responses used as templates (may be nil).
    let fixturesDirectory: URL?

    /// The TCP port the server listens on (127.0.0.1).
    public let port: Int

    /// `http://127.0.0.1:<port>`
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts listening on 127.0.0.1 on a kernel-picked port; serves until `shutdown()`.
    /// - Parameters:
    ///   - library: the generated Jellyfin library to serve.
    ///   - fixturesDirectory: folder with recorded responses (e.g. `Fixtures/server`) used as
    ///     response templates; when nil or a file is missing a built-in shape is used.
    ///   - port: port to bind (0 = let the kernel pick; used by the executable's `--port`).
    public init(library: TestLibrary = TestLibrary(), fixturesDirectory: URL? = nil, port: Int = 0) throws {
        signal(SIGPIPE, SIG_IGN)
        self.state = State(library: library)
        self.fixturesDirectory = fixturesDirectory

        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestServerError(operation: "socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))

        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = TestServerError(operation: "bind")
            close(fd)
            throw error
        }
        guard listen(fd, 128) == 0 else {
            let error = TestServerError(operation: "listen")
            close(fd)
            throw error
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(fd, $0, &length)
            }
        }
        guard named == 0 else {
            let error = TestServerError(operation: "getsockname")
            close(fd)
            throw error
        }
        self.listenFD = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))

        let thread = Thread { [self] in
            self.acceptLoop()
        }
        thread.name = "TestServer.accept"
        thread.start()
    }

    // MARK: - Public API

    /// A snapshot of the library currently served.
    public var library: TestLibrary {
        lock.withLock { state.library }
    }

    /// Mutates the served library (e.g. change a media source's bytes/ETag/size, remove an item).
    public func updateLibrary(_ change: (inout TestLibrary) -> Void) {
        lock.lock()
        change(&state.library)
        lock.unlock()
    }

    /// A new load of every playlist (``TestLibrary/reloadPlaylists()``): on 10.8/10.9 every `PlaylistItemId` changes.
    public func reloadPlaylists() {
        updateLibrary { $0.reloadPlaylists() }
    }

    /// Which Jellyfin version the server answers like (routes, methods, `Version`, errors, listing order).
    public var profile: JellyfinProfile {
        get { lock.withLock { state.profile } }
        set { lock.withLock { state.profile = newValue } }
    }

    /// A library scan meeting a sync: `change` is applied to the library right after the `afterPages`-th paged
    /// `/Items` listing request (one with `startIndex`) from now has been answered, so the later pages of that
    /// listing see the changed library. Jellyfin keeps no snapshot between pages: each is its own query
    /// (`ItemsController.GetItems`, v10.10.7 L317–320).
    public func scanDuringListing(afterPages: Int = 1, _ change: @escaping @Sendable (inout TestLibrary) -> Void) {
        lock.withLock { state.scans.append((state.listingPages + max(1, afterPages), change)) }
    }

    /// Counts a paged listing answered and runs the scans due.
    func listingPageAnswered() {
        lock.withLock {
            state.listingPages += 1
            let answered = state.listingPages
            let due = state.scans.filter { $0.afterPage <= answered }
            state.scans.removeAll { $0.afterPage <= answered }
            for scan in due { scan.change(&state.library) }
        }
    }

    /// Serve arbitrary bytes at `path` (exact path match, query ignored) with Range/If-Range/Last-Modified semantics.
    /// - Parameters:
    ///   - etag: nil ⇒ no ETag header (like Jellyfin's `/Items/{id}/Download`). Quotes are added when missing.
    ///   - contentDispositionFilename: filename for `Content-Disposition: attachment; filename="..."`.
    public func setFile(
        _ path: String, contents: [UInt8], lastModified: Date = Date(timeIntervalSince1970: 1_700_000_000),
        contentType: String = "application/octet-stream", etag: String? = nil,
        contentDispositionFilename: String? = nil, extraHeaders: [(String, String)] = []
    ) {
        let file = ServedFile(
            contents: contents, lastModified: lastModified, contentType: contentType,
            etag: etag.map(TestServer.quotedETag), contentDispositionFilename: contentDispositionFilename,
            extraHeaders: extraHeaders)
        lock.withLock { state.files[path] = file }
    }

    /// Stops serving `path`; later requests get 404.
    public func removeFile(_ path: String) {
        lock.withLock { _ = state.files.removeValue(forKey: path) }
    }

    /// The next `count` requests whose path equals `path` get `fault` (then normal service resumes).
    /// `path` `"*"` matches any path. Rules are consulted in the order they were added.
    /// - Parameter then: called each time the fault fires, after the faulty response was prepared and before
    ///   it is written (e.g. to change the library between a client's attempts). It may call back into the server.
    public func inject(_ fault: Fault, path: String, count: Int = 1, then: (@Sendable () -> Void)? = nil) {
        guard count > 0 else { return }
        lock.withLock { state.faults.append(FaultRule(fault: fault, path: path, remaining: count, then: then)) }
    }

    /// Removes every pending fault.
    public func clearFaults() {
        lock.withLock { state.faults.removeAll() }
    }

    /// Requests whose (decoded) path equals `path`, in arrival order.
    public func requests(to path: String) -> [RecordedRequest] {
        lock.withLock { state.requests.filter { $0.path == path } }
    }

    /// Every request received since start (or the last `resetStatistics()`), in arrival order.
    public var allRequests: [RecordedRequest] {
        lock.withLock { state.requests }
    }

    /// Number of currently open client connections.
    public var activeConnections: Int {
        lock.withLock { state.connections.count }
    }

    /// The most requests in flight at the same moment (request head parsed → response fully written)
    /// since start or the last `resetStatistics()`.
    public var maxConcurrentRequests: Int {
        lock.withLock { state.maxInFlight }
    }

    /// Clears recorded requests and responses and resets `maxConcurrentRequests` and `bodyBytesSent` to 0.
    public func resetStatistics() {
        lock.withLock {
            state.requests.removeAll()
            state.responses.removeAll()
            state.bodyBytesSent = 0
            state.maxInFlight = 0
        }
    }

    /// Every response written since start (or the last `resetStatistics()`), in the order they ended.
    public var responses: [ServedResponse] {
        lock.withLock { state.responses }
    }

    /// Response body bytes accepted by `send` since start (or the last `resetStatistics()`), counted as they go.
    public var bodyBytesSent: Int {
        lock.withLock { state.bodyBytesSent }
    }

    /// Requests being answered right now.
    public var requestsInFlight: Int {
        lock.withLock { state.inFlight }
    }

    /// Called (on the connection's thread) each time a response has ended, e.g. to write a request log.
    public func observeResponses(_ observer: (@Sendable (ServedResponse) -> Void)?) {
        lock.withLock { state.responseObserver = observer }
    }

    /// Answers requests for `path` (exact match, any method, query ignored) with `handler`, before faults,
    /// files and the Jellyfin routes: a hook for control endpoints of the executable (`/__control/...`).
    public func setHandler(_ path: String, _ handler: @escaping @Sendable (RecordedRequest) -> CustomResponse) {
        lock.withLock { state.handlers[path] = handler }
    }

    /// Server-side bandwidth cap for response bodies in bytes/second (per response; nil = unlimited).
    public func setThrottle(bytesPerSecond: Int?) {
        lock.withLock { state.throttle = bytesPerSecond.map { max(1, $0) } }
    }

    /// Closes the listener and all connections and waits for their threads to end. Idempotent.
    public func shutdown() {
        // Sockets are shut down while holding the lock: a registered fd is guaranteed to still be open
        // (connections unregister under the lock before closing), so we never touch a reused fd number.
        let first: Bool = lock.withLock {
            if state.shuttingDown { return false }
            state.shuttingDown = true
            if !state.listenerClosed { _ = Glibc.shutdown(listenFD, Int32(SHUT_RDWR)) }
            for fd in state.connections.values { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        gpodder.releaseHold()
        acceptFinished.wait()
        // Connection threads notice the shutdown (their sockets are shut down) and exit promptly.
        if connectionGroup.wait(timeout: .now() + 10) == .timedOut {
            lock.withLock {
                for fd in state.connections.values { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
            }
            _ = connectionGroup.wait(timeout: .now() + 5)
        }
    }

    // MARK: - Internals

    var isShuttingDown: Bool {
        lock.withLock { state.shuttingDown }
    }

    /// Ends every response stalled by a ``Fault/stall(afterBytes:seconds:)`` now, with a reset (RST): a test first
    /// waits until the client has written what it received, so no byte is lost in flight.
    public func resetStalledResponses() {
        lock.withLock { state.stallResets += 1 }
    }

    var stallResets: Int {
        lock.withLock { state.stallResets }
    }

    static func quotedETag(_ etag: String) -> String {
        if etag.hasPrefix("\"") || etag.hasPrefix("W/\"") { return etag }
        return "\"\(etag)\""
    }

    private func acceptLoop() {
        defer {
            lock.withLock {
                state.listenerClosed = true
                close(listenFD)
            }
            acceptFinished.signal()
        }
        while !isShuttingDown {
            var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, 200)
            if ready <= 0 { continue }
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN || code == ECONNABORTED { continue }
                // The listener is gone (shut down or closed): nothing more to accept.
                if isShuttingDown || code == EINVAL || code == EBADF || code == ENOTSOCK { return }
                usleep(10_000)
                continue
            }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let id: Int? = lock.withLock {
                if state.shuttingDown { return nil }
                state.nextConnectionID += 1
                state.connections[state.nextConnectionID] = client
                return state.nextConnectionID
            }
            guard let id else {
                close(client)
                return
            }
            connectionGroup.enter()
            let connection = ServerConnection(server: self, id: id, fd: client)
            let thread = Thread {
                connection.run()
                self.connectionGroup.leave()
            }
            thread.name = "TestServer.connection.\(id)"
            thread.start()
        }
    }

    /// Unregisters and closes a connection socket; with `reset` an RST is sent instead of FIN.
    func closeConnection(id: Int, fd: Int32, reset: Bool) {
        lock.withLock { _ = state.connections.removeValue(forKey: id) }
        if reset {
            var lingerOption = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lingerOption, socklen_t(MemoryLayout<linger>.size))
        }
        close(fd)
    }

    func requestStarted() {
        lock.withLock {
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
        }
    }

    func requestFinished() {
        lock.withLock { state.inFlight -= 1 }
    }

    /// Counts body bytes as `send` accepts them (``bodyBytesSent`` grows while a body is being written).
    func countBodyBytes(_ count: Int) {
        lock.withLock { state.bodyBytesSent += count }
    }

    /// Records a response that has ended and tells the observer.
    func responseEnded(
        _ request: RecordedRequest, status: Int, planned: Int, sent: Int, start: UInt64
    ) {
        let end = ServedResponse.monotonicNow()
        let (response, observer): (ServedResponse, (@Sendable (ServedResponse) -> Void)?) = lock.withLock {
            let response = ServedResponse(
                sequence: state.responses.count + 1, method: request.method, path: request.path,
                range: request.headers["range"], status: status, bodyBytesPlanned: planned, bodyBytesSent: sent,
                startNanoseconds: start, endNanoseconds: end)
            state.responses.append(response)
            return (response, state.responseObserver)
        }
        observer?(response)
    }

    var throttle: Int? {
        lock.withLock { state.throttle }
    }

    /// Sleeps up to `seconds`, returning early (false) when the server shuts down.
    func interruptibleSleep(_ seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if isShuttingDown { return false }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return true }
            usleep(UInt32(min(remaining, 0.01) * 1_000_000))
        }
    }

    /// Records the request, consumes a matching fault and produces the response to write; a gPodder upload held by
    /// the test (GPodderServer.holdPOST) waits here, outside the routing lock, until it is released.
    func handle(_ request: RecordedRequest) -> (HTTPResponse, BodyCut?) {
        let answer = routed(request)
        gpodder.waitIfHeld(request)
        return answer
    }

    private func routed(_ request: RecordedRequest) -> (HTTPResponse, BodyCut?) {
        if let handler = lock.withLock({ state.handlers[request.path] }) {
            let custom = handler(request)
            return (
                HTTPResponse(
                    status: custom.status, headers: [("Content-Type", custom.contentType)] + custom.headers,
                    body: custom.body), nil
            )
        }
        // Routing takes the gate: a fault's `then` changes what later requests see as one step with the fault
        // firing, so no request routed after the fault fired is answered from the state before the change.
        // (Without it, a client's retry could be served the old bytes while `then` had not yet run: the fault
        // matrix then saw a complete old file where the server's new one was expected.)
        routingGate.lock()
        defer { routingGate.unlock() }
        let rule: FaultRule? = lock.withLock {
            state.requests.append(request)
            guard
                let index = state.faults.firstIndex(where: {
                    $0.remaining > 0 && ($0.path == request.path || $0.path == "*")
                })
            else {
                return nil
            }
            let rule = state.faults[index]
            state.faults[index].remaining -= 1
            if state.faults[index].remaining <= 0 { state.faults.remove(at: index) }
            return rule
        }
        guard let rule else {
            let response = route(request, ignoreRange: false)
            // A gPodder upload the server stored but whose answer is lost on the way (GPodderServer.loseAnswer).
            return (response, gpodder.takeLostAnswer(request) ? .reset(afterBytes: 0) : nil)
        }
        let answer = faultyResponse(rule.fault, request: request)
        rule.then?()
        return answer
    }

    private func faultyResponse(_ fault: Fault, request: RecordedRequest) -> (HTTPResponse, BodyCut?) {
        switch fault {
        case .status(let status):
            return (.empty(status), nil)
        case .retryAfter(let status, let seconds):
            var response = HTTPResponse.empty(status)
            response.headers.append(("Retry-After", String(seconds)))
            return (response, nil)
        case .redirect(let location, let status):
            var response = HTTPResponse.empty(status)
            response.headers.append(("Location", location))
            return (response, nil)
        case .body(let status, let contentType, let bytes):
            return (HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: bytes), nil)
        case .rangeNotSatisfiable:
            let normal = route(request, ignoreRange: true)
            let size = normal.representationSize ?? normal.bodyRange.count
            return (HTTPResponse(status: 416, headers: [("Content-Range", "bytes */\(size)")]), nil)
        case .ignoreRange:
            return (route(request, ignoreRange: true), nil)
        case .rangeWithoutValidators:
            var unconditional = request
            unconditional.headers["if-range"] = nil
            var response = route(unconditional, ignoreRange: false)
            response.headers.removeAll { ["etag", "last-modified"].contains($0.0.lowercased()) }
            return (response, nil)
        case .resetAfter(let bytes):
            return (route(request, ignoreRange: false), .reset(afterBytes: max(0, bytes)))
        case .truncate(let bytes):
            return (route(request, ignoreRange: false), .truncate(afterBytes: max(0, bytes)))
        case .stall(let bytes, let seconds):
            return (route(request, ignoreRange: false), .stall(afterBytes: max(0, bytes), seconds: seconds))
        case .totalRecordCount(let count):
            var response = route(request, ignoreRange: false)
            if let listing = JSONValue.parse(Array(response.body[response.bodyRange])) {
                response.body = listing.setting("TotalRecordCount", .integer(count)).serialized()
                response.bodyRange = 0..<response.body.count
            }
            return (response, nil)
        }
    }

    /// Normal (fault-free) routing: static files first, then the Jellyfin API.
    func route(_ request: RecordedRequest, ignoreRange: Bool) -> HTTPResponse {
        if let file = lock.withLock({ state.files[request.path] }) {
            return file.response(method: request.method, headers: request.headers, ignoreRange: ignoreRange)
        }
        if let response = gpodder.response(request) {
            return response
        }
        if let response = jellyfinResponse(request, ignoreRange: ignoreRange) {
            return response
        }
        return .empty(404)
    }
}
