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

    public func put(_ key: String, file source: String, metadata: ObjectMetadata) async throws(StoreError) {
        try write(key) { out throws(FileError) in
            let input = try InputFile(path: source)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: fileChunkSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                let count = try input.read(into: buffer)
                if count == 0 { break }
                try out.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
    }

    public func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
        try write(key) { out throws(FileError) in try out.write(Array(data)) }
    }

    public func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
        try await put(key, file: root + "/" + source, metadata: metadata)
    }

    public func delete(_ key: String) async throws(StoreError) {
        let path = root + "/" + key
        guard unlink(path) == 0 || errno == ENOENT else { throw .file(path: path, reason: "cannot be deleted: \(String(cString: strerror(errno)))") }
    }

    /// Durable before it is visible: the file is synced under a temporary name, renamed into
    /// place and its folder synced, so a crash never leaves an empty or partial file.
    private func write(_ key: String, _ body: (OutputFile) throws(FileError) -> Void) throws(StoreError) {
        let path = root + "/" + key
        let folder = DurableFile.folder(of: path)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .file(path: folder, reason: "cannot be created: \(error.localizedDescription)")
        }
        let temporary = DurableFile.temporaryPath(beside: path)
        do throws(FileError) {
            let out = try OutputFile(creating: temporary)
            do throws(FileError) {
                try body(out)
                try out.sync()
                try out.close()
            } catch {
                try? out.close()
                throw error
            }
            guard rename(temporary, path) == 0 else { throw FileError(path: path, operation: "rename", errno: errno) }
            try DurableFile.syncFolder(folder)
        } catch {
            unlink(temporary)
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
