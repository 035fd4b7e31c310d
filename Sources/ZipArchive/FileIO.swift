import CFileCalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Chunk size for every streaming loop: memory stays bounded whatever the file size.
let ioChunkSize = 256 * 1024

/// A file opened for reading through a file descriptor, closed on deinit.
final class InputFile {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ZipError.io(path: path, operation: "open", errno: errno) }
        self.fd = fd
    }

    deinit { close(fd) }

    var size: UInt64 {
        get throws {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw ZipError.io(path: path, operation: "stat", errno: errno) }
            return UInt64(info.st_size)
        }
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = Glibc_read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw ZipError.io(path: path, operation: "read", errno: errno)
        }
    }

    func read(at offset: UInt64, count: Int) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = result.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw ZipError.io(path: path, operation: "read", errno: errno)
            }
            if n == 0 { throw ZipError.malformed(path: path, reason: "unexpected end of file") }
            done += n
        }
        return result
    }
}

/// A buffered, seekable output file; `patch` rewrites bytes already written (headers whose
/// sizes and CRC are only known after the data has streamed through).
///
/// An `observer` sees every byte in file order as it leaves the buffer, so a caller can hash
/// the file while it is written. A patch or truncation that reaches bytes already passed on
/// makes `observedFinalBytes` false: the caller must then read the file back.
final class OutputFile {
    let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var offset: UInt64 = 0
    /// File offset of `buffer[0]`: everything before it is on disk (and observed).
    private var flushed: UInt64 = 0
    private var closed = false
    private let observer: ((UnsafeRawBufferPointer) -> Void)?
    private(set) var observedFinalBytes = true

    init(creating path: String, observer: ((UnsafeRawBufferPointer) -> Void)? = nil) throws {
        self.path = path
        self.observer = observer
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ZipError.io(path: path, operation: "create", errno: errno) }
        self.fd = fd
        buffer.reserveCapacity(ioChunkSize)
    }

    /// An unnamed file in `folder` (O_TMPFILE) that `link(as:)` names once it is complete; nil
    /// where the file system or platform cannot make one. Errors are reported against `path`.
    init?(unnamedIn folder: String, reportingAs path: String, observer: ((UnsafeRawBufferPointer) -> Void)?) {
        let fd = coursepack_open_unnamed(folder, 0o644)
        guard fd >= 0 else { return nil }
        self.path = path
        self.observer = observer
        self.fd = fd
        buffer.reserveCapacity(ioChunkSize)
    }

    deinit { if !closed { _ = Glibc_close(fd) } }

    enum LinkResult {
        case linked
        /// The file system cannot name unnamed files (no /proc, say): write it another way.
        case unsupported
    }

    /// Names the unnamed file `destination`, atomically: readers see the old file or the
    /// complete new one. An existing file is replaced through a temporary name and a rename.
    func link(as destination: String, temporaryName: () -> String) throws -> LinkResult {
        try sync()
        if coursepack_link_unnamed(fd, destination) == 0 { return .linked }
        guard errno == EEXIST else { return .unsupported }
        let temporary = temporaryName()
        guard coursepack_link_unnamed(fd, temporary) == 0 else { return .unsupported }
        guard rename(temporary, destination) == 0 else {
            let code = errno
            unlink(temporary)
            throw ZipError.io(path: destination, operation: "rename", errno: code)
        }
        return .linked
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > ioChunkSize { try flush() }
        if bytes.count >= ioChunkSize {
            try writeAll(bytes)
            flushed += UInt64(bytes.count)
        } else {
            buffer.append(contentsOf: bytes)
        }
        offset += UInt64(bytes.count)
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in try write(raw) }
    }

    func patch(at position: UInt64, _ bytes: [UInt8]) throws {
        if position >= flushed {
            // Still in the buffer (a small entry): change it there, before anyone sees it.
            let start = Int(position - flushed)
            buffer.replaceSubrange(start..<start + bytes.count, with: bytes)
            return
        }
        try flush()
        observedFinalBytes = false
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(position)) }
        guard n == bytes.count else { throw ZipError.io(path: path, operation: "write", errno: errno) }
    }

    /// Drops everything written after `position`, so an entry can be written again another way.
    func truncate(to position: UInt64) throws {
        if position >= flushed {
            buffer.removeSubrange(Int(position - flushed)...)
            offset = position
            return
        }
        buffer.removeAll(keepingCapacity: true)
        observedFinalBytes = false
        guard ftruncate(fd, off_t(position)) == 0, lseek(fd, off_t(position), SEEK_SET) >= 0 else {
            throw ZipError.io(path: path, operation: "truncate", errno: errno)
        }
        offset = position
        flushed = position
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { raw in try writeAll(raw) }
        flushed += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes out the buffer and waits until the file's data is on the disk: a name given to
    /// it afterwards never points at blocks lost in a power cut.
    func sync() throws {
        try flush()
        guard fsync(fd) == 0 else { throw ZipError.io(path: path, operation: "fsync", errno: errno) }
    }

    /// Safe to call twice: the descriptor is closed once (a second close could hit a file
    /// another thread has opened since under the same number).
    func close() throws {
        guard !closed else { return }
        try flush()
        closed = true
        guard Glibc_close(fd) == 0 else { throw ZipError.io(path: path, operation: "close", errno: errno) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        observer?(bytes)
        var done = 0
        while done < bytes.count {
            let n = Glibc_write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw ZipError.io(path: path, operation: "write", errno: errno)
            }
            done += n
        }
    }
}

// The class methods shadow the C functions; these names reach the C ones.
@inline(__always) func Glibc_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
@inline(__always) func Glibc_write(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }
@inline(__always) func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }

/// Little-endian field encoding for ZIP headers.
struct ByteWriter {
    var bytes: [UInt8] = []
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
    mutating func u64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8((v >> (8 * UInt64(i))) & 0xFF)) } }
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
}

/// Reads little-endian fields, failing instead of trapping on short input.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int
    init(_ bytes: [UInt8], at position: Int = 0) { self.bytes = bytes; self.position = position }
    var remaining: Int { bytes.count - position }
    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }
    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << (8 * UInt32(i)) }
        position += 4
        return v
    }
    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }
    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, remaining >= n else { return nil }
        defer { position += n }
        return bytes[position..<position + n]
    }
}

extension InputFile {
    func rewind() throws {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw ZipError.io(path: path, operation: "seek", errno: errno) }
    }
}
