import Crypto
import FileSystem
import Foundation
import ParallelMap
import Synchronization

/// A digest of the name and `stat` stamp of every entry under a path: type, size, inode,
/// mtime and ctime. Equal digests mean nothing there was created, removed, written or
/// replaced since; ctime catches an edit whose mtime was set back, as git's index does.
public struct TreeStamp: Sendable, Equatable {
    public let digest: String
    /// False when some entry changed so shortly before the walk began that a second change
    /// within the file system's timestamp resolution would leave its stamp as it is.
    public let settled: Bool
    /// The latest mtime or ctime of any file seen (Int64.min for none).
    public let newest: Int64
    /// Files whose stamp is too fresh to tell an edit in the same timestamp tick from the
    /// write it shows (changed within `settleMargin` plus the resolution of `since`): a record
    /// trusts them only with their content hash. Paths are relative to the root.
    public let fresh: [Entry]
    /// Every plain file's stamp (a regular file, not a link, with one name) by its path
    /// relative to the root, raw as `lstat` gave it; only when the walk was asked to collect them.
    public let plainFiles: PlainFileStamps

    /// A file's `stat` stamp as the walk saw it (a link's: its target's).
    public struct Entry: Sendable, Equatable {
        public let path: String
        public let stamp: FileStamp
    }

    /// Entries changed this close to the walk are not trusted to be final (FAT and older
    /// file systems keep times in whole or even two seconds).
    public static let settleMargin: Int64 = 2_000_000_000

