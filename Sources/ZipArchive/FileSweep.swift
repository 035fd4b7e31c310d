#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem
import ZlibStream

/// Reads a file in pieces through one buffer, so memory stays bounded whatever the file's size.
/// Read, not mapped: a file that another program shortens while it is read (an author's `cp`
/// over a video during a build, a truncation in a folder being verified) faulted a mapping
/// with SIGBUS, which ends the process; a read comes back short instead, and that is an error
/// naming the file. The copy into the buffer costs one pass at memory speed (several GB/s), a
/// small part of the CRC-32 and hashes that follow over the same bytes.
public enum FileSweep {
    /// Read and handed to the caller at once: small enough to stay in the CPU cache between the
    /// read, the CRC, the caller's hash and the write that follow each other over it.
    static let piece = 256 << 10

    /// Passes every byte of the file at `path`, in order, to `body`, and returns its size and
    /// CRC-32 computed in the same sweep.
    public static func sweep(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> FileChecksum {
        let input = try InputFile(path: path)
        let status = try input.status()
        var crc = CRC32()
        try input.sweep(size: status.size) { piece in
            crc.update(piece)
            try body(piece)
        }
        return FileChecksum(size: status.size, crc32: crc.value, changed: status.changed)
    }
}

extension InputFile {
    struct Status {
        let size: UInt64
        let changed: Int64
        /// Only a regular file has a size to sweep; anything else is read as a stream.
        let isRegular: Bool
    }

    func status() throws(FileError) -> Status {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        return Status(
            size: UInt64(info.st_size), changed: FileStamp.nanoseconds(info.st_ctim),
            isRegular: (info.st_mode & S_IFMT) == S_IFREG)
    }

    /// Passes the first `size` bytes on, in order, in pieces. Throws when the file ends before
    /// them (it was shortened since the caller read its size).
    func sweep(size: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileSweep.piece, alignment: 64)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0
        while offset < size {
            let wanted = Int(min(UInt64(FileSweep.piece), size - offset))
            let n = pread(fd, buffer.baseAddress, wanted, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, operation: "read", errno: errno)
            }
            guard n > 0 else {
                throw ZipError.malformed(path: path, reason: "ended after \(offset) of its \(size) bytes: it was shortened while it was read")
            }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += UInt64(n)
        }
    }
}
