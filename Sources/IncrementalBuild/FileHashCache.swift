import FileSystem
import Foundation

/// SHA-256 of static files from the previous build, so a rebuild does not re-read every media
/// file. A record answers only for a file whose whole stamp is unchanged: size, inode, mtime
/// and ctime. That is as strict as the course stamp (`TreeStamp`): an edit whose mtime was put
/// back still moves the ctime, so the two change detectors never disagree and stale bytes are
/// never published. A file changed within `TreeStamp.settleMargin` of `writtenAt` (when the
/// build that hashed it began reading) is hashed again: on a file system that keeps times in
/// whole seconds or two, its times cannot tell an edit made just after it was read from the
/// bytes that were read.
public struct FileHashCache: Codable, Sendable, Equatable {
    public struct Record: Codable, Sendable, Equatable {
        var size: UInt64
        var inode: UInt64
        var modified: Int64
        var changed: Int64
        var sha256: String
    }

    static let fileName = "cache.json"
    /// Names a previous coursepack wrote into the output folder itself.
    public static let legacyFileName = ".coursepack-cache.json"

    public var writtenAt: Int64 = 0
    public var records: [String: Record] = [:]

    public init(writtenAt: Int64 = 0, records: [String: Record] = [:]) {
        self.writtenAt = writtenAt
        self.records = records
    }

    public static func load(from stateFolder: String) -> FileHashCache {
        guard let data = WholeFile.readIfUsable(stateFolder + "/" + fileName, atMost: WholeFile.stateLimit),
            let cache = try? JSONDecoder().decode(FileHashCache.self, from: Data(data))
        else { return FileHashCache() }
        return cache
    }

    /// The recorded hash of `key`, if its file still has exactly the stamp it had then.
    public func hash(of key: String, stamp: FileStamp) -> String? {
        guard let record = records[key], Self.vouches(for: stamp, recorded: FileStamp(size: record.size, inode: record.inode, modified: record.modified, changed: record.changed), writtenAt: writtenAt)
        else { return nil }
        return record.sha256
    }

    /// Whether a cache dated `writtenAt` (when the build that recorded it began reading) may
    /// answer for a file whose stamp is now `stamp` by what it recorded under `recorded`: the
    /// whole stamp unchanged, and last changed `TreeStamp.settleMargin` before that date. The
    /// one rule of every cache that vouches for a file by its stamp.
    public static func vouches(for stamp: FileStamp, recorded: FileStamp, writtenAt: Int64) -> Bool {
        stamp == recorded && max(stamp.modified, stamp.changed) < writtenAt - TreeStamp.settleMargin
    }

    /// Renamed into place unsynced: a cache lost in a power cut, or an older one, only costs
    /// hashing again (an older one trusts fewer files, by its older `writtenAt`), and JSON cut
    /// short does not decode. `writtenAt`: in nanoseconds on the file-time clock, no later than
    /// the moment the hashed files were first read (a build passes the time it began).
    public func save(to stateFolder: String, writtenAt: Int64 = FileStamp.now()) {
        var copy = self
        copy.writtenAt = writtenAt
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(copy) else { return }
        try? DurableFile.replace(stateFolder + "/" + Self.fileName, with: Array(data), synced: false)
    }
}

extension FileHashCache.Record {
    public init(_ stamp: FileStamp, sha256: String) {
        self.init(size: stamp.size, inode: stamp.inode, modified: stamp.modified, changed: stamp.changed, sha256: sha256)
    }
}
