import Crypto
import Diagnostics
import FileSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of the built folder that cannot be published as it is: a symbolic link, a FIFO, a
/// device or a folder where a regular file belongs, a missing file, or one that cannot be read.
public struct LocalFileRefusal: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String { "\(path): \(reason)" }
}

extension LocalFileRefusal: Diagnosable {
    /// A file of the built folder that is a link, or differs from its manifest.
    public var diagnosticID: DiagnosticID { .localPublishIncomplete }
}

/// The folder a publish uploads from, read so that only its own regular files go up: every
/// component below `root` is opened relative to its parent with O_NOFOLLOW, so a symbolic link
/// anywhere (archive, type folder, `runtime/`, the manifest), one swapped in after planning
/// included, is refused instead of followed. `root` itself is the operator's own path and may
/// be a link. A hard link cannot be told from the file itself, so one to a file outside the
/// folder is published as the file it is.
public struct LocalFolder: Sendable {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    /// Opens `relative` (`html/x.zip`, `manifest.json`) for reading.
    public func open(_ relative: String) throws(LocalFileRefusal) -> OpenedFile {
        let parts = relative.split(separator: "/").map(String.init)
        guard let name = parts.last else { throw LocalFileRefusal(path: root, reason: "no file named") }
        var folder = openFolder(root)
        guard folder >= 0 else { throw refusal(root, errno) }
        var walked = root
        for part in parts.dropLast() {
            walked += "/" + part
            try expect(part, in: folder, at: walked, kind: S_IFDIR, closing: folder)
            let next = openat(folder, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = errno
            close(folder)
            guard next >= 0 else { throw refusal(walked, failure) }
            folder = next
        }
        let path = walked + "/" + name
        defer { close(folder) }
        try expect(name, in: folder, at: path, kind: S_IFREG, closing: nil)
        // O_NONBLOCK: a FIFO swapped in after the check above must not hang the open.
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw refusal(path, errno) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw LocalFileRefusal(path: path, reason: "\(Self.kind(info.st_mode)), not a regular file: publish uploads only regular files inside the built folder")
        }
        return OpenedFile(path: path, fd: fd, size: UInt64(info.st_size))
    }

    /// Checks what `name` is before opening it, so a device is never opened at all.
    private func expect(_ name: String, in folder: Int32, at path: String, kind: mode_t, closing: Int32?) throws(LocalFileRefusal) {
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            let failure = errno
            if let closing { close(closing) }
            throw refusal(path, failure)
        }
        guard (info.st_mode & S_IFMT) == kind else {
            if let closing { close(closing) }
            let wanted = kind == S_IFDIR ? "a folder" : "a regular file"
            throw LocalFileRefusal(path: path, reason: "\(Self.kind(info.st_mode)), not \(wanted): publish uploads only regular files inside the built folder, and follows no link")
        }
    }

    private func refusal(_ path: String, _ code: Int32) -> LocalFileRefusal {
        switch code {
        case ENOENT: return LocalFileRefusal(path: path, reason: "missing; the manifest names it (run coursepack verify)")
        case ELOOP, ENOTDIR: return LocalFileRefusal(path: path, reason: "is a symbolic link or not a folder: publish follows no link inside the built folder")
        default: return LocalFileRefusal(path: path, reason: "cannot be opened: \(String(cString: strerror(code)))")
        }
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFLNK: return "is a symbolic link"
        case S_IFIFO: return "is a FIFO"
        case S_IFCHR, S_IFBLK: return "is a device"
        case S_IFSOCK: return "is a socket"
        case S_IFDIR: return "is a folder"
        case S_IFREG: return "is a regular file"
        default: return "is a special file"
        }
    }
}

/// The root is the operator's own path: it is followed like any path given on the command line.
private func openFolder(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
}

/// A regular file opened by `LocalFolder`: what is read is this file, whatever its name points
/// to by then.
public final class OpenedFile: Sendable {
    public let path: String
    public let fd: Int32
    /// The size when it was opened.
    public let size: UInt64

    init(path: String, fd: Int32, size: UInt64) {
        self.path = path
        self.fd = fd
        self.size = size
    }

    deinit { close(fd) }

    /// Reads up to `buffer.count` bytes at `offset`; 0 at the end of the file.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        while true {
            let count = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw FileError(path: path, operation: "read", errno: errno)
        }
    }

    /// Streams the whole file through `body` from its start, in bounded chunks; returns the byte count.
    @discardableResult
    public func stream(_ body: (UnsafeRawBufferPointer) throws(FileError) -> Void) throws(FileError) -> UInt64 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: fileChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0
        while true {
            let count = try read(at: offset, into: buffer)
            if count == 0 { return offset }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += UInt64(count)
        }
    }

    public func sha256() throws(FileError) -> (sha256: String, size: UInt64) {
        var hasher = SHA256()
        let size = try stream { chunk in hasher.update(bufferPointer: chunk) }
        return (SHA256Hex.hex(hasher.finalize()), size)
    }

    public func readAll() throws(FileError) -> [UInt8] {
        var bytes: [UInt8] = []
        try stream { chunk in bytes.append(contentsOf: chunk) }
        return bytes
    }
}
