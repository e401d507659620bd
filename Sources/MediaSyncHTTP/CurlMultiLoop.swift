internal import CCurl
import Foundation

/// The process's one libcurl multi handle, driven by a thread of its own.
///
/// Every API call and file transfer of the process runs here, so connections are shared and reused.
/// Operations are handed over through a locked inbox, and `curl_multi_wakeup` when the loop waits in
/// `curl_multi_poll` (a wake-up for each hand-over was a `send` and an extra round of the loop per file); all
/// libcurl calls on the multi handle and all callbacks happen on the loop thread. The thread is also a task executor
/// (see the extension at the end), on which the transfer engine's workers run.
final class CurlMultiLoop: @unchecked Sendable {
    static let shared = CurlMultiLoop()

    private struct Inbox {
        var added: [CurlOperation] = []
        var cancelled: [CurlOperation] = []
        /// Tasks to run here (see ``enqueue(_:)``).
        var jobs: [UnownedJob] = []
        /// The loop found the inbox empty and waits (or is about to wait) in `curl_multi_poll`: what is put in
        /// the inbox now needs a wake-up.
        var waiting = false
    }

    private let multi: UnsafeMutableRawPointer?
    private let inbox = Locked(Inbox())
    /// The loop's thread, once it runs.
    private let loopThread = Locked<pthread_t?>(nil)
    /// Whether the caller runs on the loop's thread.
    var isLoopThread: Bool {
        guard let thread = loopThread.withLock({ $0 }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }
    /// Loop-thread only: the operations libcurl is running, by easy handle.
    private var active: [UnsafeMutableRawPointer: CurlOperation] = [:]

    private init() {
        CurlGlobal.ensureInitialised()
        multi = curl_multi_init()
        if let multi {
            // Many reused connections to a few hosts: keep more of them cached than the default.
            _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
            let thread = Thread { [self] in self.run() }
            thread.name = "mediasync.curl"
            thread.start()
        }
    }

    /// Runs one operation to completion. Cancelling the calling task removes it from the loop.
    func perform(_ operation: CurlOperation) async -> CurlCompletion {
        guard multi != nil else {
            return CurlCompletion(
                code: .writeError, status: 0, headers: HTTPHeaders(), effectiveURL: operation.url,
                detail: "libcurl could not create its multi handle",
                abortError: HTTPError(.transport, "libcurl could not create its multi handle", url: operation.url))
        }
        return await withTaskCancellationHandler {
            if Task.isCancelled {
                return operation.cancelledCompletion()
            }
            let completion = await withCheckedContinuation { continuation in
                operation.install(continuation)
                let waiting = inbox.withLock { inbox in
                    inbox.added.append(operation)
                    return inbox.waiting
                }
                if waiting { wakeUp() }
            }
            operation.acknowledgeCompletion()
            return completion
        } onCancel: {
            operation.requestCancel()
            let waiting = inbox.withLock { inbox in
                inbox.cancelled.append(operation)
                return inbox.waiting
            }
            if waiting { wakeUp() }
        }
    }

    private func takeInbox() -> Inbox {
        inbox.withLock { inbox -> Inbox in
            let taken = inbox
            inbox = Inbox()
            return taken
        }
    }

    /// Whether tasks can run on the loop's thread (``enqueue(_:)``): the thread runs only when libcurl made its
    /// multi handle.
    var runsTasks: Bool { multi != nil }

    private func wakeUp() {
        if let multi { _ = curl_multi_wakeup(multi) }
    }

    private func run() {
        guard let multi else { return }
        loopThread.withLock { $0 = pthread_self() }
        var running: Int32 = 0
        var queued: Int32 = 0
        while true {
            var work = takeInbox()
            // The tasks that run here first: what they hand over (requests, cancellations, more tasks) is taken in
            // the same round.
            while !work.jobs.isEmpty {
                for job in work.jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
                let more = takeInbox()
                work.jobs = more.jobs
                work.added += more.added
                work.cancelled += more.cancelled
            }
            for operation in work.added {
                // Cancelled before it reached the loop (its cancellation may have come in an earlier round, when
                // it was not running yet): finished as cancelled, never started.
                if operation.isCancelRequested {
                    operation.finish(operation.cancelledCompletion())
                } else if curl_multi_add_handle(multi, operation.easy) == CURLM_OK {
                    active[operation.easy] = operation
                } else {
                    operation.finish(operation.completion(code: CURLE_FAILED_INIT))
                }
            }
            for operation in work.cancelled where active.removeValue(forKey: operation.easy) != nil {
                curl_multi_remove_handle(multi, operation.easy)
                operation.finish(operation.cancelledCompletion())
            }
            curl_multi_perform(multi, &running)
            while let message = curl_multi_info_read(multi, &queued) {
                guard ccurl_msg_is_done(message) != 0, let easy = message.pointee.easy_handle else { continue }
                let code = ccurl_msg_result(message)
                guard let operation = active.removeValue(forKey: easy) else {
                    curl_multi_remove_handle(multi, easy)
                    continue
                }
                let completion = operation.completion(code: code)
                curl_multi_remove_handle(multi, easy)
                operation.finish(completion)
            }
            // Waits for socket activity, libcurl's own timers, or a wake-up from another thread, unless something
            // arrived meanwhile. Once `waiting` is set under the lock, whatever is handed over wakes the poll (a
            // wake-up sent before the poll starts makes it return at once).
            let mayWait = inbox.withLock { inbox -> Bool in
                guard inbox.added.isEmpty && inbox.cancelled.isEmpty && inbox.jobs.isEmpty else { return false }
                inbox.waiting = true
                return true
            }
            if mayWait { curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
    }
}

/// The loop's thread runs tasks too: the transfer engine's workers run here, so a finished transfer goes on to its
/// placing and to the next request on the thread that finished it, instead of waking a thread of the global pool
/// and waking the loop again with the next request (two thread hand-offs per file).
extension CurlMultiLoop: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        // No loop thread (libcurl made no multi handle): the task runs on the global executor instead of never.
        guard multi != nil else {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        let job = UnownedJob(job)
        let waiting = inbox.withLock { inbox in
            inbox.jobs.append(job)
            return inbox.waiting
        }
        if waiting { wakeUp() }
    }
}
