internal import CCurl
import Foundation

/// Receives one response's head and body on the loop thread.
protocol CurlResponseHandler: AnyObject {
    /// Called once, before the first body byte (or at the end when there is no body).
    /// Returns an error to abort the transfer.
    func didReceiveHead(status: Int, headers: HTTPHeaders, contentLength: Int64?) -> HTTPError?
    /// Called for each chunk of body bytes. Returns an error to abort the transfer.
    func didReceive(_ bytes: UnsafeRawBufferPointer) -> HTTPError?
}

/// What a finished easy transfer reports.
struct CurlCompletion: Sendable {
    var code: CurlCode
    var status: Int
    var headers: HTTPHeaders
    var effectiveURL: String
    var detail: String
    /// Set when a handler aborted the transfer; it explains the abort better than libcurl's code.
    var abortError: HTTPError?
    /// Whether the request went out (libcurl's `CURLINFO_REQUEST_SIZE` above 0): a time-out before it did is a
    /// name that did not resolve or a connection that was not made, not a stall.
    var requestSent = false
}

/// One libcurl easy handle with its callbacks, run by ``CurlMultiLoop``.
///
/// State transitions: created → submitted (loop adds the handle) → completed (loop removes it and resumes
/// the continuation exactly once) ; a cancel in any state before completed ends it as cancelled.
final class CurlOperation: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let url: String
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let handler: CurlResponseHandler

    // Loop-thread state.
    private var headers = HTTPHeaders()
    private var headDelivered = false
    private var abortError: HTTPError?
    /// The waiting task. A pthread mutex (not `Mutex`): the handler's state is written on the loop thread and
    /// read by the task after the resume, and ThreadSanitizer sees that ordering only through a lock it
    /// understands — taken by ``finish(_:)`` before the resume and by ``acknowledgeCompletion()`` after it.
    private let completionLock = NSLock()
    private var continuation: CheckedContinuation<CurlCompletion, Never>?
    private var cancelRequested = false

    init(url: String, handler: CurlResponseHandler) throws {
        CurlGlobal.ensureInitialised()
        guard let easy = curl_easy_init() else {
            throw HTTPError(.transport, "libcurl could not create a transfer handle", url: url)
        }
        self.easy = easy
        self.url = url
        self.handler = handler
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        try set(CURLOPT_URL, url)
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try set(CURLOPT_NOSIGNAL, 1)
        try check(ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        try set(CURLOPT_WRITEDATA, pointer: context)
        try check(ccurl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        try set(CURLOPT_HEADERDATA, pointer: context)
        try set(CURLOPT_PRIVATE, pointer: context)
    }

    deinit {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    // MARK: Options

    func set(_ option: CURLoption, _ value: Int) throws {
        try check(ccurl_easy_setopt_long(easy, option, value))
    }

    func set(_ option: CURLoption, offset value: Int64) throws {
        try check(ccurl_easy_setopt_off(easy, option, curl_off_t(value)))
    }

    func set(_ option: CURLoption, _ value: String) throws {
        // libcurl copies string options (since 7.17), so a temporary C string is enough.
        try check(ccurl_easy_setopt_string(easy, option, value))
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws {
        try check(ccurl_easy_setopt_pointer(easy, option, pointer))
    }

    /// Sets the request header fields. The corresponding libcurl option is `CURLOPT_HTTPHEADER`.
    func setHeaders(_ fields: HTTPHeaders) throws {
        var list: UnsafeMutablePointer<curl_slist>?
        for field in fields {
            let line = field.value.isEmpty ? "\(field.name):" : "\(field.name): \(field.value)"
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw HTTPError(.transport, "libcurl could not store a header", url: url)
            }
            list = appended
        }
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
        try check(ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list))
    }

    private func check(_ code: CURLcode) throws {
        guard code == CURLE_OK else {
            throw HTTPError.fromCurl(CurlCode(code), detail: "", url: url)
        }
    }

    // MARK: Continuation

    func install(_ continuation: CheckedContinuation<CurlCompletion, Never>) {
        completionLock.withLock { self.continuation = continuation }
    }

    /// Marks the operation cancelled (from any thread). The loop checks the mark when it adds the operation, so a
    /// cancellation that reaches the loop before the operation does is not lost.
    func requestCancel() {
        completionLock.withLock { cancelRequested = true }
    }

    /// Whether ``requestCancel()`` was called.
    var isCancelRequested: Bool {
        completionLock.withLock { cancelRequested }
    }

    /// Resumes the waiting task once; later calls do nothing.
    func finish(_ completion: CurlCompletion) {
        let waiting = completionLock.withLock { () -> CheckedContinuation<CurlCompletion, Never>? in
            let current = continuation
            continuation = nil
            return current
        }
        waiting?.resume(returning: completion)
    }

    /// Called by the resumed task before it reads what the handler collected: orders those reads after the
    /// loop thread's writes for ThreadSanitizer (the continuation already orders them for the program).
    func acknowledgeCompletion() {
        completionLock.withLock {}
    }

    // MARK: Loop-thread callbacks

    func completion(code: CURLcode) -> CurlCompletion {
        let status = responseStatus()
        if code == CURLE_OK && !headDelivered {
            deliverHead(status: status)
        }
        var effective: UnsafeMutablePointer<CChar>?
        _ = ccurl_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
        // Unless redirected, the request's own string: not a copy kept with each of a batch's 100,000 outcomes.
        let effectiveURL = effective.map { CurlOperation.spells($0, url) ? url : String(cString: $0) } ?? url
        var requestSize = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestSize)
        return CurlCompletion(
            code: CurlCode(code), status: status, headers: headers, effectiveURL: effectiveURL,
            detail: String(cString: errorBuffer), abortError: abortError, requestSent: requestSize > 0)
    }

    /// Whether the NUL-terminated `text` holds exactly the bytes of `string`.
    static func spells(_ text: UnsafePointer<CChar>, _ string: String) -> Bool {
        var position = 0
        for byte in string.utf8 {
            guard UInt8(bitPattern: text[position]) == byte else { return false }
            position += 1
        }
        return text[position] == 0
    }

    func cancelledCompletion() -> CurlCompletion {
        CurlCompletion(
            code: .abortedByCallback, status: responseStatus(), headers: headers, effectiveURL: url,
            detail: "cancelled",
            abortError: HTTPError.cancelled(url: url))
    }

    private func responseStatus() -> Int {
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    fileprivate func onHeader(_ line: String) {
        if line.hasPrefix("HTTP/") {
            // A new response (after a redirect or a 100 Continue): forget the previous one's fields.
            headers = HTTPHeaders()
        } else if let field = HTTPHeaders.parseLine(line) {
            headers.add(name: field.name, value: field.value)
        }
    }

    private func deliverHead(status: Int) {
        headDelivered = true
        var length: curl_off_t = -1
        _ = ccurl_easy_getinfo_off(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        if let error = handler.didReceiveHead(
            status: status, headers: headers, contentLength: length >= 0 ? Int64(length) : nil)
        {
            abortError = error
        }
    }

    fileprivate func onBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !headDelivered {
            deliverHead(status: responseStatus())
        }
        if abortError != nil { return false }
        if let error = handler.didReceive(bytes) {
            abortError = error
            return false
        }
        return true
    }
}

private func curlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context else { return 0 }
    let operation = Unmanaged<CurlOperation>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    return operation.onBody(bytes) ? length : ccurl_write_abort()
}

private func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let context, let data else { return 0 }
    let operation = Unmanaged<CurlOperation>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    operation.onHeader(line)
    return length
}

/// Runs `curl_global_init` exactly once per process.
enum CurlGlobal {
    private static let initialised: Bool = {
        curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()

    static func ensureInitialised() {
        _ = initialised
    }

    /// libcurl's version line, such as `libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13`.
    static var versionLine: String {
        guard let text = curl_version() else { return "libcurl" }
        return String(cString: text)
    }
}
