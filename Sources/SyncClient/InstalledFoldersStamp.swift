import Crypto
import FileSystem
import Foundation
import Manifest
import ParallelMap

/// What a no-op sync looks at to find a course folder as a settled sync left it, without
/// listing its folders or reading any file: the `stat` stamp of a few hundred thousand paths
/// at most, recorded when the sync settled.
///
/// - every installed folder (type folders, block folders and the folders inside them), by its
///   inode and modification and change times: a folder's times move whenever an entry is
///   added to it, removed from it or renamed in it;
/// - every store content a file of the course is a hard link to (`ContentStore`), by its
///   size, inode, times and link count: a write to any of its links moves its times, and a
///   link deleted or replaced changes its count;
/// - every other file (a copy, where the file system refused a link), by its own stamp.
///
/// A stray file or folder, a file deleted, replaced or written since (whatever its size)
/// gives another digest. At 100,000 blocks this replaces 670,000 `stat` calls and 170,000
/// folder listings by about a third of the calls and no listing.
struct InstalledFoldersStamp: Sendable, Equatable {
    /// Paths relative to the course folder: every installed folder, then every file that is
    /// not a link to the store.
    var folders: [String]
    var copies: [String]
    /// Store contents the course's files are links to, by their name in the store (a key, or an
    /// overflow copy's `<key>.<n>`).
    var contents: [String]

    /// Entries of a course folder that are not installed folders: written by the sync around
    /// them (the local manifest has its own stamp; pages are written after a sync settles).
    static let notInstalled: Set<String> = [".coursepack-sync", "manifest.json", "index.html", "_navigation"]

    /// The installed folders, `<type>/<name>` (two levels down).
    var installed: [String] { folders.filter { $0.utf8.count(where: { $0 == UInt8(ascii: "/") }) == 1 } }

    /// Walks the course folder, once, when a sync settles. Nil when an entry at the top of the
    /// course folder or of a type folder is not a folder, an installed entry is neither a
    /// folder nor a regular file, a name holds a tab or a line break (it could not be
    /// recorded), or something cannot be read.
    static func survey(courseRoot: String, store: String) -> InstalledFoldersStamp? {
        let linked = storeInodes(store)
        guard let top = Listing(path: courseRoot) else { return nil }
        defer { top.close() }
        var survey = InstalledFoldersStamp(folders: [], copies: [], contents: [])
        var contents = Set<String>()
        for type in top.names where !notInstalled.contains(String(decoding: type, as: UTF8.self)) {
            guard let folder = Listing(type, in: top.descriptor) else { return nil }
            defer { folder.close() }
            survey.folders.append(String(decoding: type, as: UTF8.self))
            for name in folder.names {
                guard let block = Listing(name, in: folder.descriptor) else { return nil }
                guard survey.walk(block, relative: type + [UInt8(ascii: "/")] + name, linked: linked, contents: &contents) else { return nil }
            }
        }
        guard !(survey.folders + survey.copies).contains(where: { $0.contains("\t") || $0.contains("\n") || $0.isEmpty }) else { return nil }
        survey.contents = contents.sorted()
        return survey
    }

