import Crypto
import FileSystem
import Foundation
import Manifest
import ZlibStream

/// A content written into the store: what it cost to get and its CRC-32 (for inventories).
struct StoredContent: Sendable {
    var transferred: UInt64
    var crc32: UInt32
}

/// Writes decoded bytes to a new file in the store, hashing, sizing and checksumming them as
/// they come, and stops as soon as they pass the size the manifest gives (a gzip bomb).
private struct ContentWriter {
    let key: String
    let file: CourseFile
    let temporary: String
    let descriptor: Int32
    /// Nil when the bytes are known to hash to the key already (a stored content's download,
    /// hashed as it arrived): hashing them again would prove nothing.
    var hasher: SHA256?
    var crc = CRC32()
    var written: UInt64 = 0

    init(key: String, file: CourseFile, temporary: String, hashed: Bool) throws(SyncError) {
        (self.key, self.file, self.temporary) = (key, file, temporary)
        hasher = hashed ? nil : SHA256()
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .local(path: temporary, reason: String(cString: strerror(errno))) }
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(SyncError) {
        written += UInt64(bytes.count)
        guard written <= file.size else {
            throw .verification(archive: file.path(sha256: key), reason: "decodes to more than the \(file.size) bytes the manifest gives (a gzip bomb?); nothing is installed from it")
        }
        hasher?.update(bufferPointer: bytes)
        crc.update(bytes)
        var offset = 0
        while offset < bytes.count {
            let put = Foundation.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if put < 0 && errno == EINTR { continue }
            guard put > 0 else { throw .local(path: temporary, reason: "cannot be written: \(String(cString: strerror(errno)))") }
            offset += put
        }
    }

    /// Checks the whole content against its key and size; syncs it when `synced`.
    func finish(synced: Bool) throws(SyncError) {
        let shown = file.path(sha256: key)
        guard written == file.size else {
            throw .verification(archive: shown, reason: "holds \(written) bytes, the manifest says \(file.size); nothing is installed from it")
        }
        if let hasher, SHA256Hex.hex(hasher.finalize()) != key {
            throw .verification(archive: shown, reason: "its bytes do not match its sha256; nothing is installed from it")
        }
        if synced {
            if fsync(descriptor) != 0 { throw .local(path: temporary, reason: "cannot be synced: \(String(cString: strerror(errno)))") }
        } else {
            // The one wait before the swap (`syncfs`) finds the contents on their way already.
            DurableFile.startWriteback(descriptor)
        }
    }

    func close() { _ = Foundation.close(descriptor) }
}

extension SyncClient {
    /// Downloads `key` from the source (its published path, derived from the key), checks the
    /// published size while streaming, decodes it, checks decoded size and sha256 against the
    /// manifest, and puts it in the store. A content that does not match is refused whole.
    func fetchContent(_ key: String, file: CourseFile, store: ContentStore, session: TransferSession) async throws(SyncError) -> StoredContent {
        let published = file.path(sha256: key)
        let partial = stateFolder + "/downloads/" + key + (file.encoding == .gzip ? ".gz" : "")
        let fetched = try await Downloader(session: session).fetch(options.source.location(of: published), to: partial, expectedSize: file.compressedSize)
        defer { unlink(partial) }
        guard fetched.size == file.compressedSize else {
            throw .verification(archive: published, reason: "the download is \(fetched.size) bytes, the manifest says \(file.compressedSize); nothing is installed from it")
        }
        // A stored content's download is the content: the hash taken as it arrived is the one
        // its key promises, checked before anything reaches the store.
        let stored = file.encoding == nil
        if stored {
            guard fetched.sha256 == key else {
                throw .verification(archive: published, reason: "its bytes do not match its sha256; nothing is installed from it")
            }
            if case .file(let path) = fetched.bytes, let crc32 = try adoptDownload(path, as: key, file: file, store: store, shown: published) {
                return StoredContent(transferred: fetched.transferred, crc32: crc32)
            }
        }
        let temporary = try store.temporaryPath(for: key)
        var writer = try ContentWriter(key: key, file: file, temporary: temporary, hashed: stored)
        do throws(SyncError) {
            defer { writer.close() }
            try decode(fetched.bytes, encoding: file.encoding, shown: published, into: &writer)
            try writer.finish(synced: options.durability == .perFile)
        } catch {
            unlink(temporary)
            throw error
        }
        do throws(SyncError) {
            try store.adopt(temporary, as: key, link: false, synced: options.durability == .perFile)
        } catch {
            unlink(temporary)
            throw error
        }
        return StoredContent(transferred: fetched.transferred, crc32: writer.crc.value)
    }

