import Crypto
import FileSystem
import Foundation
import ParallelMap

/// A digest of everything a course folder holds besides its state, manifest and pages: each
/// type folder (`html/`, `problem/`, `runtime/`, …), each installed folder in it, and every
/// entry below those by name, kind, size, inode, modification and change time. A file added,
/// removed, renamed, replaced or written since (whatever its size: its change time moves, and
/// no tool can set that back) gives another digest, found without reading a byte of it.
///
/// Walked with one `fstatat` per entry relative to an open folder, the installed folders
/// spread over every core: at 100,000 blocks (670,000 entries) this is what a no-op sync costs,
/// and it is bound by the file system's calls, not by what coursepack does around them.
struct InstalledFoldersStamp: Sendable, Equatable {
    /// `<type>/<name>` of each installed folder, in order.
    var folders: [String]
    var digest: String

    /// Entries of a course folder that are not installed folders: written by the sync around
    /// them (the local manifest has its own stamp; pages are written after a sync settles).
    static let notInstalled: Set<String> = [".coursepack-sync", "manifest.json", "index.html", "_navigation"]

    /// Nil when an entry at the top of the course folder or of a type folder is not a folder
    /// (a stray file: not as a sync leaves it) or something cannot be read.
    static func of(courseRoot: String, workers: Int = ProcessInfo.processInfo.activeProcessorCount) -> InstalledFoldersStamp? {
        guard let top = Listing(courseRoot) else { return nil }
        defer { top.close() }
        var typeFolders: [Listing] = []
        defer { for folder in typeFolders { folder.close() } }
        var found: [(type: Int, name: [UInt8])] = []
        for type in top.names where !notInstalled.contains(String(decoding: type, as: UTF8.self)) {
            guard Self.status(of: type, in: top.descriptor).map({ $0.st_mode & S_IFMT }) == S_IFDIR, let listing = Listing(type, in: top.descriptor) else { return nil }
            typeFolders.append(listing)
            found += listing.names.map { (typeFolders.count - 1, $0) }
        }
        let installed = found
        let descriptors = typeFolders.map(\.descriptor)
        let typeNames = typeFolders.map(\.name)
        // Runs of folders: a digest for each run rather than each folder keeps hashing cheap.
        let run = 256
        let starts = Array(stride(from: 0, to: installed.count, by: run))
        let digests = starts.parallelMap(workers: workers) { start -> [UInt8]? in
            var hasher = SHA256()
            for (type, name) in installed[start..<min(start + run, installed.count)] {
                hasher.update(data: typeNames[type] + [UInt8(ascii: "/")] + name + [0])
                guard Self.status(of: name, in: descriptors[type]).map({ $0.st_mode & S_IFMT }) == S_IFDIR, let folder = Listing(name, in: descriptors[type]),
                    Self.walk(folder, into: &hasher)
                else { return nil }
            }
            return Array(hasher.finalize())
        }
        var whole = SHA256()
        for digest in digests {
            guard let digest else { return nil }
            whole.update(data: digest)
        }
        let folders = installed.map { String(decoding: typeNames[$0.type] + [UInt8(ascii: "/")] + $0.name, as: UTF8.self) }
        return InstalledFoldersStamp(folders: folders, digest: SHA256Hex.hex(whole.finalize()))
    }

    /// Hashes every entry of `folder` and below, closing it; false when one cannot be read.
    private static func walk(_ folder: Listing, into hasher: inout SHA256) -> Bool {
        defer { folder.close() }
        for name in folder.names {
            guard let info = status(of: name, in: folder.descriptor) else { return false }
            let kind = info.st_mode & S_IFMT
            var record = name
            record.append(0)
            // A folder's own times change with its entries, which are hashed themselves.
            let isFolder = kind == S_IFDIR
            for value in [
                UInt64(info.st_mode), isFolder ? 0 : UInt64(info.st_size), UInt64(info.st_ino),
                isFolder ? 0 : UInt64(info.st_mtim.tv_sec), isFolder ? 0 : UInt64(info.st_mtim.tv_nsec),
                isFolder ? 0 : UInt64(info.st_ctim.tv_sec), isFolder ? 0 : UInt64(info.st_ctim.tv_nsec),
            ] {
                withUnsafeBytes(of: value.littleEndian) { record.append(contentsOf: $0) }
            }
            hasher.update(data: record)
            if isFolder {
                guard let inner = Listing(name, in: folder.descriptor), walk(inner, into: &hasher) else { return false }
                // The end of a folder's entries, so that moving a file up or down a level shows.
                hasher.update(data: [0xFF])
            }
        }
        return true
    }

    /// `lstat` of `name` in the folder open as `descriptor`.
    private static func status(of name: [UInt8], in descriptor: Int32) -> stat? {
        var info = stat()
        let terminated = name + [0]
        let result = terminated.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { fstatat(descriptor, $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) }
        }
        return result == 0 ? info : nil
    }

    /// An open folder and its entries' names, sorted (readdir's order is the file system's, and
    /// may change when the folder is rewritten with the same entries). Open until `close()`,
    /// for the calls made relative to it.
    private struct Listing {
        let name: [UInt8]
        let stream: OpaquePointer
        let names: [[UInt8]]
        var descriptor: Int32 { dirfd(stream) }

        init?(_ path: String) {
            self.init(name: Array(path.utf8), descriptor: open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
        }

        init?(_ name: [UInt8], in parent: Int32) {
            let terminated = name + [0]
            let descriptor = terminated.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { openat(parent, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            self.init(name: name, descriptor: descriptor)
        }

        private init?(name: [UInt8], descriptor: Int32) {
            guard descriptor >= 0 else { return nil }
            guard let stream = fdopendir(descriptor) else {
                Glibc.close(descriptor)
                return nil
            }
            var names: [[UInt8]] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix(while: { $0 != 0 })) }
                if name != [UInt8(ascii: ".")], name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
            }
            names.sort { $0.lexicographicallyPrecedes($1) }
            (self.name, self.stream, self.names) = (name, stream, names)
        }

        func close() { closedir(stream) }
    }
}