    /// Walks `root` (a folder or a single file). `include` sees each entry's name, its depth
    /// (1 for entries of `root`) and whether it is a folder; an excluded folder is not entered. Symlinks are stamped
    /// both as links and by what they point to. Nil when `root` cannot be read.
    /// `since` is when the caller started to read what is under `root` (default: now); changes
    /// after it make the stamp unsettled, so a walk may run while the files are being read.
    /// `resolution`: the file system's timestamp granularity in nanoseconds; times are cut to
    /// it (FAT keeps two seconds; tests model such a file system with it). Nil too once
    /// `cancellation` is cancelled: the walk stops within one entry.
    public static func of(
        _ root: String, skipping skippedFolders: [(device: UInt64, inode: UInt64)] = [], since: Int64 = FileStamp.now(),
        workers: Int = 1, resolution: Int64 = 1, listsFresh: Bool = true, collectsPlainFiles: Bool = false,
        cancellation: Cancellation? = nil, include: (_ name: [UInt8], _ depth: Int, _ isFolder: Bool) -> Bool = { _, _, _ in true }
    ) -> TreeStamp? {
        var walk = Walk(startedAt: since, skipped: skippedFolders, workers: workers, resolution: max(1, resolution))
        walk.listsFresh = listsFresh
        walk.collectsPlainFiles = collectsPlainFiles
        walk.cancellation = cancellation
        var info = stat()
        guard lstat(root, &info) == 0 else { return nil }
        walk.add([], info, path: root)
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard walk.enter(root, relative: [], depth: 1, include: include) else { return nil }
        }
        if cancellation?.isCancelled == true { return nil }
        return TreeStamp(
            digest: SHA256Hex.hex(walk.hasher.finalize()), settled: walk.newest < walk.freshSince, newest: walk.newest,
            fresh: walk.fresh, plainFiles: walk.plainFiles)
    }

    /// The stamp of what `path` names (links followed), its times cut to `resolution` as a walk
    /// cuts them.
    public static func stamp(of path: String, resolution: Int64 = 1) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let walk = Walk(startedAt: 0, skipped: [], workers: 1, resolution: max(1, resolution))
        return FileStamp(size: UInt64(info.st_size), inode: UInt64(info.st_ino), modified: walk.time(info.st_mtim), changed: walk.time(info.st_ctim))
    }

    /// Device and inode of a folder, to leave it out of a walk (an output or state folder placed
    /// inside the course would otherwise change the course's stamp on every build).
    public static func identity(of path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    private struct Walk {
        let startedAt: Int64
        let skipped: [(device: UInt64, inode: UInt64)]
        let workers: Int
        let resolution: Int64
        var hasher = SHA256()
        var newest = Int64.min
        var fresh: [Entry] = []
        var listsFresh = true
        var collectsPlainFiles = false
        var plainFiles = PlainFileStamps.none
        var cancellation: Cancellation?

        init(startedAt: Int64, skipped: [(device: UInt64, inode: UInt64)], workers: Int, resolution: Int64) {
            (self.startedAt, self.skipped, self.workers, self.resolution) = (startedAt, skipped, workers, resolution)
        }

        /// A file stamped at or after this may have been written again within its tick.
        var freshSince: Int64 { startedAt - settleMargin - resolution }

        func time(_ spec: timespec) -> Int64 {
            let nanoseconds = FileStamp.nanoseconds(spec)
            return nanoseconds - ((nanoseconds % resolution) + resolution) % resolution
        }

        mutating func note(_ relative: [UInt8], _ info: stat, modified: Int64, changed: Int64) {
            guard listsFresh, max(modified, changed) >= freshSince else { return }
            let stamp = FileStamp(size: UInt64(info.st_size), inode: UInt64(info.st_ino), modified: modified, changed: changed)
            fresh.append(Entry(path: String(decoding: relative, as: UTF8.self), stamp: stamp))
        }

        mutating func add(_ relative: [UInt8], _ info: stat, path: String) {
            let modified = time(info.st_mtim)
            let changed = time(info.st_ctim)
            let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
            let isLink = (info.st_mode & S_IFMT) == S_IFLNK
            // A folder's times change whenever an entry is added or removed, which the entries
            // themselves show; leaving them out keeps a build's own lock file from mattering.
            if !isFolder { newest = max(newest, modified, changed) }
            if !isFolder && !isLink { note(relative, info, modified: modified, changed: changed) }
            if collectsPlainFiles, !relative.isEmpty, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 {
                plainFiles.append(relative, FileStamp(info))
            }
            var record = relative
            record.append(0)
            for value in [UInt64(info.st_mode), isFolder ? 0 : UInt64(info.st_size), UInt64(info.st_ino),
                          isFolder ? 0 : UInt64(bitPattern: modified), isFolder ? 0 : UInt64(bitPattern: changed)] {
                withUnsafeBytes(of: value.littleEndian) { record.append(contentsOf: $0) }
            }
            if (info.st_mode & S_IFMT) == S_IFLNK {
                var target = stat()
                if stat(path, &target) == 0 {
                    let modified = time(target.st_mtim)
                    let changed = time(target.st_ctim)
                    newest = max(newest, modified, changed)
                    if (target.st_mode & S_IFMT) == S_IFREG { note(relative, target, modified: modified, changed: changed) }
                    for value in [UInt64(target.st_mode), UInt64(target.st_size), UInt64(target.st_ino),
                                  UInt64(bitPattern: modified), UInt64(bitPattern: changed)] {
                        withUnsafeBytes(of: value.littleEndian) { record.append(contentsOf: $0) }
                    }
                }
                var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
                let count = readlink(path, &buffer, buffer.count)
                if count > 0 { record.append(contentsOf: buffer[0..<count]) }
            }
            hasher.update(data: record)
        }

        /// `lstat` of each name in the folder open as `descriptor`, split over `workers` threads
        /// for big folders (an output folder holds thousands of archives); nil where it failed.
        static func stamps(of names: [[UInt8]], in descriptor: Int32, workers: Int, cancellation: Cancellation?) -> [StatRecord?] {
            names.parallelMap(workers: workers) { name -> StatRecord? in
                if cancellation?.isCancelled == true { return nil }
                var info = stat()
                let status = name.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { fstatat(descriptor, $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) }
                }
                return status == 0 ? info : nil
            }
        }

        /// False when the folder cannot be listed.
        mutating func enter(
            _ folder: String, relative: [UInt8], depth: Int, include: ([UInt8], Int, Bool) -> Bool
        ) -> Bool {
            guard cancellation?.isCancelled != true, let stream = opendir(folder) else { return false }
            defer { closedir(stream) }
            let descriptor = dirfd(stream)
            // Names keep their NUL: it terminates them for fstatat and sorts "a" before "ab".
            var names: [[UInt8]] = []
            while let entry = readdir(stream) {
                let name = DirectoryEntry.name(of: entry)
                if !DirectoryEntry.isDotOrDotDot(name) { names.append(Array(name) + [0]) }
            }
            // readdir's order is the file system's; the digest must not depend on it.
            names.sort(by: ByteOrder.precedes)
            let infos = Self.stamps(of: names, in: descriptor, workers: names.count >= 512 ? workers : 1, cancellation: cancellation)
            for (terminated, info) in zip(names, infos) {
                guard let info, cancellation?.isCancelled != true else { return false }
                let name = Array(terminated.dropLast())
                let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
                if isFolder, skipped.contains(where: { UInt64(info.st_dev) == $0.device && UInt64(info.st_ino) == $0.inode }) { continue }
                guard include(name, depth, isFolder) else { continue }
                let child = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
                // Only folders and links are looked at by path; building one for every file costs.
                let isLink = (info.st_mode & S_IFMT) == S_IFLNK
                let path = isFolder || isLink ? folder + "/" + String(decoding: name, as: UTF8.self) : ""
                add(child, info, path: path)
                if isFolder, !enter(path, relative: child, depth: depth + 1, include: include) { return false }
            }
            return true
        }
    }
}

extension TreeStamp {
    /// Tells a walk on another thread that its stamp is no longer wanted: a rebuild whose
    /// course changed need not finish stamping the output (at 100,000 blocks, a walk of
    /// 92,000 archives on one core before the build could start).
    public final class Cancellation: Sendable {
        private let cancelled = Mutex(false)

        public init() {}

        public var isCancelled: Bool { cancelled.withLock { $0 } }

        public func cancel() { cancelled.withLock { $0 = true } }
    }
}

/// `stat` names both the call and its record; in type positions the record needs a name.
typealias StatRecord = stat
