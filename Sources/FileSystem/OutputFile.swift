import CFileCalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffered, seekable output file; `patch` rewrites bytes already written (headers whose
/// sizes and CRC are only known after the data has streamed through).
///
/// An `observer` sees every byte in file order as it leaves the buffer, so a caller can hash
/// the file while it is written. A patch or truncation that reaches bytes already passed on
/// makes `observedFinalBytes` false: the caller must then read the file back.
public final class OutputFile {
    public let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var offset: UInt64 = 0
    /// File offset of `buffer[0]`: everything before it is on disk (and observed).
    private var flushed: UInt64 = 0
    private var closed = false
    private let observer: ((UnsafeRawBufferPointer) -> Void)?
    public private(set) var observedFinalBytes = true
    /// Whether `append(from:at:count:)` may ask the kernel to copy (false: always read and
    /// write, the path of systems and file systems without copy_file_range).
    public var copiesInKernel = true
    /// How many appended bytes the kernel copied, without passing through this process.
    public private(set) var kernelCopiedBytes: UInt64 = 0

    public init(creating path: String, observer: ((UnsafeRawBufferPointer) -> Void)? = nil) throws(FileError) {
        self.path = path
        self.observer = observer
        // Readable too: bytes the kernel copied in are read back from it for the observer.
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(path: path, operation: "create", errno: errno) }
        self.fd = fd
        buffer.reserveCapacity(fileChunkSize)
    }

    /// An unnamed file in `folder` (O_TMPFILE) that `link(as:)` names once it is complete; nil
    /// where the file system or platform cannot make one. Errors are reported against `path`.
    public init?(unnamedIn folder: String, reportingAs path: String, observer: ((UnsafeRawBufferPointer) -> Void)?) {
        let fd = coursepack_open_unnamed(folder, 0o644)
        guard fd >= 0 else { return nil }
        self.path = path
        self.observer = observer
        self.fd = fd
        buffer.reserveCapacity(fileChunkSize)
    }

    deinit { if !closed { _ = Glibc_close(fd) } }

    public enum LinkResult {
        case linked
        /// The file system cannot name unnamed files (no /proc, say): write it another way.
        case unsupported
    }

    /// Names the unnamed file `destination`, atomically: readers see the old file or the
    /// complete new one. An existing file is replaced through a temporary name and a rename.
    /// Without `syncingFirst` the data may still be in memory when the name appears: only for
    /// callers that sync the whole file system before anything durable refers to the name.
    public func link(as destination: String, syncingFirst: Bool = true, temporaryName: () -> String) throws(FileError) -> LinkResult {
        if syncingFirst { try sync() } else { try flush() }
        if coursepack_link_unnamed(fd, destination) == 0 { return .linked }
        guard errno == EEXIST else { return .unsupported }
        let temporary = temporaryName()
        guard coursepack_link_unnamed(fd, temporary) == 0 else { return .unsupported }
        guard rename(temporary, destination) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileError(path: destination, operation: "rename", errno: code)
        }
        return .linked
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        if buffer.count + bytes.count > fileChunkSize { try flush() }
        if bytes.count >= fileChunkSize {
            try writeAll(bytes)
            flushed += UInt64(bytes.count)
        } else {
            buffer.append(contentsOf: bytes)
        }
        offset += UInt64(bytes.count)
    }

    public func write(_ bytes: [UInt8]) throws(FileError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(FileError) in try write(raw) } }.get()
    }

    /// Appends `count` bytes of `input` from `position`, copied by the kernel where it can
    /// (copy_file_range: a reflink on file systems that share blocks, else a copy between
    /// cached pages), read and written where it cannot (another file system, no such call).
    /// Returns how many bytes were appended: fewer than `count` only when `input` ends first.
    /// Smaller copies are read and written like any other bytes (one `pread` into the buffer):
    /// the kernel's copy of a few kilobytes, with the flush before it and the mapping to observe
    /// it after, cost more than the bytes, and on two cores the unmapping of every page range
    /// (a TLB shootdown across threads) kept a build of 3,000 pages that each copy a shared
    /// stylesheet and script from scaling.
    public static let smallestKernelCopy: UInt64 = UInt64(fileChunkSize)

    @discardableResult
    public func append(from input: InputFile, at position: UInt64, count: UInt64) throws(FileError) -> UInt64 {
        guard count >= Self.smallestKernelCopy else {
            return try appendByReading(from: input, at: position, count: count)
        }
        try flush()
        let start = self.offset
        var done: UInt64 = 0
        while copiesInKernel && done < count {
            let n = coursepack_copy_range(input.fd, Int64(position + done), fd, count - done)
            if n > 0 {
                done += UInt64(n)
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                // 0: the end of `input`, or a file system that copies nothing this way (procfs);
                // an error: one that cannot (EXDEV, EOPNOTSUPP, EINVAL...). Reading tells which.
                break
            }
        }
        offset += done
        flushed += done
        kernelCopiedBytes += done
        if done > 0 { try observeWritten(from: start, count: done) }
        return try done + appendByReading(from: input, at: position + done, count: count - done)
    }

    private func appendByReading(from input: InputFile, at position: UInt64, count: UInt64) throws(FileError) -> UInt64 {
        var done: UInt64 = 0
        while done < count {
            let piece = try input.read(at: position + done, count: Int(min(UInt64(fileChunkSize), count - done)))
            if piece.isEmpty { break }
            try write(piece)
            done += UInt64(piece.count)
        }
        return done
    }

    /// Passes bytes the kernel wrote to the observer, read back from the file's cached pages
    /// (mapped, so not copied): what it sees is what the file holds.
    private func observeWritten(from start: UInt64, count: UInt64) throws(FileError) {
        guard let observer else { return }
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        var at = start
        while at < start + count {
            let length = min(UInt64(64 << 20), start + count - at)
            let base = at - at % page
            let span = Int(at - base + length)
            guard let mapping = mmap(nil, span, PROT_READ, MAP_SHARED, fd, off_t(base)), mapping != MAP_FAILED else {
                // Not readable (a descriptor opened write-only): the caller reads the file back.
                observedFinalBytes = false
                return
            }
            observer(UnsafeRawBufferPointer(start: mapping + Int(at - base), count: Int(length)))
            munmap(mapping, span)
            at += length
        }
    }

    public func patch(at position: UInt64, _ bytes: [UInt8]) throws(FileError) {
        if position >= flushed {
            // Still in the buffer (a small entry): change it there, before anyone sees it.
            let start = Int(position - flushed)
            buffer.replaceSubrange(start..<start + bytes.count, with: bytes)
            return
        }
        try flush()
        observedFinalBytes = false
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(position)) }
        guard n == bytes.count else { throw FileError(path: path, operation: "write", errno: errno) }
    }

    /// Drops everything written after `position`, so an entry can be written again another way.
    public func truncate(to position: UInt64) throws(FileError) {
        if position >= flushed {
            buffer.removeSubrange(Int(position - flushed)...)
            offset = position
            return
        }
        buffer.removeAll(keepingCapacity: true)
        observedFinalBytes = false
        guard ftruncate(fd, off_t(position)) == 0, lseek(fd, off_t(position), SEEK_SET) >= 0 else {
            throw FileError(path: path, operation: "truncate", errno: errno)
        }
        offset = position
        flushed = position
    }

    public func flush() throws(FileError) {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { raw in Result { () throws(FileError) in try writeAll(raw) } }.get()
        flushed += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes out the buffer and waits until the file's data is on the disk: a name given to
    /// it afterwards never points at blocks lost in a power cut.
    public func sync() throws(FileError) {
        try flush()
        guard fsync(fd) == 0 else { throw FileError(path: path, operation: "fsync", errno: errno) }
    }

    /// Writes out the buffer and starts the disk writing the file's data without waiting for it
    /// (`DurableFile.startWriteback`): a file whose sync is pending (`PendingSyncs`) is then
    /// written while the build goes on, and the one `syncfs` before the manifest waits for less.
    /// Makes nothing durable by itself.
    public func startWriteback() throws(FileError) {
        try flush()
        DurableFile.startWriteback(fd)
    }

    /// Safe to call twice: the descriptor is closed once (a second close could hit a file
    /// another thread has opened since under the same number).
    public func close() throws(FileError) {
        guard !closed else { return }
        try flush()
        closed = true
        guard Glibc_close(fd) == 0 else { throw FileError(path: path, operation: "close", errno: errno) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        observer?(bytes)
        var done = 0
        while done < bytes.count {
            let n = Glibc_write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, operation: "write", errno: errno)
            }
            done += n
        }
    }
}

// The class methods shadow the C functions; these names reach the C ones.
@inline(__always) func Glibc_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
@inline(__always) func Glibc_write(_ fd: Int32, _ buf: UnsafeRawPointer?, _ n: Int) -> Int { write(fd, buf, n) }
@inline(__always) func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }
