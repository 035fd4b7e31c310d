import Crypto
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
        try write(key) { temporary throws(StoreError) in
            guard let input = fopen(source, "rb") else { throw .file(path: source, reason: "cannot be read: \(String(cString: strerror(errno)))") }
            defer { fclose(input) }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = fread(&buffer, 1, buffer.count, input)
                if count == 0 { break }
                guard fwrite(buffer, 1, count, temporary) == count else { throw .file(path: root + "/" + key, reason: "cannot be written: \(String(cString: strerror(errno)))") }
            }
            guard ferror(input) == 0 else { throw .file(path: source, reason: "read failed") }
        }
    }

    public func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
        try write(key) { temporary throws(StoreError) in
            let written = data.withUnsafeBytes { fwrite($0.baseAddress, 1, data.count, temporary) }
            guard written == data.count else { throw .file(path: root + "/" + key, reason: "cannot be written: \(String(cString: strerror(errno)))") }
        }
    }

    public func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
        try await put(key, file: root + "/" + source, metadata: metadata)
    }

    public func delete(_ key: String) async throws(StoreError) {
        let path = root + "/" + key
        guard unlink(path) == 0 || errno == ENOENT else { throw .file(path: path, reason: "cannot be deleted: \(String(cString: strerror(errno)))") }
    }

    private func write(_ key: String, _ body: (UnsafeMutablePointer<FILE>) throws(StoreError) -> Void) throws(StoreError) {
        let path = root + "/" + key
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .file(path: folder, reason: "cannot be created: \(error.localizedDescription)")
        }
        let temporary = folder + "/.\((path as NSString).lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard let handle = fopen(temporary, "wb") else { throw .file(path: temporary, reason: "cannot be created: \(String(cString: strerror(errno)))") }
        do {
            try body(handle)
        } catch {
            fclose(handle)
            unlink(temporary)
            throw error
        }
        // Durable before it is visible: a crash after the rename never leaves an empty file.
        guard fflush(handle) == 0, fsync(fileno(handle)) == 0 else {
            let reason = String(cString: strerror(errno))
            fclose(handle)
            unlink(temporary)
            throw .file(path: path, reason: "cannot be flushed: \(reason)")
        }
        fclose(handle)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .file(path: path, reason: "cannot be renamed into place: \(reason)")
        }
        if let directory = opendir(folder) {
            fsync(dirfd(directory))
            closedir(directory)
        }
    }

    static func sha256(of path: String) throws(StoreError) -> String {
        guard let input = fopen(path, "rb") else { throw .file(path: path, reason: "cannot be read: \(String(cString: strerror(errno)))") }
        defer { fclose(input) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = fread(&buffer, 1, buffer.count, input)
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        guard ferror(input) == 0 else { throw .file(path: path, reason: "read failed") }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
