import Crypto
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP GET streamed through a `TransferSession`, to a file or into memory up to a bound,
/// so memory stays bounded whatever the server sends. The body is hashed (SHA-256) as it
/// arrives, so a download is never read again to be checked.
final class StreamingTransfer: @unchecked Sendable {
    enum Sink {
        /// Written to a file that may hold at most `limit` bytes (the manifest's size): one more
        /// and the transfer is cut, so an endless body cannot fill the disk.
        case file(FileHandle, limit: UInt64)
        /// Collected in memory; the transfer stops as soon as it passes `limit` bytes.
        case memory(limit: Int)
    }

    struct Outcome {
        var status: Int
        /// Bytes of body received in this transfer.
        var bytes: UInt64
        /// The hash of the whole file (for a file sink: what it held before, plus what came).
        var hasher: SHA256
    }

    /// Every piece of state below is touched only on `work`, then read after completion. The
    /// session's one delegate queue hands each piece of a body over to it: copying, hashing and
    /// writing the bodies of several transfers then run on as many cores, where on that queue
    /// they took one (a sync of 222 MB spent most of its time there).
    private let work = DispatchQueue(label: "coursepack.transfer")
    private let sink: Sink
    private var status = 0
    private var response: HTTPURLResponse?
    private var bytes: UInt64 = 0
    /// The file's size so far (what a resumed transfer started from, plus what came since).
    private var written: UInt64 = 0
    private(set) var collected: [UInt8] = []
    /// Pieces of the body not yet written: the HTTP stack hands over a few KB at a time, and a
    /// write each would cost more than the copy.
    private var pending: [UInt8] = []
    private var hasher: SHA256
    private var failure: Error?
    private var continuation: CheckedContinuation<Outcome, Error>?

    private static let writeSize = 1 << 20
    private static let reservedLimit = 8 << 20

    /// Whether a body cut off midway is returned (to be resumed) rather than thrown away.
    private let keepsPartialBody: Bool

    /// `prefix` and `hasher`: what a memory sink already holds, and the hash of what the sink
    /// holds (a resumed download); both are dropped if the server answers with the whole body.
    private init(sink: Sink, prefix: [UInt8] = [], hasher: SHA256 = SHA256(), keepsPartialBody: Bool) {
        self.sink = sink
        self.hasher = hasher
        self.keepsPartialBody = keepsPartialBody
        if case .memory(let limit) = sink {
            // An archive's whole size at once (one allocation, not a doubling series); a
            // manifest, whose bound is far above its usual size, grows as it comes.
            collected.reserveCapacity(min(limit, Self.reservedLimit))
            collected.append(contentsOf: prefix)
        }
    }

    /// The body from `offset` (through `end`, when given) appended to the file at `path`, which
    /// holds `offset` bytes hashing to `hasher`.
    static func run(
        url: URL, to path: String, resumeFrom offset: UInt64, through end: UInt64? = nil, expectedSize: UInt64,
        hasher: SHA256, session: TransferSession
    ) async throws -> Outcome {
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
        let transfer = StreamingTransfer(sink: .file(handle, limit: expectedSize), hasher: hasher, keepsPartialBody: true)
        return try await transfer.start(request, session: session, deadline: session.timeouts.deadline(for: expectedSize))
    }

    /// The body of `request` in memory, with its hash; throws `TransferFailure.tooLarge` once
    /// it passes `limit`. `resuming`: the bytes a cut-off earlier attempt received, and their
    /// hash, which a 206 answer continues; a transfer cut off again returns what it has.
    static func fetch(
        _ request: URLRequest, limit: Int, session: TransferSession, resuming: (bytes: [UInt8], hasher: SHA256)? = nil
    ) async throws -> (bytes: [UInt8], status: Int, hasher: SHA256, response: HTTPURLResponse?) {
        let transfer = StreamingTransfer(
            sink: .memory(limit: limit), prefix: resuming?.bytes ?? [], hasher: resuming?.hasher ?? SHA256(), keepsPartialBody: resuming != nil)
        let outcome = try await transfer.start(request, session: session, deadline: session.timeouts.deadline(for: UInt64(limit)))
        return (transfer.collected, outcome.status, outcome.hasher, transfer.response)
    }

    /// One request on a session of its own (the manifest, before a sync starts its downloads).
    static func fetch(_ request: URLRequest, limit: Int, timeouts: NetworkTimeouts) async throws -> (data: Data, response: HTTPURLResponse?) {
        let session = TransferSession(timeouts: timeouts)
        defer { session.finish() }
        let result = try await fetch(request, limit: limit, session: session)
        return (Data(result.bytes), result.response)
    }

