#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's size, inode, modification time and change time (nanoseconds): what tells whether a
/// file may have changed without reading it. ctime is kept because an edit whose mtime was set
/// back still moves it.
public struct FileStamp: Sendable, Equatable {
    public var size: UInt64
    public var inode: UInt64
    public var modified: Int64
    public var changed: Int64

    public init(size: UInt64, inode: UInt64, modified: Int64, changed: Int64) {
        (self.size, self.inode, self.modified, self.changed) = (size, inode, modified, changed)
    }

    /// The stamp `stat` or `lstat` gave.
    public init(_ info: stat) {
        self.init(
            size: UInt64(info.st_size), inode: UInt64(info.st_ino),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
    }

    /// The stamp of what `path` names (links followed), or nil when it is not there.
    public static func of(_ path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStamp(info)
    }

    /// Now, on the clock file times are taken from, in nanoseconds.
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
