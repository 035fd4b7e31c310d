import Crypto
import FileSystem
import Foundation
import Manifest
import ZlibStream

/// One copy of each course file content on the device, shared by every block, runtime and
/// search folder of every course in a target: `<folder>/<first 2 hex digits>/<sha256>`. Block
/// folders hold hard links to these files (to an overflow copy `<sha256>.<n>` past the cap on
/// links to one file, see `OverflowCopies`; copies where the file system refuses links), so a
/// page still opens from its own folder and each byte takes the disk once.
///
/// A content stays while a local manifest of the target lists it (a block, runtime or search
/// folder installed from it); `collect` deletes the others once the manifests are written. A
/// folder's link keeps its bytes even after the store's copy goes, so the order never leaves a
/// folder without its files.
public struct ContentStore: Sendable {
    public let folder: String

    public init(folder: String) { self.folder = folder }

    /// `TARGET/.coursepack-sync/store`: beside the target's other state, never a course folder.
    public static func folder(ofTarget target: String) -> String { SyncClient.stateFolder(of: target) + "/store" }

    public func path(of key: String) -> String { folder + "/" + key.prefix(2) + "/" + key }

    /// How many prefix folders the store would have once it holds `keys` too: those it has, and
    /// those the keys would add.
    public func prefixFolders<Keys: Sequence<String>>(adding keys: Keys) -> Int {
        var prefixes = Set(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).map { Substring($0) })
        for key in keys { prefixes.insert(key.prefix(2)) }
        return prefixes.count
    }

    /// Whether the store holds `key` as a regular file of `size` bytes.
    public func holds(_ key: String, size: UInt64) -> Bool {
        var info = stat()
        return lstat(path(of: key), &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && UInt64(info.st_size) == size
    }

    /// Every content in the store, with its size.
    public func contents() -> [String: UInt64] {
        var found: [String: UInt64] = [:]
        for prefix in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + prefix)) ?? [] where CourseFile.isContentKey(name) {
                var info = stat()
                if lstat(folder + "/" + prefix + "/" + name, &info) == 0 { found[name] = UInt64(info.st_size) }
            }
        }
        return found
    }

    /// The content an overflow copy (`<key>.<n>`, see `OverflowCopies`) or a content is of;
    /// nil for any other name.
    public static func contentKey(ofStoreName name: String) -> String? {
        if CourseFile.isContentKey(name) { return name }
        guard let dot = name.lastIndex(of: "."), let number = UInt32(name[name.index(after: dot)...]), number > 0,
            CourseFile.isContentKey(String(name[..<dot]))
        else { return nil }
        return String(name[..<dot])
    }

    /// A new overflow copy of `key` (`<key>.<n>`, the first number free) made from the content
    /// in the store, durable when `synced`; nil when it cannot be made.
    func makeOverflowCopy(of key: String, synced: Bool) -> String? {
        let source = path(of: key)
        let temporary = DurableFile.temporaryPath(beside: source)
        defer { unlink(temporary) }
        guard (try? FileManager.default.copyItem(atPath: source, toPath: temporary)) != nil else { return nil }
        // Not durable as asked: the caller copies into the folder instead, and syncs that.
        if synced, (try? DurableFile.syncFile(temporary)) == nil { return nil }
        for number in 1...10_000 {
            let copy = source + ".\(number)"
            if Glibc.link(temporary, copy) == 0 { return copy }
            guard errno == EEXIST else { return nil }
        }
        return nil
    }

    /// Deletes every content not in `keeping`, the overflow copies no folder links any more,
    /// and what a killed write left (temporary files), and the prefix folders left empty;
    /// returns the contents deleted.
    @discardableResult
    public func collect(keeping: Set<String>) -> Int {
        var removed = 0
        for prefix in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let sub = folder + "/" + prefix
            let names = (try? FileManager.default.contentsOfDirectory(atPath: sub)) ?? []
            for name in names where !keeping.contains(name) {
                if name != Self.contentKey(ofStoreName: name), let key = Self.contentKey(ofStoreName: name), keeping.contains(key) {
                    var info = stat()
                    // Still linked from a folder: it is that folder's file.
                    if lstat(sub + "/" + name, &info) == 0, info.st_nlink > 1 { continue }
                }
                if unlink(sub + "/" + name) == 0, CourseFile.isContentKey(name) { removed += 1 }
            }
            rmdir(sub)
        }
        return removed
    }

    /// The content keys a local manifest lists: its installed blocks', runtime's and search's.
    public static func listed(in manifest: CourseManifest) -> Set<String> {
        var keys = Set<String>()
        for block in manifest.blocks where block.isOffline { keys.formUnion(block.files?.values ?? [:].values) }
        for shared in manifest.sharedArchives { keys.formUnion(shared.files?.values ?? [:].values) }
        return keys
    }

    /// Puts `source` (a file of the verified content) into the store as `key`: a hard link when
    /// `link` is true, otherwise a rename. Durable when `synced`.
    func adopt(_ source: String, as key: String, link linking: Bool, synced: Bool) throws(SyncError) {
        let destination = path(of: key)
        try makePrefixFolder(for: key)
        if linking {
            if link(source, destination) != 0 && errno != EEXIST {
                throw .local(path: destination, reason: "cannot link \(source) into the store: \(String(cString: strerror(errno)))")
            }
        } else if rename(source, destination) != 0 {
            throw .local(path: destination, reason: "cannot move the download into the store: \(String(cString: strerror(errno)))")
        }
        guard synced else { return }
        do {
            try DurableFile.syncFile(destination)
            try DurableFile.syncFolder(DurableFile.folder(of: destination))
        } catch {
            throw .local(path: destination, reason: "cannot be synced to disk: \(error)")
        }
    }

    func makePrefixFolder(for key: String) throws(SyncError) {
        let prefix = folder + "/" + key.prefix(2)
        if mkdir(folder, 0o755) != 0 && errno != EEXIST { throw .local(path: folder, reason: "cannot create the store folder") }
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw .local(path: prefix, reason: "cannot create the store folder") }
    }

    /// A temporary name inside the store (same file system, so a rename finishes a write).
    func temporaryPath(for key: String) throws(SyncError) -> String {
        try makePrefixFolder(for: key)
        return DurableFile.temporaryPath(beside: path(of: key))
    }

    /// CRC-32 of a stored content, for the inventories of the folders linked to it, when its
    /// bytes still hash to its key. A folder's file is the store's (a hard link): a file edited
    /// in place in a block folder changed the store's copy too, which then is deleted here and
    /// downloaded again rather than linked into another folder.
    func verifiedCRC32(of key: String) -> UInt32? {
        guard let handle = FileHandle(forReadingAtPath: path(of: key)) else { return nil }
        defer { try? handle.close() }
        var crc = CRC32()
        var hasher = SHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { crc.update(UnsafeRawBufferPointer($0)) }
            hasher.update(data: chunk)
        }
        guard SHA256Hex.hex(hasher.finalize()) == key else {
            unlink(path(of: key))
            return nil
        }
        return crc.value
    }
}
