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
        let path = root + "/" + key
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        // A folder holds no metadata: the digest is the file's own.
        return StoredObject(size: UInt64(info.st_size), sha256: try Self.sha256(of: path))
    }

    public func get(_ key: String) async throws(StoreError) -> Data? {
        let path = root + "/" + key
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw .file(path: path, reason: "cannot be read") }
        return data
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
        let path = root + "/" + key
        guard unlink(path) == 0 || errno == ENOENT else { throw .file(path: path, reason: "cannot be deleted: \(String(cString: strerror(errno)))") }
    }

    /// Durable before it is visible: the file is synced under a temporary name, renamed into
    /// place and its folder synced, so a crash never leaves an empty or partial file.
    /// `check` runs once every byte is written and synced: a reason it returns stops the write
    /// before the file gets its name.
    private func write(
        _ key: String, observer: ((UnsafeRawBufferPointer) -> Void)?, _ body: (OutputFile) throws(FileError) -> Void, check: () -> String?
    ) throws(StoreError) {
        let path = root + "/" + key
        let folder = DurableFile.folder(of: path)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .file(path: folder, reason: "cannot be created: \(error.localizedDescription)")
        }
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

    static func sha256(of path: String) throws(StoreError) -> String {
        do {
            return try SHA256Hex.ofFile(path)
        } catch {
            throw .file(path: path, reason: "cannot be read: \(String(cString: strerror(error.errno)))")
        }
    }
}
