import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files written and named without a sync each, made durable together before anything durable
/// names them. A few files get an fsync each; many get one sync of the whole file system
/// (syncfs), one flush of the disk instead of thousands. A whole-system
/// sync also waits for what other programs wrote, so a rebuild that wrote two archives on a
/// busy CI runner does not pay for their gigabytes.
public final class PendingSyncs: Sendable {
    /// From this many files on, one sync of the file system is cheaper than one per file.
    public static let fileSystemSyncThreshold = 64

    private let paths = Mutex<[String]>([])

    public init() {}

    public func add(_ path: String) {
        paths.withLock { $0.append(path) }
    }

    public var count: Int { paths.withLock { $0.count } }

    /// Makes the data of every file added so far durable (`folder` holds them all, at any
    /// depth); afterwards none is pending. Returns whether their names are durable too (the
    /// whole file system was synced); if not, the caller syncs the folders that hold them.
    @discardableResult
    public func flush(within folder: String) throws(FileError) -> Bool {
        let pending = paths.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
        if pending.count >= Self.fileSystemSyncThreshold && DurableFile.canSyncFileSystem {
            try DurableFile.syncFileSystem(containing: folder)
            return true
        }
        for path in pending {
            try DurableFile.syncFile(path)
        }
        return false
    }
}