    /// A verified download of a stored content, moved into the store as it is rather than
    /// copied (a large media file is written once). Returns its CRC-32, read back from the
    /// page cache, or nil when it cannot be moved (another file system): the caller copies it.
    private func adoptDownload(_ path: String, as key: String, file: CourseFile, store: ContentStore, shown: String) throws(SyncError) -> UInt32? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // A file with another name elsewhere could be changed through it once in the store.
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else { return nil }
        var crc = CRC32()
        var size: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return nil }
            if got == 0 { break }
            buffer.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            size += UInt64(got)
        }
        // The file the hash was taken over, unchanged since: nothing else writes the downloads.
        guard size == file.size else {
            throw .verification(archive: shown, reason: "holds \(size) bytes, the manifest says \(file.size); nothing is installed from it")
        }
        // As readable as a content the store writes itself (a folder source's copy is private),
        // which `open` creates with 0644 less the umask.
        guard fchmod(descriptor, CreatedFileMode.of(0o644)) == 0 else { return nil }
        let synced = options.durability == .perFile
        if synced {
            if fsync(descriptor) != 0 { throw .local(path: path, reason: "cannot be synced: \(String(cString: strerror(errno)))") }
        } else {
            DurableFile.startWriteback(descriptor)
        }
        try store.makePrefixFolder(for: key)
        guard rename(path, store.path(of: key)) == 0 else { return nil }
        if synced {
            do {
                try DurableFile.syncFolder(DurableFile.folder(of: store.path(of: key)))
            } catch {
                throw .local(path: store.path(of: key), reason: "cannot be synced to disk: \(error)")
            }
        }
        return crc.value
    }

    /// Feeds the downloaded bytes to `writer`, gunzipped when `encoding` says so: one gzip
    /// member and nothing after it.
    private func decode(_ bytes: Downloader.Fetched.Bytes, encoding: CourseFile.Encoding?, shown: String, into writer: inout ContentWriter) throws(SyncError) {
        let inflater: ZStream?
        do {
            inflater = encoding == .gzip ? try ZStream(.gunzip) : nil
        } catch {
            throw .local(path: shown, reason: "\(error)")
        }
        var ended = inflater == nil
        func feed(_ chunk: UnsafeRawBufferPointer) throws(SyncError) {
            guard let inflater else { return try writer.write(chunk) }
            guard !ended else { throw .verification(archive: shown, reason: "has bytes after its gzip member; nothing is installed from it") }
            do {
                let result = try inflater.inflate(chunk) { out in
                    do { try writer.write(out) } catch let error as SyncError { throw error }
                }
                ended = result.ended
                if result.trailing > 0 { throw SyncError.verification(archive: shown, reason: "has bytes after its gzip member; nothing is installed from it") }
            } catch let error as SyncError {
                throw error
            } catch {
                throw .verification(archive: shown, reason: "is not valid gzip: \(error); nothing is installed from it")
            }
        }
        // `withUnsafeBytes` rethrows untyped errors: the typed one is carried out by hand.
        var failure: SyncError?
        switch bytes {
        case .memory(let data):
            data.withUnsafeBytes { raw in
                do throws(SyncError) { try feed(raw) } catch { failure = error }
            }
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else { throw .local(path: path, reason: "cannot be read") }
            defer { try? handle.close() }
            while failure == nil, let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                chunk.withUnsafeBytes { raw in
                    do throws(SyncError) { try feed(raw) } catch { failure = error }
                }
            }
        }
        if let failure { throw failure }
        guard ended else { throw .verification(archive: shown, reason: "its gzip stream is cut short; nothing is installed from it") }
    }
}
