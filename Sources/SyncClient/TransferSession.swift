import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One `URLSession` that every transfer of a sync goes through, so that connections to the
/// server are kept open and reused: a session per archive opened a new connection (and a new
/// HTTP stack) for each of a course's thousand archives. Its delegate hands each task's
/// events to the `StreamingTransfer` that started it.
final class TransferSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    let timeouts: NetworkTimeouts
    /// Serial: every delegate call, and every access to `transfers`, happens on it.
    let queue: OperationQueue
    private var session: URLSession?
    private var transfers: [Int: StreamingTransfer] = [:]

    init(timeouts: NetworkTimeouts) {
        self.timeouts = timeouts
        queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = timeouts.idle
        configuration.httpMaximumConnectionsPerHost = 16
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Lets running tasks finish, then releases the session (and its reference to this delegate).
    func finish() {
        session?.finishTasksAndInvalidate()
    }

    /// Starts `request` for `transfer`; called on `queue`.
    func start(_ request: URLRequest, for transfer: StreamingTransfer) -> URLSessionDataTask? {
        guard let session else { return nil }
        let task = session.dataTask(with: request)
        transfers[task.taskIdentifier] = transfer
        task.resume()
        return task
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let transfer = transfers[dataTask.taskIdentifier] else { return completionHandler(.cancel) }
        completionHandler(transfer.received(response) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfers[dataTask.taskIdentifier]?.received(data, task: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        transfers.removeValue(forKey: task.taskIdentifier)?.completed(error)
    }
}
