import Foundation
import Manifest

/// SHA-256 of static files from the previous build, so a rebuild does not re-read every media
/// file. A record answers only for a file whose whole stamp is unchanged: size, inode, mtime
/// and ctime. That is as strict as the course stamp (`TreeStamp`): an edit whose mtime was put
/// back still moves the ctime, so the two change detectors never disagree and stale bytes are
/// never published. A file changed within a second of the cache being written is hashed again:
/// its times cannot tell an edit in that second from the original.
struct HashCache: Codable, Sendable {
    struct Record: Codable, Sendable, Equatable {
        var size: UInt64
        var inode: UInt64
        var modified: Int64
        var changed: Int64
        var sha256: String
    }

    static let fileName = "cache.json"
    /// Names a previous coursepack wrote into the output folder itself.
    static let legacyFileName = ".coursepack-cache.json"

    var writtenAt: Int64 = 0
    var records: [String: Record] = [:]

    static func load(from stateFolder: String) -> HashCache {
        guard let data = FileManager.default.contents(atPath: stateFolder + "/" + fileName),
            let cache = try? JSONDecoder().decode(HashCache.self, from: data)
        else { return HashCache() }
        return cache
    }

    func hash(of key: String, stamp: FileStamp.Stamp) -> String? {
        guard let record = records[key], record == Record(stamp, sha256: record.sha256),
            max(stamp.modified, stamp.changed) < writtenAt - 1_000_000_000
        else { return nil }
        return record.sha256
    }

    /// Written like the manifest: synced, renamed into place, folder synced.
    func save(to stateFolder: String) {
        var copy = self
        copy.writtenAt = Int64(Date().timeIntervalSince1970 * 1e9)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(copy) else { return }
        try? DurableFile.replace(stateFolder + "/" + Self.fileName, with: Array(data), temporary: stateFolder + "/" + Self.fileName + ".tmp-\(getpid())")
    }
}

extension HashCache.Record {
    init(_ stamp: FileStamp.Stamp, sha256: String) {
        self.init(size: stamp.size, inode: stamp.inode, modified: stamp.modified, changed: stamp.changed, sha256: sha256)
    }
}

/// A file's size, inode, modification time and change time (nanoseconds), or nil when it is not there.
enum FileStamp {
    typealias Stamp = (size: UInt64, inode: UInt64, modified: Int64, changed: Int64)

    static func of(_ path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (
            UInt64(info.st_size), UInt64(info.st_ino),
            Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        )
    }
}
