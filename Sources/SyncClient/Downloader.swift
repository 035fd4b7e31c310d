import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches one file to disk, streaming: over HTTP with `Range` to resume a partial file and
/// retries with backoff on transient failures, or by copying from a local folder.
struct Downloader: Sendable {
    var attempts = 4
    var initialBackoff = 0.2

    /// Fetches `location` into `destination`, resuming what is already there. Returns the
    /// bytes transferred in this call.
    func fetch(_ location: String, to destination: String, expectedSize: UInt64) async throws(SyncError) -> UInt64 {
        guard location.hasPrefix("http://") || location.hasPrefix("https://"), let url = URL(string: location) else {
            return try copyLocal(location, to: destination)
        }
        var lastError = SyncError.unreachable(source: location, reason: "no attempt made")
        for attempt in 0..<attempts {
            if attempt > 0 {
                try? await Task.sleep(nanoseconds: UInt64(initialBackoff * pow(2, Double(attempt - 1)) * 1e9))
            }
            let have = Self.size(of: destination)
            if have == expectedSize, expectedSize > 0 { return 0 }
            if have > expectedSize { unlink(destination) }
            do {
                let outcome = try await StreamingTransfer.run(url: url, to: destination, resumeFrom: have > expectedSize ? 0 : have)
                switch outcome.status {
                case 200, 206:
                    if Self.size(of: destination) >= expectedSize { return outcome.bytes }
                    // The connection ended early: resume on the next attempt.
                    lastError = .unreachable(source: location, reason: "the transfer ended after \(Self.size(of: destination)) of \(expectedSize) bytes")
                case 416:
                    unlink(destination)
                    lastError = .http(url: location, status: 416)
                case 408, 429, 500...599:
                    lastError = .http(url: location, status: outcome.status)
                default:
                    throw SyncError.http(url: location, status: outcome.status)
                }
            } catch let error as SyncError {
                throw error
            } catch {
                lastError = .unreachable(source: location, reason: error.localizedDescription)
            }
        }
        throw lastError
    }

    private func copyLocal(_ path: String, to destination: String) throws(SyncError) -> UInt64 {
        unlink(destination)
        do {
            try FileManager.default.copyItem(atPath: path, toPath: destination)
        } catch {
            throw .unreachable(source: path, reason: "cannot be copied")
        }
        return Self.size(of: destination)
    }

    static func size(of path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
    }
}

/// One HTTP GET streamed to a file through a session delegate, so memory stays bounded.
private final class StreamingTransfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Touched only on the session's serial delegate queue, then read after completion.
    private let handle: FileHandle
    private var status = 0
    private var bytes: UInt64 = 0
    private var failure: Error?
    private var continuation: CheckedContinuation<(status: Int, bytes: UInt64), Error>?

    private init(handle: FileHandle) {
        self.handle = handle
    }

    static func run(url: URL, to path: String, resumeFrom offset: UInt64) async throws -> (status: Int, bytes: UInt64) {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let transfer = StreamingTransfer(handle: handle)
        var request = URLRequest(url: url)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.timeoutInterval = 60
        if offset > 0 { request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range") }
        let prepared = request
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.addOperation {
                transfer.continuation = continuation
                session.dataTask(with: prepared).resume()
            }
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        do {
            // 206 continues the partial file; a plain 200 starts it again.
            if status == 206 { try handle.seekToEnd() } else { try handle.truncate(atOffset: 0) }
        } catch {
            failure = error
        }
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil, status == 200 || status == 206 else { return }
        do {
            try handle.write(contentsOf: data)
            bytes += UInt64(data.count)
        } catch {
            failure = error
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let continuation = self.continuation
        self.continuation = nil
        if let failure {
            continuation?.resume(throwing: failure)
        } else if let error, bytes == 0 {
            continuation?.resume(throwing: error)
        } else {
            // A connection dropped midway still leaves a partial file worth resuming.
            continuation?.resume(returning: (status, bytes))
        }
    }
}
