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
            modified: Self.nanoseconds(info.st_mtim), changed: Self.nanoseconds(info.st_ctim))
    }

    /// Times beyond this many nanoseconds from 1970 (about 292 years either way) are held at it.
    /// Room is left below `Int64`'s own limits for the arithmetic done on times (cutting them to
    /// a file system's resolution, margins of seconds).
    public static let farthestTime = Int64.max - (1 << 40)

    /// A file time in nanoseconds since 1970. Anyone can give a file a time past 2262 or before
    /// 1677 (`touch -d`, or the times an archive or a copy carries over), and multiplying its
    /// seconds out overflowed: a build of such a course, or a sync of such a target, crashed.
    /// It saturates at `farthestTime` instead; two such times of one file look alike, but its
    /// ctime, which the kernel sets on every change, still tells them apart.
    public static func nanoseconds(_ time: timespec) -> Int64 {
        let seconds = Int64(time.tv_sec)
        let (scaled, overflowed) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowedAgain) = scaled.addingReportingOverflow(Int64(time.tv_nsec))
        if overflowed || overflowedAgain { return seconds < 0 ? -farthestTime : farthestTime }
        return min(max(total, -farthestTime), farthestTime)
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
        return nanoseconds(time)
    }
}