    /// Adds `folder` (closing it) and everything under it.
    private mutating func walk(_ folder: Listing, relative: [UInt8], linked: [Inode: String], contents: inout Set<String>) -> Bool {
        defer { folder.close() }
        folders.append(String(decoding: relative, as: UTF8.self))
        for name in folder.names {
            guard let info = Stamp.status(of: name, in: folder.descriptor) else { return false }
            let path = relative + [UInt8(ascii: "/")] + name
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                guard let inner = Listing(name, in: folder.descriptor), walk(inner, relative: path, linked: linked, contents: &contents) else { return false }
            case S_IFREG:
                if let key = linked[Inode(info)] { contents.insert(key) } else { copies.append(String(decoding: path, as: UTF8.self)) }
            default:
                // A link (to a folder: what is behind it would go unstamped), a device, a FIFO:
                // never installed by a sync.
                return false
            }
        }
        return true
    }

    /// Store contents by device and inode.
    private static func storeInodes(_ store: String) -> [Inode: String] {
        var found: [Inode: String] = [:]
        guard let root = Listing(path: store) else { return found }
        defer { root.close() }
        for prefix in root.names {
            guard let folder = Listing(prefix, in: root.descriptor) else { continue }
            defer { folder.close() }
            for name in folder.names {
                let key = String(decoding: name, as: UTF8.self)
                guard ContentStore.contentKey(ofStoreName: key) != nil, let info = Stamp.status(of: name, in: folder.descriptor), (info.st_mode & S_IFMT) == S_IFREG
                else { continue }
                found[Inode(info)] = key
            }
        }
        return found
    }

    struct Inode: Hashable {
        let device: UInt64
        let inode: UInt64
        init(_ info: stat) { (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino)) }
    }

    /// The digest of every recorded path's stamp, on every core; nil when one is missing or
    /// the course folder holds a top-level entry the record does not name.
    func digest(courseRoot: String, store: String, workers: Int = ProcessInfo.processInfo.activeProcessorCount) -> String? {
        guard let top = Listing(path: courseRoot) else { return nil }
        defer { top.close() }
        let types = top.names.map { String(decoding: $0, as: UTF8.self) }.filter { !Self.notInstalled.contains($0) }
        guard types == folders.filter({ !$0.utf8.contains(UInt8(ascii: "/")) }) else { return nil }
        let storeRoot = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if storeRoot >= 0 { close(storeRoot) } }
        let root = top.descriptor
        let paths: [(Stamp.Kind, String)] = folders.map { (.folder, $0) } + copies.map { (.file, $0) }
            + contents.map { (.content, String($0.prefix(2)) + "/" + $0) }
        let run = 1024
        let digests = Array(stride(from: 0, to: paths.count, by: run)).parallelMap(workers: workers) { start -> [UInt8]? in
            var hasher = SHA256()
            for (kind, path) in paths[start..<min(start + run, paths.count)] {
                guard let stamp = Stamp(kind, path, in: kind == .content ? storeRoot : root) else { return nil }
                hasher.update(data: stamp.bytes)
            }
            return Array(hasher.finalize())
        }
        var whole = SHA256()
        for digest in digests {
            guard let digest else { return nil }
            whole.update(data: digest)
        }
        return SHA256Hex.hex(whole.finalize())
    }

    /// The record's lines: `d` folders, `c` copies, `s` store contents, one path or key each.
    func encoded() -> String {
        var text = ""
        for folder in folders { text += "d\t" + folder + "\n" }
        for copy in copies { text += "c\t" + copy + "\n" }
        for key in contents { text += "s\t" + key + "\n" }
        return text
    }

    /// Nil when a line is not one `encoded()` writes.
    static func decode<Lines: Sequence<ArraySlice<UInt8>>>(_ lines: Lines) -> InstalledFoldersStamp? {
        var stamp = InstalledFoldersStamp(folders: [], copies: [], contents: [])
        for line in lines {
            guard line.count > 2, line[line.startIndex + 1] == UInt8(ascii: "\t") else { return nil }
            let value = String(decoding: line.dropFirst(2), as: UTF8.self)
            switch line.first {
            // Only stat is called on them, but a path out of the course folder is no record of it.
            case UInt8(ascii: "d") where isInside(value): stamp.folders.append(value)
            case UInt8(ascii: "c") where isInside(value): stamp.copies.append(value)
            case UInt8(ascii: "s") where ContentStore.contentKey(ofStoreName: value) != nil: stamp.contents.append(value)
            default: return nil
            }
        }
        return stamp
    }

    /// No empty, `.` or `..` component (so not absolute either).
    private static func isInside(_ path: String) -> Bool {
        // Bytes of the current component, and how many of them are dots.
        var component = 0
        var dots = 0
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                if component == 0 || (component > 0 && dots == component && dots <= 2) { return false }
                (component, dots) = (0, 0)
            } else {
                component += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return !(component == 0 || (dots == component && dots <= 2))
    }

    /// One path's `stat` stamp, as hashed.
    private struct Stamp {
        enum Kind { case folder, file, content }
        let bytes: [UInt8]

        init?(_ kind: Kind, _ path: String, in descriptor: Int32) {
            var info = stat()
            guard descriptor >= 0, fstatat(descriptor, path, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
            // A folder's size says nothing; a content's link count falls when a link goes.
            let values: [UInt64] = [
                UInt64(info.st_mode), UInt64(info.st_ino), kind == .folder ? 0 : UInt64(info.st_size),
                kind == .content ? UInt64(info.st_nlink) : 0,
                // Times before 1970 are negative: their bits, not a conversion that traps.
                UInt64(bitPattern: Int64(info.st_mtim.tv_sec)), UInt64(bitPattern: Int64(info.st_mtim.tv_nsec)),
                UInt64(bitPattern: Int64(info.st_ctim.tv_sec)), UInt64(bitPattern: Int64(info.st_ctim.tv_nsec)),
            ]
            var bytes: [UInt8] = []
            bytes.reserveCapacity(values.count * 8)
            for value in values { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
            self.bytes = bytes
        }

        /// `lstat` of `name` in the folder open as `descriptor`.
        static func status(of name: [UInt8], in descriptor: Int32) -> stat? {
            var info = stat()
            let terminated = name + [0]
            let result = terminated.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { fstatat(descriptor, $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) }
            }
            return result == 0 ? info : nil
        }
    }

    /// An open folder and its entries' names, sorted (readdir's order is the file system's, and
    /// may change when the folder is rewritten with the same entries). Open until `close()`,
    /// for the calls made relative to it.
    private struct Listing {
        let stream: OpaquePointer
        let names: [[UInt8]]
        var descriptor: Int32 { dirfd(stream) }

        init?(path: String) {
            self.init(descriptor: open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        }

        /// Nil for anything but a folder (a link to one included).
        init?(_ name: [UInt8], in parent: Int32) {
            let terminated = name + [0]
            let descriptor = terminated.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { openat(parent, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            self.init(descriptor: descriptor)
        }

        private init?(descriptor: Int32) {
            guard descriptor >= 0 else { return nil }
            guard let stream = fdopendir(descriptor) else {
                Glibc.close(descriptor)
                return nil
            }
            var names: [[UInt8]] = []
            // readdir ends a listing with NULL both at its end and on a read error: only errno
            // tells them apart, and a folder read in part is no listing of it.
            errno = 0
            while let entry = readdir(stream) {
                let name = DirectoryEntry.name(of: entry)
                if !DirectoryEntry.isDotOrDotDot(name) { names.append(Array(name)) }
            }
            guard errno == 0 else {
                closedir(stream)
                return nil
            }
            names.sort(by: ByteOrder.precedes)
            (self.stream, self.names) = (stream, names)
        }

        func close() { closedir(stream) }
    }
}
