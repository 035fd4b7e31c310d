import Foundation

/// An exclusive lock on an output folder (`flock` on `.coursepack.lock`), so two builds into
/// one folder never interleave. Released when the process exits, however it exits.
final class OutputLock {
    private let fd: Int32

    init(folder: String, timeout: Double) throws(BuildError) {
        let path = folder + "/.coursepack.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .output(path: path, reason: String(cString: strerror(errno))) }
        let deadline = Date().addingTimeInterval(timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(fd)
                throw .output(path: path, reason: "cannot lock: \(String(cString: strerror(errno)))")
            }
            guard Date() < deadline else {
                close(fd)
                throw .busy(path: folder, waited: timeout)
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
