import Crypto
import FileSystem
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches one archive, streaming and hashing it as it comes: a small one over HTTP into
/// memory, a large one to disk with `Range` requests (to resume a partial file and to bound
/// what the HTTP stack holds), or a copy from a local folder. Retries with backoff on
/// transient failures.
struct Downloader: Sendable {
    var attempts = 4
    var initialBackoff = 0.2
    let session: TransferSession

    /// A download's bytes and their SHA-256 (lowercase hex), computed as they arrived.
    struct Fetched {
        enum Bytes {
            case memory([UInt8])
            /// The file the download was written to (the `destination` asked for).
            case file(String)
        }

        var bytes: Bytes
        var size: UInt64
        var sha256: String
        /// Bytes transferred in this call (less than `size` when a partial file was resumed).
        var transferred: UInt64
    }

    /// Archives up to this size are fetched into memory, unpacked from there and never written
    /// whole to disk: with the jobs a sync runs at once, a few MB each.
    static let memoryLimit: UInt64 = 4 << 20

    /// Fetches `location`: into memory when it is small and comes over HTTP, otherwise into
    /// `destination`, resuming what is already there.
    func fetch(_ location: String, to destination: String, expectedSize: UInt64) async throws(SyncError) -> Fetched {
        guard location.hasPrefix("http://") || location.hasPrefix("https://"), let url = URL(string: location) else {
            return try copyLocal(location, to: destination, expectedSize: expectedSize)
        }
        if expectedSize <= Self.memoryLimit {
            unlink(destination)
            return try await fetchIntoMemory(url, shown: location, expectedSize: expectedSize)
        }
        return try await fetchToFile(url, shown: location, to: destination, expectedSize: expectedSize)
    }

    private func backoff(_ attempt: Int) async {
        guard attempt > 0 else { return }
        try? await Task.sleep(nanoseconds: UInt64(initialBackoff * pow(2, Double(attempt - 1)) * 1e9))
    }

    /// The whole body into memory; an attempt cut off midway is resumed (`Range`) from what
    /// it received.
    private func fetchIntoMemory(_ url: URL, shown: String, expectedSize: UInt64) async throws(SyncError) -> Fetched {
        var lastError = SyncError.unreachable(source: shown, reason: "no attempt made")
        var received: (bytes: [UInt8], hasher: SHA256) = ([], SHA256())
        var transferred: UInt64 = 0
        for attempt in 0..<attempts {
            await backoff(attempt)
            var request = URLRequest(url: url)
            request.cachePolicy = .reloadIgnoringLocalCacheData
            if !received.bytes.isEmpty { request.setValue("bytes=\(received.bytes.count)-", forHTTPHeaderField: "Range") }
            do {
                // One byte past the promise is enough to know the server sends more than it should.
                let (bytes, status, hasher, _) = try await StreamingTransfer.fetch(
                    request, limit: Int(expectedSize) + 1, session: session, resuming: received)
                switch status {
                case 200, 206:
                    transferred += UInt64(max(0, bytes.count - (status == 206 ? received.bytes.count : 0)))
                    received = (bytes, hasher)
                    if UInt64(bytes.count) == expectedSize {
                        return Fetched(bytes: .memory(bytes), size: expectedSize, sha256: SHA256Hex.hex(hasher.finalize()), transferred: transferred)
                    }
                    if UInt64(bytes.count) > expectedSize {
                        received = ([], SHA256())
                        lastError = .unreachable(source: shown, reason: "\(TransferFailure.longerThanPromised(bytes: expectedSize))")
                    } else {
                        // The connection ended early: resume on the next attempt.
                        lastError = .unreachable(source: shown, reason: "the transfer ended after \(bytes.count) of \(expectedSize) bytes")
                    }
                default:
                    if status == 416 { received = ([], SHA256()) }
                    lastError = try Self.failure(status: status, shown: shown)
                }
            } catch let error as SyncError {
                throw error
            } catch TransferFailure.tooLarge {
                received = ([], SHA256())
                lastError = .unreachable(source: shown, reason: "\(TransferFailure.longerThanPromised(bytes: expectedSize))")
            } catch {
                lastError = Self.transient(error, shown: shown)
            }
        }
        throw lastError
    }

