import Foundation

/// An exclusive lock on an output folder (`flock` on the folder itself), so two builds into
/// one folder never interleave, whatever state folder each uses, and no lock file is
/// published. Released when the process exits, however it exits.
final class OutputLock {
    private let fd: Int32

    init(folder: String, timeout: Double) throws(BuildError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .output(path: folder, reason: "cannot open it to lock it: \(String(cString: strerror(errno)))") }
        let deadline = Date().addingTimeInterval(timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(fd)
                throw .output(path: folder, reason: "cannot lock: \(String(cString: strerror(errno)))")
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
