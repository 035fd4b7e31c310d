import CFileCalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Chunk size for every streaming loop: memory stays bounded whatever the file size.
public let fileChunkSize = 256 * 1024

/// A file opened for reading through a file descriptor, closed on deinit.
public final class InputFile {
    public let path: String
    public let fd: Int32

    /// Only a regular file opens: a FIFO, a device or a socket in a course export (or anywhere a
    /// file is read) is refused at once, never waited on. O_NONBLOCK keeps the open itself from
    /// blocking on a FIFO with no writer; it is cleared again before any read.
    public init(path: String) throws(FileError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = FileError(path: path, operation: "stat", errno: errno)
            close(fd)
            throw error
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw FileError(path: path, operation: "open", errno: EINVAL, reason: "not a regular file (a FIFO, device, socket or folder is never read)")
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            let error = FileError(path: path, operation: "open", errno: errno)
            close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { close(fd) }

    public var size: UInt64 {
        get throws(FileError) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
            return UInt64(info.st_size)
        }
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        while true {
            let n = Glibc_read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw FileError(path: path, operation: "read", errno: errno)
        }
    }

    public func read(at offset: UInt64, count: Int) throws(FileError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = result.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        if done < count { result.removeSubrange(done...) }
        return result
    }
}

extension InputFile {

    public func rewind() throws(FileError) {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw FileError(path: path, operation: "seek", errno: errno) }
    }
}
