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

    public init(path: String) throws(FileError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
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
