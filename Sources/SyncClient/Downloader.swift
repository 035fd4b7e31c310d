import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches one file to disk, streaming: over HTTP with `Range` to resume a partial file and
/// retries with backoff on transient failures, or by copying from a local folder.
struct Downloader: Sendable {
    var attempts = 4
    var initialBackoff = 0.2
    var timeouts = NetworkTimeouts()

    /// Fetches `location` into `destination`, resuming what is already there. Returns the
    /// bytes transferred in this call.
    func fetch(_ location: String, to destination: String, expectedSize: UInt64) async throws(SyncError) -> UInt64 {
        guard location.hasPrefix("http://") || location.hasPrefix("https://"), let url = URL(string: location) else {
            return try copyLocal(location, to: destination, expectedSize: expectedSize)
        }
        var lastError = SyncError.unreachable(source: location, reason: "no attempt made")
        var transferred: UInt64 = 0
        var attempt = 0
        while attempt < attempts {
            if attempt > 0 {
                try? await Task.sleep(nanoseconds: UInt64(initialBackoff * pow(2, Double(attempt - 1)) * 1e9))
            }
            let have = Self.size(of: destination)
            if have == expectedSize, expectedSize > 0 { return transferred }
            if have > expectedSize { unlink(destination) }
            let start = have > expectedSize ? 0 : have
            // A large archive comes in slices: the HTTP stack buffers what arrives faster than it
            // is written, so one request for a 1 GB video held most of it in memory.
            let end = expectedSize > Self.sliceSize ? min(expectedSize, start + Self.sliceSize) - 1 : nil
            do {
                let outcome = try await StreamingTransfer.run(
                    url: url, to: destination, resumeFrom: start, through: end, expectedSize: expectedSize, timeouts: timeouts)
                switch outcome.status {
                case 200, 206:
                    transferred += outcome.bytes
                    let now = Self.size(of: destination)
                    if now >= expectedSize { return transferred }
                    // A complete slice: the next one, without counting it as a failed attempt.
                    if outcome.status == 206, let end, now == end + 1 { continue }
                    // The connection ended early: resume on the next attempt.
                    lastError = .unreachable(source: location, reason: "the transfer ended after \(now) of \(expectedSize) bytes")
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
            } catch let error as TransferFailure {
                lastError = .unreachable(source: location, reason: "\(error)")
            } catch {
                lastError = .unreachable(source: location, reason: error.localizedDescription)
            }
            attempt += 1
        }
        throw lastError
    }

    /// Archives larger than this are requested this much at a time (`Range`), which bounds what
    /// the HTTP stack can hold for one download.
    static let sliceSize: UInt64 = 16 << 20

    /// A folder source's archive: a regular file only (a link, FIFO, device or folder is refused
    /// without being opened for reading), copied at most one byte past the manifest's size, so a
    /// source cannot hang a sync or fill the disk.
    private func copyLocal(_ path: String, to destination: String, expectedSize: UInt64) throws(SyncError) -> UInt64 {
        unlink(destination)
        let input = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard input >= 0 else { throw .unreachable(source: path, reason: "cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw .unreachable(source: path, reason: "is not a regular file")
        }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw .local(path: destination, reason: String(cString: strerror(errno))) }
        defer { close(output) }
        var copied: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let limit = expectedSize + 1
        while copied < limit {
            let want = Int(min(UInt64(buffer.count), limit - copied))
            let got = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, want) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .unreachable(source: path, reason: "cannot be read: \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            let put = buffer.withUnsafeBytes { write(output, $0.baseAddress, got) }
            guard put == got else { throw .local(path: destination, reason: "cannot be written: \(String(cString: strerror(errno)))") }
            copied += UInt64(got)
        }
        return copied
    }

    static func size(of path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
    }
}

/// How long a request may wait: for the server to answer at all (connection and response
/// headers), and between two pieces of data once it answers. A server that stops sending holds
/// no sync forever.
public struct NetworkTimeouts: Sendable, Equatable {
    public var connect: Double
    public var idle: Double
    /// An archive's transfer must average at least this many bytes a second: a server trickling
    /// one byte every few seconds (never idle long enough to time out) cannot hold a sync for hours.
    public var minimumBytesPerSecond: Double

    public init(connect: Double = 15, idle: Double = 30, minimumBytesPerSecond: Double = 16_384) {
        self.connect = connect
        self.idle = idle
        self.minimumBytesPerSecond = minimumBytesPerSecond
    }

    /// The whole transfer of `bytes`: time to answer, time at the minimum speed, and one idle spell.
    func deadline(for bytes: UInt64) -> Double {
        connect + idle + Double(bytes) / max(minimumBytesPerSecond, 1)
    }
}

enum TransferFailure: Error, CustomStringConvertible {
    case noAnswer(seconds: Double)
    case tooLarge(limit: Int)
    case longerThanPromised(bytes: UInt64)
    case tooSlow(seconds: Double)

