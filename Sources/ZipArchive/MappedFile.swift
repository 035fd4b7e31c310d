#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem
import ZlibStream

/// Reads a file through a read-only mapping, one window at a time, so each byte is read once from
/// the page cache, never copied into a buffer, and memory stays bounded whatever the file's size.
public enum MappedFile {
    /// Mapped at once: large enough that mapping costs nothing per byte, small enough that a
    /// video of any size adds only this much to the resident set.
    static let window = 8 << 20
    /// Handed to the caller at once: small enough to stay in the CPU cache between the CRC, the
    /// caller's hash and the write that follow each other over it.
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
        /// Only a regular file can be mapped; anything else is read as a stream.
        let isRegular: Bool
    }

    func status() throws(FileError) -> Status {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        return Status(
            size: UInt64(info.st_size), changed: FileStamp.nanoseconds(info.st_ctim),
            isRegular: (info.st_mode & S_IFMT) == S_IFREG)
    }

    /// Maps the first `size` bytes window by window and passes them on in pieces. The mapping is
    /// private and read-only; a file shortened meanwhile would fault, so callers pass the size
    /// they have just read from the open descriptor.
    func sweep(size: UInt64, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var offset: UInt64 = 0
        while offset < size {
            let length = Int(min(UInt64(MappedFile.window), size - offset))
            guard let base = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(offset)), base != MAP_FAILED else {
                throw FileError(path: path, operation: "mmap", errno: errno)
            }
            defer { munmap(base, length) }
            var done = 0
            while done < length {
                let n = min(MappedFile.piece, length - done)
                try body(UnsafeRawBufferPointer(start: base + done, count: n))
                done += n
            }
            offset += UInt64(length)
        }
    }
}
