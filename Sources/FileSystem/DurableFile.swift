import CFileCalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What makes a rename survive a power cut, not only a killed process: the file's data reaches
/// the disk (`fsync`) before the rename that makes it visible, and the folder that holds the
/// new name is synced after it. Without the first, a manifest can name an archive whose blocks
/// were never written; without the second, the rename itself can be lost.
public enum DurableFile {
    /// Writes `bytes` to a new file at `temporary` and syncs it; the caller renames it.
    public static func writeSynced(_ bytes: [UInt8], to temporary: String) throws(FileError) {
        try writeFile(bytes, to: temporary, synced: true)
    }

    /// `synced` false: the caller makes it durable another way (`syncFileSystem`).
    static func writeFile(_ bytes: [UInt8], to temporary: String, synced: Bool) throws(FileError) {
        // O_EXCL: whatever is planted at the temporary name (a link, a hard link to another
        // file, a FIFO that would block the open) is never opened: it is removed and the file
        // made anew. A folder there stays, and the open fails with EEXIST.
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW
        var fd = open(temporary, flags, 0o644)
        var code = errno
        if fd < 0, code == EEXIST, unlink(temporary) == 0 {
            fd = open(temporary, flags, 0o644)
            code = errno
        }
        guard fd >= 0 else { throw FileError(path: temporary, operation: "create", errno: code) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                throw FileError(path: temporary, operation: "write", errno: code)
            }
            done += n
        }
        guard !synced || fsync(fd) == 0 else {
            let code = errno
            close(fd)
            throw FileError(path: temporary, operation: "fsync", errno: code)
        }
        guard close(fd) == 0 else { throw FileError(path: temporary, operation: "close", errno: errno) }
    }

    /// Waits until the data of the file at `path`, written earlier, is on the disk.
    public static func syncFile(_ path: String) throws(FileError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileError(path: path, operation: "fsync", errno: errno) }
    }

    /// Makes the names in `folder` (new, renamed or removed entries) durable.
    public static func syncFolder(_ folder: String) throws(FileError) {
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: folder, operation: "open", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileError(path: folder, operation: "fsync", errno: errno) }
    }

    /// Whether `syncFileSystem` works on this system (Linux's syncfs).
    public static var canSyncFileSystem: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// Waits until everything written to the file system holding `path` is on the disk: the
    /// data and names of every file written before the call. For a build that writes thousands
    /// of archives, one flush of the disk instead of one per archive; it is a superset of
    /// their fsyncs, so the rule "synced before anything durable names it" holds when it comes
    /// after the last archive and before the manifest.
    public static func syncFileSystem(containing path: String) throws(FileError) {
        let fd = open(path.isEmpty ? "." : path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        guard coursepack_sync_file_system(fd) == 0 else { throw FileError(path: path, operation: "syncfs", errno: errno) }
    }

    /// Starts writing `fd`'s data to the disk and returns at once, so that a `syncFileSystem`
    /// later, which makes it durable, finds less left to write. Best effort: nothing depends on
    /// it but the wait.
    public static func startWriteback(_ fd: Int32) {
        _ = coursepack_start_writeback(fd)
    }

    /// The folder part of `path` ("." for a bare name).
    public static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// Replaces `path` with `bytes` durably: a synced temporary file beside it, a rename, a
    /// synced folder. Readers see the old file or the new one, never a mix. `synced` false
    /// skips both syncs, for a caller that waits for the whole file system afterwards.
    public static func replace(_ path: String, with bytes: [UInt8], synced: Bool = true) throws(FileError) {
        var temporary = temporaryPath(beside: path, unique: false)
        do {
            try writeFile(bytes, to: temporary, synced: synced)
        } catch where error.errno == EEXIST {
            // A folder planted at the usual name: a name of this write's own instead.
            temporary = temporaryPath(beside: path, unique: true)
            do {
                try writeFile(bytes, to: temporary, synced: synced)
            } catch {
                unlink(temporary)
                throw error
            }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileError(path: path, operation: "rename", errno: code)
        }
        if synced { try syncFolder(folder(of: path)) }
    }

    /// A name beside `path` for a file being written (`.<name>.tmp-<pid>`, with `-<random>`
    /// when `unique`): hidden, never a name a manifest uses, and this process's own, so a build
    /// or sync that was killed can recognise and remove what it left. Writers that replace one
    /// file under a lock need no random part; it makes a name that `O_EXCL` can create.
    public static func temporaryPath(beside path: String, unique: Bool = true) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let name = "\(directory).\(base).tmp-\(getpid())"
        return unique ? name + "-\(UInt32.random(in: 0...UInt32.max))" : name
    }

    /// Whether `name` is one `temporaryPath` makes.
    public static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(".") && name.containsUTF8(".tmp-")
    }

    /// Exchanges two paths atomically where the system can (Linux's renameat2 RENAME_EXCHANGE):
    /// a reader sees one or the other, never neither. False where it cannot; the caller then
    /// takes a portable path.
    public static func exchange(_ first: String, _ second: String) -> Bool {
        coursepack_exchange_paths(first, second) == 0
    }
}