    var description: String {
        switch self {
        case .noAnswer(let seconds): return "no answer within \(seconds) s (see --connect-timeout)"
        case .tooLarge(let limit): return "larger than \(limit >> 20) MiB"
        case .longerThanPromised(let bytes): return "the server sent more than the \(bytes) bytes the manifest promises; cut off"
        case .tooSlow(let seconds): return "not finished within \(Int(seconds)) s (slower than --min-speed)"
        }
    }
}

/// One HTTP GET streamed through a session delegate, to a file or into memory up to a bound,
/// so memory stays bounded whatever the server sends.
final class StreamingTransfer: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Sink {
        /// Written to a file that may hold at most `limit` bytes (the manifest's size): one more
        /// and the transfer is cut, so an endless body cannot fill the disk.
        case file(FileHandle, limit: UInt64)
        /// Collected in memory; the transfer stops as soon as it passes `limit` bytes.
        case memory(limit: Int)
    }

    // Touched only on the session's serial delegate queue, then read after completion.
    private let sink: Sink
    private var status = 0
    private var response: HTTPURLResponse?
    private var bytes: UInt64 = 0
    /// The file's size so far (what a resumed transfer started from, plus what came since).
    private var written: UInt64 = 0
    private var collected = Data()
    private var failure: Error?
    private var continuation: CheckedContinuation<(status: Int, bytes: UInt64), Error>?

    private init(sink: Sink) {
        self.sink = sink
    }

    /// A file can be resumed from where a dropped connection left it; a body in memory cannot.
    private var keepsPartialBody: Bool {
        if case .file = sink { return true }
        return false
    }

    static func run(
        url: URL, to path: String, resumeFrom offset: UInt64, through end: UInt64? = nil, expectedSize: UInt64, timeouts: NetworkTimeouts
    ) async throws -> (status: Int, bytes: UInt64) {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var request = URLRequest(url: url)
        if let end {
            request.setValue("bytes=\(offset)-\(end)", forHTTPHeaderField: "Range")
        } else if offset > 0 {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        }
        let transfer = StreamingTransfer(sink: .file(handle, limit: expectedSize))
        return try await transfer.start(request, timeouts: timeouts, deadline: timeouts.deadline(for: expectedSize))
    }

    /// The body of `request` in memory; throws `TransferFailure.tooLarge` once it passes `limit`.
    static func fetch(_ request: URLRequest, limit: Int, timeouts: NetworkTimeouts) async throws -> (data: Data, response: HTTPURLResponse?) {
        let transfer = StreamingTransfer(sink: .memory(limit: limit))
        _ = try await transfer.start(request, timeouts: timeouts, deadline: timeouts.deadline(for: UInt64(limit)))
        return (transfer.collected, transfer.response)
    }

    private func start(_ request: URLRequest, timeouts: NetworkTimeouts, deadline: Double) async throws -> (status: Int, bytes: UInt64) {
        var prepared = request
        prepared.cachePolicy = .reloadIgnoringLocalCacheData
        prepared.timeoutInterval = timeouts.idle
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = timeouts.idle
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        let request = prepared
        return try await withCheckedThrowingContinuation { continuation in
            queue.addOperation {
                self.continuation = continuation
                let task = session.dataTask(with: request)
                task.resume()
                // No answer in time: the task is cancelled and fails with the reason.
                DispatchQueue.global().asyncAfter(deadline: .now() + timeouts.connect) {
                    queue.addOperation {
                        guard self.response == nil, self.status == 0, self.continuation != nil else { return }
                        self.failure = TransferFailure.noAnswer(seconds: timeouts.connect)
                        task.cancel()
                    }
                }
                // However it trickles, the whole transfer ends by its deadline.
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
                    queue.addOperation {
                        guard self.continuation != nil, self.failure == nil else { return }
                        self.failure = TransferFailure.tooSlow(seconds: deadline)
                        task.cancel()
                    }
                }
            }
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        self.response = response as? HTTPURLResponse
        status = self.response?.statusCode ?? -1
        do {
            switch sink {
            case .file(let handle, _):
                // 206 continues the partial file; a plain 200 starts it again.
                if status == 206 { try handle.seekToEnd() } else { try handle.truncate(atOffset: 0) }
                written = try handle.offset()
            case .memory(let limit):
                if response.expectedContentLength > Int64(limit) { failure = TransferFailure.tooLarge(limit: limit) }
            }
        } catch {
            failure = error
        }
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil else { return }
        do {
            switch sink {
            case .file(let handle, let limit):
                guard status == 200 || status == 206 else { return }
                guard written + UInt64(data.count) <= limit else { throw TransferFailure.longerThanPromised(bytes: limit) }
                try handle.write(contentsOf: data)
                written += UInt64(data.count)
            case .memory(let limit):
                guard collected.count + data.count <= limit else { throw TransferFailure.tooLarge(limit: limit) }
                collected.append(data)
            }
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
        } else if let error, bytes == 0 || !keepsPartialBody {
            continuation?.resume(throwing: error)
        } else {
            // A connection dropped midway still leaves a partial file worth resuming.
            continuation?.resume(returning: (status, bytes))
        }
    }
}
