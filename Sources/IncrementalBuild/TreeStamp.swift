import Crypto
import FileSystem
import Foundation
import ParallelMap

/// A digest of the name and `stat` stamp of every entry under a path: type, size, inode,
/// mtime and ctime. Equal digests mean nothing there was created, removed, written or
/// replaced since; ctime catches an edit whose mtime was set back, as git's index does.
public struct TreeStamp: Sendable, Equatable {
    public let digest: String
    /// False when some entry changed so shortly before the walk began that a second change
    /// within the file system's timestamp resolution would leave its stamp as it is.
    public let settled: Bool

    /// Entries changed this close to the walk are not trusted to be final (FAT and older
    /// file systems keep times in whole or even two seconds).
    public static let settleMargin: Int64 = 2_000_000_000

    /// Walks `root` (a folder or a single file). `include` sees each entry's name, its depth
    /// (1 for entries of `root`) and whether it is a folder; an excluded folder is not entered. Symlinks are stamped
    /// both as links and by what they point to. Nil when `root` cannot be read.
    /// `since` is when the caller started to read what is under `root` (default: now); changes
    /// after it make the stamp unsettled, so a walk may run while the files are being read.
    public static func of(
        _ root: String, skipping skippedFolders: [(device: UInt64, inode: UInt64)] = [], since: Int64 = FileStamp.now(),
        workers: Int = 1, include: (_ name: [UInt8], _ depth: Int, _ isFolder: Bool) -> Bool = { _, _, _ in true }
    ) -> TreeStamp? {
        var walk = Walk(startedAt: since, skipped: skippedFolders, workers: workers)
        var info = stat()
        guard lstat(root, &info) == 0 else { return nil }
        walk.add([], info, path: root)
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard walk.enter(root, relative: [], depth: 1, include: include) else { return nil }
        }
        return TreeStamp(digest: SHA256Hex.hex(walk.hasher.finalize()), settled: walk.newest < walk.startedAt - settleMargin)
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
        var hasher = SHA256()
        var newest = Int64.min

        mutating func add(_ relative: [UInt8], _ info: stat, path: String) {
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
            let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
            // A folder's times change whenever an entry is added or removed, which the entries
            // themselves show; leaving them out keeps a build's own lock file from mattering.
            if !isFolder { newest = max(newest, modified, changed) }
            var record = relative
            record.append(0)
            for value in [UInt64(info.st_mode), isFolder ? 0 : UInt64(info.st_size), UInt64(info.st_ino),
                          isFolder ? 0 : UInt64(bitPattern: modified), isFolder ? 0 : UInt64(bitPattern: changed)] {
                withUnsafeBytes(of: value.littleEndian) { record.append(contentsOf: $0) }
            }
            if (info.st_mode & S_IFMT) == S_IFLNK {
                var target = stat()
                if stat(path, &target) == 0 {
                    let modified = Int64(target.st_mtim.tv_sec) * 1_000_000_000 + Int64(target.st_mtim.tv_nsec)
                    let changed = Int64(target.st_ctim.tv_sec) * 1_000_000_000 + Int64(target.st_ctim.tv_nsec)
                    newest = max(newest, modified, changed)
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
        static func stamps(of names: [[UInt8]], in descriptor: Int32, workers: Int) -> [StatRecord?] {
            names.parallelMap(workers: workers) { name -> StatRecord? in
                var info = stat()
                let status = name.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { fstatat(descriptor, $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) }
                }
                return status == 0 ? info : nil
            }
        }

        static let dot = Array(".\0".utf8)
        static let dotDot = Array("..\0".utf8)

        /// False when the folder cannot be listed.
        mutating func enter(
            _ folder: String, relative: [UInt8], depth: Int, include: ([UInt8], Int, Bool) -> Bool
        ) -> Bool {
            guard let stream = opendir(folder) else { return false }
            defer { closedir(stream) }
            let descriptor = dirfd(stream)
            // Names keep their NUL: it terminates them for fstatat and sorts "a" before "ab".
            var names: [[UInt8]] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) + [0] }
                if name != Self.dot && name != Self.dotDot { names.append(name) }
            }
            // readdir's order is the file system's; the digest must not depend on it.
            names.sort { $0.lexicographicallyPrecedes($1) }
            let infos = Self.stamps(of: names, in: descriptor, workers: names.count >= 512 ? workers : 1)
            for (terminated, info) in zip(names, infos) {
                guard let info else { return false }
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

/// `stat` names both the call and its record; in type positions the record needs a name.
typealias StatRecord = stat
