import Crypto
import FileSystem
import Foundation

/// A web root or a mounted share. Every file is written to a temporary name in its folder,
/// flushed to disk, and renamed into place, so a web server never serves half a file.
public struct FolderStore: ObjectStore {
    public let root: String
    public var location: String { root }

    public init(root: String) {
        self.root = root
    }

    public func head(_ key: String) async throws(StoreError) -> StoredObject? {
        guard let path = try existingFile(key) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        // A folder holds no metadata: the digest is the file's own.
        return StoredObject(size: UInt64(info.st_size), sha256: try Self.sha256(of: path))
    }

    public func get(_ key: String) async throws(StoreError) -> Data? {
        guard let path = try existingFile(key) else { return nil }
        let read: [UInt8]?
        do {
            read = try WholeFile.read(path, atMost: WholeFile.manifestLimit)
        } catch {
            throw .file(path: path, reason: error.reason ?? "\(error)")
        }
        guard let bytes = read else { throw .file(path: path, reason: "cannot be read") }
        return Data(bytes)
    }

    public func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
        var hasher = SHA256()
        try write(key, observer: { hasher.update(bufferPointer: $0) }) { out throws(FileError) in
            try file.stream { chunk throws(FileError) in try out.write(chunk) }
        } check: {
            // The bytes written, not the file's name, must be what the manifest describes:
            // checked before the file gets its name.
            let digest = SHA256Hex.hex(hasher.finalize())
            return digest == metadata.sha256 ? nil : "\(file.path) changed while it was published: its sha256 is \(digest), the manifest says \(metadata.sha256)"
        }
    }

    public func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
        try write(key, observer: nil) { out throws(FileError) in try out.write(Array(data)) } check: { nil }
    }

    public func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
        let file: OpenedFile
        do {
            file = try LocalFolder(root: root).open(source)
        } catch {
            throw .file(path: error.path, reason: error.reason)
        }
        try await put(key, file: file, metadata: metadata)
    }

    public func delete(_ key: String) async throws(StoreError) {
        guard let path = try existingFile(key) else { return }
        guard unlink(path) == 0 || errno == ENOENT else { throw .file(path: path, reason: "cannot be deleted: \(String(cString: strerror(errno)))") }
        // Durable before the next write: a stale index deleted here must stay deleted through
        // a crash once the parts it named (in another folder) go after it.
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        do throws(FileError) {
            try DurableFile.syncFolder(folder)
        } catch {
            throw .file(path: error.path, reason: "\(error.operation) failed: \(String(cString: strerror(error.errno)))")
        }
    }

    /// Durable before it is visible: the file is synced under a temporary name, renamed into
    /// place and its folder synced, so a crash never leaves an empty or partial file.
    /// `check` runs once every byte is written and synced: a reason it returns stops the write
    /// before the file gets its name.
    private func write(
        _ key: String, observer: ((UnsafeRawBufferPointer) -> Void)?, _ body: (OutputFile) throws(FileError) -> Void, check: () -> String?
    ) throws(StoreError) {
        let folder = try realFolder(of: key, creating: true) ?? root
        let path = folder + "/" + (key.split(separator: "/").last.map(String.init) ?? key)
        let temporary = DurableFile.temporaryPath(beside: path)
        do throws(FileError) {
            let out = try OutputFile(creating: temporary, observer: observer)
            do throws(FileError) {
                try body(out)
                try out.sync()
                try out.close()
            } catch {
                try? out.close()
                throw error
            }
        } catch {
            unlink(temporary)
            throw .file(path: error.path, reason: "\(error.operation) failed: \(String(cString: strerror(error.errno)))")
        }
        if let problem = check() {
            unlink(temporary)
            throw .file(path: path, reason: problem)
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw .file(path: path, reason: "rename failed: \(String(cString: strerror(failure)))")
        }
        do throws(FileError) {
            try DurableFile.syncFolder(folder)
        } catch {
            throw .file(path: error.path, reason: "\(error.operation) failed: \(String(cString: strerror(error.errno)))")
        }
    }

    /// The folder that holds `key`'s file, every folder from the root down a real one, never a
    /// link: someone who can write to a shared target could plant a link where a course's folder
    /// (or a type folder) will go, and carry the publish, and later its deletions, out of the
    /// target. Missing folders are created when `creating`, else the answer is nil.
    private func realFolder(of key: String, creating: Bool) throws(StoreError) -> String? {
        var folder = root
        // The root itself is the operator's (`--to`): made when missing, and it may be a link.
        if creating {
            do {
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            } catch {
                throw .file(path: root, reason: "cannot be created: \(error.localizedDescription)")
            }
        }
        for part in key.split(separator: "/").dropLast() {
            folder += "/" + part
            var info = stat()
            if lstat(folder, &info) != 0 {
                guard errno == ENOENT else { throw .file(path: folder, reason: "cannot be read: \(String(cString: strerror(errno)))") }
                guard creating else { return nil }
                guard mkdir(folder, 0o755) == 0 || errno == EEXIST, lstat(folder, &info) == 0 else {
                    throw .file(path: folder, reason: "cannot be created: \(String(cString: strerror(errno)))")
                }
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw .file(path: folder, reason: "is a symbolic link or not a folder: a publish never writes or deletes through one")
            }
        }
        return folder
    }

    /// `key`'s path when its folders are real ones and it is there; a link in its place is refused.
    private func existingFile(_ key: String) throws(StoreError) -> String? {
        guard let folder = try realFolder(of: key, creating: false) else { return nil }
        let path = folder + "/" + (key.split(separator: "/").last.map(String.init) ?? key)
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) != S_IFLNK else {
            throw .file(path: path, reason: "is a symbolic link: a publish never reads, writes or deletes through one")
        }
        return path
    }

    static func sha256(of path: String) throws(StoreError) -> String {
        do {
            return try SHA256Hex.ofFile(path)
        } catch {
            throw .file(path: path, reason: "cannot be read: \(String(cString: strerror(error.errno)))")
        }
    }
}
