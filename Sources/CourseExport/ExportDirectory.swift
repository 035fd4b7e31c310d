#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem
import Synchronization

/// Read access to the files of one export folder that never leaves it: symlinks that point
/// outside, hard-linked files, FIFOs, devices and oversized files are refused with a reason.
public struct ExportDirectory: Sendable {
    public static let maximumDocumentSize = 64 * 1024 * 1024

    /// Canonical path of the folder holding `course.xml`.
    public let root: String
    private let folders = FolderCache()
    /// The plain files' stamps a walk of the course took before anything was read (`stamped`).
    private var walked: PlainFileStamps.Stamps?

    public init(root: String) throws(CourseError) {
        guard let resolved = realpath(root, nil) else {
            throw .unreadable(path: root, reason: String(cString: strerror(errno)))
        }
        defer { free(resolved) }
        self.root = String(cString: resolved)
    }

    public func path(_ relative: String) -> String { root + "/" + relative }

    /// This export, answering `plainFileStamp` from `stamps` (a walk of this folder or of one
    /// holding it, taken before anything was read) where they name the file; the disk is asked
    /// only about the others. Without stamps for this folder, the export as it is.
    public func stamped(by stamps: PlainFileStamps) -> ExportDirectory {
        var copy = self
        copy.walked = stamps.under(root)
        return copy
    }

    /// Where `relative` really lives, if it is a regular file inside the export.
    public func regularFile(_ relative: String) throws(CourseError) -> String {
        // Fast path: a plain file (not a link) in a folder already known to resolve inside the
        // export. The slash is found by its byte, as the kernel finds it (a search by
        // `Character` cost a tenth of reading 100,000 course files).
        if let slash = relative.utf8.lastIndex(of: UInt8(ascii: "/")) {
            let folder = String(relative[..<slash])
            if let real = try resolvedFolder(folder) {
                let candidate = real + "/" + relative[relative.index(after: slash)...]
                var info = stat()
                if lstat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 { return candidate }
            }
        }
        return try resolve(relative)
    }

    /// The stamp of `relative` when it is a plain file inside the export: a regular file, not a
    /// link, with one name, in a folder that resolves inside the export (what `read` reads
    /// without resolving it again). Nil for anything else, which only `read` may judge.
    public func plainFileStamp(_ relative: String) -> FileStamp? {
        guard let slash = relative.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        // The walk saw a plain file there, in folders it entered (never a link): what the
        // checks below would find, as of that walk.
        if let walked, let stamp = walked.stamp(of: relative) { return stamp }
        guard let real = try? resolvedFolder(String(relative[..<slash])) else { return nil }
        var info = stat()
        guard lstat(real + "/" + relative[relative.index(after: slash)...], &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1
        else { return nil }
        return FileStamp(info)
    }

    /// The canonical path of an export folder, remembered; nil when it is not a folder inside the export.
    private func resolvedFolder(_ folder: String) throws(CourseError) -> String? {
        if let known = folders.withLock({ $0[folder] }) { return known }
        guard let resolved = realpath(path(folder), nil) else { return nil }
        defer { free(resolved) }
        let real = String(cString: resolved)
        guard real.hasPrefix(root + "/") || real == root else {
            throw .unsafeArchive(path: folder, reason: "a symlink that points outside the course export")
        }
        folders.withLock { $0[folder] = real }
        return real
    }

    private func resolve(_ relative: String) throws(CourseError) -> String {
        let full = path(relative)
        guard let resolved = realpath(full, nil) else {
            throw .unreadable(path: relative, reason: errno == ENOENT ? "no such file" : String(cString: strerror(errno)))
        }
        defer { free(resolved) }
        let target = String(cString: resolved)
        guard target.hasPrefix(root + "/") else {
            throw .unsafeArchive(path: relative, reason: "a symlink that points outside the course export")
        }
        var info = stat()
        guard stat(target, &info) == 0 else { throw .unreadable(path: relative, reason: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .unreadable(path: relative, reason: "not a regular file") }
        // Another name of the same file may lie anywhere on the file system (a hard link to a
        // file outside the course), and nothing tells where: refused as tarballs refuse them.
        guard info.st_nlink == 1 else {
            throw .unsafeArchive(path: relative, reason: "a hard link (the file has \(info.st_nlink) names, and another may lie outside the course export); copy the file instead")
        }
        return target
    }

    public func exists(_ relative: String) -> Bool {
        var info = stat()
        return lstat(path(relative), &info) == 0
    }

    /// Reads a whole document (XML, HTML, JSON), refusing anything larger than a document can be.
    public func read(_ relative: String) throws(CourseError) -> [UInt8] {
        let target = try regularFile(relative)
        let fd = open(target, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(path: relative, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: relative, reason: String(cString: strerror(errno))) }
        guard info.st_size <= Self.maximumDocumentSize else {
            throw .invalid(path: relative, reason: "\(info.st_size) bytes is too large for a course document (limit \(Self.maximumDocumentSize))")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .unreadable(path: relative, reason: n == 0 ? "file shrank while reading" : String(cString: strerror(errno))) }
            done += n
        }
        return bytes
    }

    /// Regular files under `relative`, as export-relative paths, sorted; symlinks are not followed.
    public func files(under relative: String) -> [String] {
        var result: [String] = []
        var pending = [relative]
        while let folder = pending.popLast() {
            guard let dir = opendir(path(folder)) else { continue }
            defer { closedir(dir) }
            while let entry = readdir(dir) {
                let bytes = DirectoryEntry.name(of: entry)
                if DirectoryEntry.isDotOrDotDot(bytes) { continue }
                let name = String(decoding: bytes, as: UTF8.self)
                let child = folder + "/" + name
                // The entry's type as the folder gives it, without a stat of each file (a
                // course has a hundred thousand); a file system that gives none is asked.
                var kind = DirectoryEntry.type(of: entry)
                if kind == UInt8(DT_UNKNOWN) {
                    var info = stat()
                    guard lstat(path(child), &info) == 0 else { continue }
                    switch info.st_mode & S_IFMT {
                    case S_IFDIR: kind = UInt8(DT_DIR)
                    case S_IFREG: kind = UInt8(DT_REG)
                    default: continue
                    }
                }
                switch kind {
                case UInt8(DT_DIR): pending.append(child)
                case UInt8(DT_REG): result.append(child)
                default: continue
                }
            }
        }
        return result.sorted()
    }
}

/// Folders already resolved, shared by the copies of an `ExportDirectory` and their threads.
private final class FolderCache: Sendable {
    private let map = Mutex<[String: String]>([:])
    func withLock<R>(_ body: (inout [String: String]) -> R) -> R { map.withLock { body(&$0) } }
}
