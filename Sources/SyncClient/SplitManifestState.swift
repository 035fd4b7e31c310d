import FileSystem
import Foundation
import Manifest

/// What a target keeps of a split manifest once a sync has used it: the parts the index names
/// (`.coursepack-sync/parts/<sha256>.json`) and the index itself, written last, so that after a
/// power cut the kept index names only parts that are on the disk.
enum SplitManifestState {
    /// Keeps `indexBytes` and the parts it names (moved from `partsFrom` when the manifest was
    /// fetched into another folder), then removes the parts it no longer names and the cache
    /// of `manifest.json` (the source is read in the split form now).
    /// `perFile`: each part is synced by itself (where the file system cannot be synced as a
    /// whole), as the sync's durability says.
    static func remember(_ indexBytes: [UInt8], index: ManifestIndex, partsFrom: String, stateFolder: String, perFile: Bool) {
        let parts = SyncClient.partsFolder(stateFolder)
        try? FileManager.default.createDirectory(atPath: parts, withIntermediateDirectories: true)
        let named = Set(index.parts.map { $0.sha256 + ".json" })
        if partsFrom != parts {
            for name in named where access(parts + "/" + name, F_OK) != 0 { rename(partsFrom + "/" + name, parts + "/" + name) }
        }
        // Parts are written unsynced as they arrive; one sync of the file system makes them
        // durable before the index that names them.
        if perFile {
            for name in named { try? DurableFile.syncFile(parts + "/" + name) }
        } else {
            try? DurableFile.syncFileSystem(containing: parts)
        }
        try? DurableFile.syncFolder(parts)
        try? DurableFile.replace(SyncClient.indexPath(stateFolder), with: indexBytes)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parts)) ?? [] where !named.contains(name) {
            unlink(parts + "/" + name)
        }
        if partsFrom != parts { try? FileManager.default.removeItem(atPath: partsFrom) }
        unlink(SyncClient.cachePath(stateFolder))
        unlink(SyncClient.validatorsPath(stateFolder))
    }
}
