import FileSystem
import Foundation
import Manifest
import ZipArchive

extension SyncClient {
    /// Installs the batch's staged blocks (see `install`) and records their outcomes.
    func install(_ batch: inout SwapBatch, composer: LocalManifestComposer) {
        let ready = batch.ready
        var installedNow = batch.installedNow
        let results = install(ready, composer: composer, installedNow: &installedNow)
        batch.installedNow = installedNow
        batch.record(results)
    }

    /// Installs a batch: swaps its blocks in (`swapIn`), then writes a local manifest that names
    /// their new archives and the installed version of every other block, so that the manifest
    /// describes what is installed after every batch. When that manifest cannot be written (a
    /// full disk), the batch is swapped back: every block is wholly old or wholly new, and the
    /// manifest on the disk says which. Returns each block's bytes transferred, or why it is not
    /// installed, by its index among the sync's downloads.
    func install(
        _ ready: [(Int, StagedBlock)], composer: LocalManifestComposer, installedNow: inout Set<String>
    ) -> [Int: Result<UInt64, SyncError>] {
        let (swapResults, swapped) = swapIn(ready)
        var results = swapResults
        guard !swapped.isEmpty else { return results }
        let named = installedNow.union(swapped.map(\.block.usageID))
        do {
            try ManifestFile.write(composer.manifest(installedNow: named, final: false), to: localManifestPath)
        } catch {
            let reason = "cannot write the local manifest: \(error); the installed version is kept"
            for (index, result) in rollBack(swapped, reason: reason) { results[index] = result }
            return results
        }
        installedNow = named
        for swap in swapped {
            if let previous = swap.previous { ZipReader.removeTree(previous) }
        }
        let installedArchives = Dictionary(swapped.map { ($0.block.folder, Optional($0.block.sha256)) }, uniquingKeysWith: { a, _ in a })
        BlockInventory.removeOthers(stateFolder: stateFolder, keeping: installedArchives)
        return results
    }

    /// Puts back the versions a batch replaced (or removes what it added where there was none),
    /// and the new versions' inventories; every block of the batch fails with `reason`.
    func rollBack(_ swapped: [SwappedBlock], reason: String) -> [Int: Result<UInt64, SyncError>] {
        var results: [Int: Result<UInt64, SyncError>] = [:]
        for swap in swapped {
            let block = swap.block
            if let previous = swap.previous {
                if !DurableFile.exchange(previous, block.final) {
                    let aside = block.parent + "/.\(block.name).old-\(getpid())"
                    rename(block.final, aside)
                    rename(previous, block.final)
                    ZipReader.removeTree(aside)
                }
                ZipReader.removeTree(previous)
            } else {
                ZipReader.removeTree(block.final)
            }
            if block.ownsInventory { unlink(BlockInventory.path(stateFolder: stateFolder, blockFolder: block.folder, archiveSHA256: block.sha256)) }
            results[swap.index] = .failure(.local(path: block.final, reason: reason))
        }
        // Best effort: the manifest on the disk names the old versions whether or not this lands.
        try? DurableFile.syncFileSystem(containing: options.target)
        return results
    }

    /// Makes every staged block durable, swaps each into place (the version it replaces kept
    /// aside, see `SwappedBlock`), and makes the swaps durable; returns why each block that is
    /// not swapped in failed, by its index among the sync's downloads, and the swapped blocks.
    func swapIn(_ ready: [(Int, StagedBlock)]) -> ([Int: Result<UInt64, SyncError>], [SwappedBlock]) {
        var results = Dictionary(uniqueKeysWithValues: ready.map { ($0.0, Result<UInt64, SyncError>.success($0.1.transferred)) })
        guard !ready.isEmpty else { return (results, []) }
        // One wait for every file, folder and inventory written into the staging folders (the
        // per-file path synced each as it was written).
        if options.durability == .fileSystem {
            do {
                try DurableFile.syncFileSystem(containing: options.target)
            } catch {
                for (index, block) in ready {
                    results[index] = .failure(discard(block, reason: "cannot sync the unpacked block to disk: \(error); the installed version is kept"))
                }
                return (results, [])
            }
        }
        var swapped: [SwappedBlock] = []
        for (index, block) in ready {
            switch swapOne(block, index: index) {
            case .success(let swap): swapped.append(swap)
            case .failure(let error): results[index] = .failure(error)
            }
        }
        // The swaps themselves reach the disk before the local manifest names them; a block
        // whose swap may not have is swapped back.
        let failedParents = syncSwaps(swapped)
        for swap in swapped {
            guard let failure = failedParents[swap.block.parent] else { continue }
            for (index, result) in rollBack([swap], reason: "cannot sync the installed block to disk: \(failure)") { results[index] = result }
        }
        return (results, swapped.filter { failedParents[$0.block.parent] == nil })
    }

    /// Moves one staged block into its install folder, the version there kept aside.
    private func swapOne(_ block: StagedBlock, index: Int) -> Result<SwappedBlock, SyncError> {
        if DurableFile.exchange(block.staging, block.final) {
            return .success(SwappedBlock(index: index, block: block, previous: block.staging))
        }
        if rename(block.staging, block.final) == 0 {
            return .success(SwappedBlock(index: index, block: block, previous: nil))
        }
        // Not on Linux: move the old aside.
        let old = block.parent + "/.\(block.name).old-\(getpid())-\(index)"
        rename(block.final, old)
        guard rename(block.staging, block.final) == 0 else {
            let reason = "cannot install: \(String(cString: strerror(errno)))"
            rename(old, block.final)
            return .failure(discard(block, reason: reason))
        }
        return .success(SwappedBlock(index: index, block: block, previous: old))
    }

    /// Makes the swaps durable: one sync of the file system, or each parent folder synced.
    /// Returns the parent folders that could not be synced, with why.
    private func syncSwaps(_ swapped: [SwappedBlock]) -> [String: String] {
        var failedParents: [String: String] = [:]
        if options.durability == .fileSystem {
            do {
                try DurableFile.syncFileSystem(containing: options.target)
            } catch {
                for parent in Set(swapped.map(\.block.parent)) { failedParents[parent] = "\(error)" }
            }
        } else {
            for parent in Set(swapped.map(\.block.parent)) {
                do { try ZipReader.syncFolder(parent) } catch { failedParents[parent] = "\(error)" }
            }
        }
        return failedParents
    }

    /// A staged block that is not installed: its staging folder goes, and its inventory when
    /// this sync wrote it.
    private func discard(_ block: StagedBlock, reason: String) -> SyncError {
        ZipReader.removeTree(block.staging)
        if block.ownsInventory { unlink(BlockInventory.path(stateFolder: stateFolder, blockFolder: block.folder, archiveSHA256: block.sha256)) }
        return .local(path: block.final, reason: reason)
    }
}