    private func start(_ request: URLRequest, session: TransferSession, deadline: Double) async throws -> Outcome {
        var prepared = request
        prepared.cachePolicy = .reloadIgnoringLocalCacheData
        prepared.timeoutInterval = session.timeouts.idle
        let request = prepared
        let queue = session.queue
        let connect = session.timeouts.connect
        return try await withCheckedThrowingContinuation { continuation in
            queue.addOperation {
                self.work.sync { self.continuation = continuation }
                guard let task = session.start(request, for: self) else {
                    self.work.sync { self.continuation = nil }
                    continuation.resume(throwing: TransferFailure.noAnswer(seconds: 0))
                    return
                }
                // Weakly held: a timer outlives its transfer by minutes, and must not keep the
                // transfer's body (up to an archive in memory) alive until it fires.
                // No answer in time: the task is cancelled and fails with the reason.
                DispatchQueue.global().asyncAfter(deadline: .now() + connect) { [weak self, weak task] in
                    guard let self, let task else { return }
                    self.work.async {
                        guard self.response == nil, self.status == 0, self.continuation != nil else { return }
                        self.failure = TransferFailure.noAnswer(seconds: connect)
                        task.cancel()
                    }
                }
                let timeouts = session.timeouts
                self.scheduleSpeedCheck(at: timeouts.connect + 2 * timeouts.idle, started: .now(), timeouts: timeouts, task: task)
                // However it trickles, the whole transfer ends by its deadline.
                DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [weak self, weak task] in
                    guard let self, let task else { return }
                    self.work.async {
                        guard self.continuation != nil, self.failure == nil else { return }
                        self.failure = TransferFailure.tooSlow(seconds: deadline)
                        task.cancel()
                    }
                }
            }
        }
    }

    /// From the time to answer and two idle spells on, once every idle spell: a transfer that
    /// has received less than the minimum speed allows (`NetworkTimeouts.minimumBytes`) is cut
    /// as too slow.
    private func scheduleSpeedCheck(at seconds: Double, started: DispatchTime, timeouts: NetworkTimeouts, task: URLSessionDataTask) {
        DispatchQueue.global().asyncAfter(deadline: started + seconds) { [weak self, weak task] in
            guard let self, let task else { return }
            self.work.async {
                guard self.continuation != nil, self.failure == nil else { return }
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
                if Double(self.bytes) < timeouts.minimumBytes(after: elapsed) {
                    self.failure = TransferFailure.tooSlow(seconds: elapsed)
                    task.cancel()
                } else {
                    self.scheduleSpeedCheck(at: seconds + timeouts.idle, started: started, timeouts: timeouts, task: task)
                }
            }
        }
    }

    /// The response's head; false cancels the transfer. Called on the session's queue, and
    /// answered there: after whatever `work` holds, before any piece of the body.
    func received(_ response: URLResponse) -> Bool {
        work.sync { head(response) }
    }

    private func head(_ response: URLResponse) -> Bool {
        self.response = response as? HTTPURLResponse
        status = self.response?.statusCode ?? -1
        do {
            switch sink {
            case .file(let handle, _):
                // 206 continues the partial file; a plain 200 starts it again.
                if status == 206 {
                    try handle.seekToEnd()
                } else {
                    try handle.truncate(atOffset: 0)
                    hasher = SHA256()
                }
                written = try handle.offset()
            case .memory(let limit):
                // 206 continues what an earlier attempt received; anything else starts again.
                if status != 206 {
                    collected.removeAll(keepingCapacity: true)
                    hasher = SHA256()
                }
                if response.expectedContentLength > Int64(limit - collected.count) { failure = TransferFailure.tooLarge(limit: limit) }
            }
        } catch {
            failure = error
        }
        return failure == nil
    }

    /// A piece of the body, handed over in order: it is copied, hashed and written on `work`.
    func received(_ data: Data, task: URLSessionDataTask) {
        work.async { self.take(data, task: task) }
    }

    private func take(_ data: Data, task: URLSessionDataTask) {
        guard failure == nil else { return }
        do {
            switch sink {
            case .file(let handle, let limit):
                guard status == 200 || status == 206 else { return }
                guard written + UInt64(data.count) <= limit else { throw TransferFailure.longerThanPromised(bytes: limit) }
                data.withUnsafeBytes { pending.append(contentsOf: $0.bindMemory(to: UInt8.self)) }
                written += UInt64(data.count)
                if pending.count >= Self.writeSize { try flush(handle) }
            case .memory(let limit):
                guard collected.count + data.count <= limit else { throw TransferFailure.tooLarge(limit: limit) }
                data.withUnsafeBytes { collected.append(contentsOf: $0.bindMemory(to: UInt8.self)) }
            }
            if status == 200 || status == 206 { hasher.update(data: data) }
            bytes += UInt64(data.count)
        } catch {
            failure = error
            task.cancel()
        }
    }

    private func flush(_ handle: FileHandle) throws {
        guard !pending.isEmpty else { return }
        try handle.write(contentsOf: pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// After every piece of the body handed over before it.
    func completed(_ error: Error?) {
        work.async { self.finish(error) }
    }

    private func finish(_ error: Error?) {
        if failure == nil, case .file(let handle, _) = sink {
            do { try flush(handle) } catch { failure = error }
        }
        let continuation = self.continuation
        self.continuation = nil
        if let failure {
            continuation?.resume(throwing: failure)
        } else if let error, bytes == 0 || !keepsPartialBody {
            continuation?.resume(throwing: error)
        } else {
            // A connection dropped midway still leaves a partial file worth resuming.
            continuation?.resume(returning: Outcome(status: status, bytes: bytes, hasher: hasher))
        }
    }
}
