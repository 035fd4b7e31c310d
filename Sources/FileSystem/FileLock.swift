#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock`, held until the value is released and released when the process exits,
/// however it exits. It locks either a folder itself (so no lock file is published into it) or
/// a lock file, which is never followed if it is a link: a planted link would otherwise create
/// its target wherever it points.
public final class FileLock {
    public enum Target: Sendable {
        case folder(String)
        case lockFile(String)
    }

    public enum Waiting: Sendable {
        /// Fail at once when another process holds the lock.
        case none
        /// Wait as long as it takes.
        case forever
        /// Retry every 0.1 s until this many seconds have passed.
        case seconds(Double)
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case cannotOpen(path: String, errno: Int32)
        case cannotLock(path: String, errno: Int32)
        /// Another process held the lock for as long as the caller would wait.
        case busy(path: String)

        public var description: String {
            switch self {
            case .cannotOpen(let path, let code): return "\(path): cannot open it to lock it: \(String(cString: strerror(code)))"
            case .cannotLock(let path, let code): return "\(path): cannot lock: \(String(cString: strerror(code)))"
            case .busy(let path): return "\(path): locked by another process"
            }
        }
    }

    private let fd: Int32

    public init(_ target: Target, waiting: Waiting) throws(Failure) {
        let path: String
        let fd: Int32
        switch target {
        case .folder(let folder):
            path = folder
            fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        case .lockFile(let file):
            path = file
            fd = open(file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        let deadline: Int64? = if case .seconds(let seconds) = waiting { FileStamp.now() + Int64(seconds * 1e9) } else { nil }
        let blocking: Bool = if case .forever = waiting { true } else { false }
        while flock(fd, LOCK_EX | (blocking ? 0 : LOCK_NB)) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK, let deadline, FileStamp.now() < deadline else {
                close(fd)
                throw code == EWOULDBLOCK ? .busy(path: path) : .cannotLock(path: path, errno: code)
            }
            usleep(100_000)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
