import FileSystem
import Foundation

/// How a sync makes what it installs survive a power cut. Either way, nothing is swapped in
/// before its files are on the disk, and the local manifest names nothing before the swap is.
public enum SyncDurability: Sendable, Equatable {
    /// Every archive is unpacked unsynced; then one `syncfs` waits for all of it (and for every
    /// staging folder and inventory) before the swaps, and one more makes the swaps durable.
    case fileSystem
    /// An `fsync` per unpacked file and per folder, and one per swapped-in block's parent:
    /// where there is no `syncfs` (Darwin).
    case perFile

    /// `fileSystem` where the platform has it. `COURSEPACK_SYNC_DURABILITY=per-file` chooses
    /// the fallback anyway, so that tests prove it on Linux too.
    public static var platformDefault: SyncDurability {
        if let chosen = getenv("COURSEPACK_SYNC_DURABILITY"), String(cString: chosen) == "per-file" { return .perFile }
        return DurableFile.canSyncFileSystem ? .fileSystem : .perFile
    }
}
