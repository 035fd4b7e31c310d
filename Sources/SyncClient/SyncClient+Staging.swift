import Foundation
import Manifest
import ZipArchive

extension SyncClient {
    /// Downloads, verifies and unpacks one block into a staging folder beside its install
    /// folder (fetch, verify, unpack). With `.fileSystem` durability nothing is synced yet:
    /// `swapIn` waits once for all.
    func stage(_ block: BlockEntry, contents: ContentPlan?, budget: UnpackBudget, session: TransferSession) async -> Result<StagedBlock, SyncError> {
        // A server that lists contents: the block is built from the store, its archive unused.
        if let contents, let listing = block.files { return stageLinked(block, listing: listing, contents: contents, budget: budget) }
        guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive),
            let sha = block.sha256, let size = block.size
        else { return .failure(.unsafeManifest(source: options.source.description, reason: "block \(block.usageID) cannot be installed")) }
        guard !budget.isExhausted else { return .failure(.unpackBudget(archive: archive, limit: budget.limit)) }
        // Keyed by content for resuming, and by block, since two blocks may share an archive's bytes.
        let partial = stateFolder + "/downloads/\(sha)-\(folder.replacingOccurrences(of: "/", with: "_")).zip"
        let reader: ZipReader
        var staged = StagedBlock(usageID: block.usageID, folder: folder, sha256: sha, target: options.target)
        do throws(SyncError) {
            let fetched = try await fetchVerified(archive, to: partial, size: size, sha256: sha, session: session)
            staged.transferred = fetched.transferred
            reader = try openArchive(fetched, partial: partial, archive: archive)
        } catch {
            return .failure(error)
        }
        // The verified download stays for a later sync with a larger budget to unpack.
        let unpacked = reader.entries.totalBytes(\.uncompressedSize)
        guard budget.reserve(unpacked) else { return .failure(.unpackBudget(archive: archive, limit: budget.limit)) }
        do throws(SyncError) {
            try unpack(reader, into: &staged, archive: archive)
        } catch {
            budget.release(unpacked)
            unlink(partial)
            return .failure(error)
        }
        staged.stagedBytes = unpacked
        // Unpacked: the download is no longer needed, and gone before a file-system sync would
        // write it to the disk for nothing.
        unlink(partial)
        return .success(staged)
    }

    /// The archive, downloaded (or resumed) into `partial` and checked against the manifest's
    /// size and sha256; a download that does not match is deleted.
    private func fetchVerified(
        _ archive: String, to partial: String, size: UInt64, sha256: String, session: TransferSession
    ) async throws(SyncError) -> Downloader.Fetched {
        let fetched = try await Downloader(session: session).fetch(options.source.location(of: archive), to: partial, expectedSize: size)
        guard fetched.size == size else {
            unlink(partial)
            throw .verification(archive: archive, reason: "the download is \(fetched.size) bytes, the manifest says \(size); the installed version is kept")
        }
        // The hash was taken as the bytes arrived; nothing is unpacked before it matches.
        guard fetched.sha256 == sha256 else {
            unlink(partial)
            throw .verification(archive: archive, reason: "sha256 does not match the manifest; the installed version is kept")
        }
        return fetched
    }

    /// The verified download as a ZIP whose limits hold; one that is not is deleted.
    private func openArchive(_ fetched: Downloader.Fetched, partial: String, archive: String) throws(SyncError) -> ZipReader {
        do {
            switch fetched.bytes {
            case .memory(let bytes): return try ZipReader(bytes: bytes, path: partial, limits: options.limits)
            case .file(let path): return try ZipReader(path: path, limits: options.limits)
            }
        } catch {
            unlink(partial)
            throw .verification(archive: archive, reason: "\(error); the installed version is kept")
        }
    }

    /// Extracts the archive into the block's staging folder and writes its inventory beside the
    /// installed version's, which stays until a local manifest names this archive. On failure
    /// the staging folder is removed.
    private func unpack(_ reader: ZipReader, into staged: inout StagedBlock, archive: String) throws(SyncError) {
        let perFile = options.durability == .perFile
        let inventory = BlockInventory.path(stateFolder: stateFolder, blockFolder: staged.folder, archiveSHA256: staged.sha256)
        // The same archive's inventory is there when its folder went missing: it stays theirs.
        staged.ownsInventory = access(inventory, F_OK) != 0
        do {
            try FileManager.default.createDirectory(atPath: staged.parent, withIntermediateDirectories: true)
            // Synced before the swap (file by file here, or all at once in `swapIn`): a power
            // cut never leaves an installed folder whose files were not written, under a local
            // manifest that says they are there.
            try reader.extract(into: staged.staging, synced: perFile)
            // What the folder holds, so a later sync can tell a damaged install from a good one.
            try BlockInventory(entries: reader.entries, archiveSHA256: staged.sha256).write(to: inventory, synced: perFile)
        } catch {
            ZipReader.removeTree(staged.staging)
            throw .verification(archive: archive, reason: "\(error); the installed version is kept")
        }
    }
}
