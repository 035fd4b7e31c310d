import Foundation

/// SHA-256 of static files from the previous build, keyed by path, size and modification time,
/// so a rebuild does not re-read every media file. A file modified within a second of the
/// cache being written is hashed again: its mtime cannot tell an edit from the original.
struct HashCache: Codable, Sendable {
    struct Record: Codable, Sendable, Equatable {
        var size: UInt64
        var modified: Int64
        var sha256: String
    }

    static let fileName = ".coursepack-cache.json"

    var writtenAt: Int64 = 0
    var records: [String: Record] = [:]

    static func load(from folder: String) -> HashCache {
        guard let data = FileManager.default.contents(atPath: folder + "/" + fileName),
            let cache = try? JSONDecoder().decode(HashCache.self, from: data)
        else { return HashCache() }
        return cache
    }

    func hash(of key: String, size: UInt64, modified: Int64) -> String? {
        guard let record = records[key], record.size == size, record.modified == modified,
            modified < writtenAt - 1_000_000_000
        else { return nil }
        return record.sha256
    }

    /// Written like every other output: a temporary file, then a rename.
    func save(to folder: String) {
        var copy = self
        copy.writtenAt = Int64(Date().timeIntervalSince1970 * 1e9)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(copy) else { return }
        let temporary = folder + "/.coursepack-cache.json.tmp-\(getpid())"
        if (try? data.write(to: URL(fileURLWithPath: temporary))) != nil {
            rename(temporary, folder + "/" + Self.fileName)
        }
    }
}

/// A file's size, modification time and change time (nanoseconds), or nil when it is not there.
enum FileStamp {
    static func of(_ path: String) -> (size: UInt64, modified: Int64, changed: Int64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (
            UInt64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        )
    }
}