    /// The body into `destination`, resuming what is there, a slice at a time.
    private func fetchToFile(_ url: URL, shown: String, to destination: String, expectedSize: UInt64) async throws(SyncError) -> Fetched {
        var lastError = SyncError.unreachable(source: shown, reason: "no attempt made")
        var transferred: UInt64 = 0
        var hash = (hasher: SHA256(), hashed: UInt64(0))
        var attempt = 0
        while attempt < attempts {
            await backoff(attempt)
            let start = Self.resumePoint(of: destination, expectedSize: expectedSize, hash: &hash)
            if start == expectedSize, expectedSize > 0 {
                return Fetched(bytes: .file(destination), size: start, sha256: SHA256Hex.hex(hash.hasher.finalize()), transferred: transferred)
            }
            // A large archive comes in slices: the HTTP stack buffers what arrives faster than it
            // is written, so one request for a 1 GB video held most of it in memory.
            let end = expectedSize > Self.sliceSize ? min(expectedSize, start + Self.sliceSize) - 1 : nil
            do {
                let outcome = try await StreamingTransfer.run(
                    url: url, to: destination, resumeFrom: start, through: end, expectedSize: expectedSize, hasher: hash.hasher, session: session)
                let now = Self.size(of: destination)
                hash = (outcome.hasher, now)
                switch outcome.status {
                case 200, 206:
                    transferred += outcome.bytes
                    if now >= expectedSize {
                        return Fetched(bytes: .file(destination), size: now, sha256: SHA256Hex.hex(hash.hasher.finalize()), transferred: transferred)
                    }
                    // A complete slice: the next one, without counting it as a failed attempt.
                    if outcome.status == 206, let end, now == end + 1 { continue }
                    // The connection ended early: resume on the next attempt.
                    lastError = .unreachable(source: shown, reason: "the transfer ended after \(now) of \(expectedSize) bytes")
                case let status:
                    if status == 416 { unlink(destination) }
                    lastError = try Self.failure(status: status, shown: shown)
                }
            } catch let error as SyncError {
                throw error
            } catch {
                lastError = Self.transient(error, shown: shown)
            }
            attempt += 1
        }
        throw lastError
    }

    /// Where a download into `destination` resumes: what is on disk, its hash redone when `hash`
    /// does not cover it (a partial file from an earlier sync, a failed attempt). A file longer
    /// than promised starts over.
    private static func resumePoint(of destination: String, expectedSize: UInt64, hash: inout (hasher: SHA256, hashed: UInt64)) -> UInt64 {
        var have = size(of: destination)
        if have > expectedSize {
            unlink(destination)
            have = 0
        }
        if have != hash.hashed {
            hash = hashPrefix(of: destination, count: have)
            have = hash.hashed
        }
        return have
    }

    /// An attempt answered with a status other than success: an error to retry after (a
    /// timeout, throttling, a server error, a range the server cannot serve), or one thrown at once.
    private static func failure(status: Int, shown: String) throws(SyncError) -> SyncError {
        switch status {
        case 408, 416, 429, 500...599: return .http(url: shown, status: status)
        default: throw .http(url: shown, status: status)
        }
    }

    /// An attempt cut off by the network or the transfer's limits: retried.
    private static func transient(_ error: any Error, shown: String) -> SyncError {
        if let failure = error as? TransferFailure { return .unreachable(source: shown, reason: "\(failure)") }
        return .unreachable(source: shown, reason: error.localizedDescription)
    }

    /// The hash of the first `count` bytes of `path`, and how many were read (fewer if the file
    /// is shorter or unreadable: the download then resumes from there).
    private static func hashPrefix(of path: String, count: UInt64) -> (SHA256, UInt64) {
        var hasher = SHA256()
        guard count > 0, let file = try? InputFile(path: path) else { return (hasher, 0) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done: UInt64 = 0
        while done < count {
            let want = Int(min(UInt64(buffer.count), count - done))
            guard let got = try? buffer.withUnsafeMutableBytes({ raw throws(FileError) in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<want]))
            }), got > 0 else { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            done += UInt64(got)
        }
        if done < count { truncate(path, off_t(done)) }
        return (hasher, done)
    }

    /// Archives larger than this are requested this much at a time (`Range`), which bounds what
    /// the HTTP stack can hold for one download.
    static let sliceSize: UInt64 = 16 << 20

    /// A folder source's archive: a regular file only (a link, FIFO, device or folder is refused
    /// without being opened for reading), copied at most one byte past the manifest's size, so a
    /// source cannot hang a sync or fill the disk. Hashed while it is copied.
    private func copyLocal(_ path: String, to destination: String, expectedSize: UInt64) throws(SyncError) -> Fetched {
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
        var hasher = SHA256()
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
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            copied += UInt64(got)
        }
        return Fetched(bytes: .file(destination), size: copied, sha256: SHA256Hex.hex(hasher.finalize()), transferred: copied)
    }

    static func size(of path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_size) : 0
    }
}
