import Crypto
import FileSystem
import Foundation
import Manifest
import ZipArchive

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keeps a local copy of a published course up to date: fetches the server's manifest (one
/// conditional request when nothing changed), downloads only new and outdated blocks, checks
/// each archive's size and sha256 before unpacking it safely, swaps each block folder in
/// atomically, and deletes removed blocks only after the new local manifest is written.
///
/// Target layout: `TARGET/manifest.json` (what is installed), `TARGET/<type>/<name>/` per
/// block, and `TARGET/.coursepack-sync/` for state (cached manifest, validators, partial files).
public struct SyncClient: Sendable {
    public struct Options: Sendable {
        public var source: SyncSource
        public var target: String
        public var selection: Set<String>
        public var jobs: Int
        public var limits: ZipReader.Limits
        public var timeouts: NetworkTimeouts
        /// Whether an empty `selection` means every block (a plain sync) or none (a target
        /// whose budget leaves room for nothing new: installed blocks are still updated).
        public var emptySelectionMeansAll = true
        /// Bytes the whole sync may unpack, over all its blocks (see `UnpackBudget`).
        public var maximumUnpackedBytes: UInt64 = Self.defaultMaximumUnpackedBytes
        /// Whether a source of another course than the one installed may replace it; when
        /// false such a sync is refused before anything changes.
        public var replaceCourse = false
        /// How installs are made durable (see `SyncDurability`).
        public var durability = SyncDurability.platformDefault

        /// Twice the largest archive `ZipReader` unpacks by default: room for a course of
        /// long videos, and a bound on what a hostile manifest of many small bombs costs.
        public static let defaultMaximumUnpackedBytes: UInt64 = 32 << 30

        public init(
            source: SyncSource, target: String, selection: Set<String> = [], jobs: Int = 4, limits: ZipReader.Limits = .init(),
            timeouts: NetworkTimeouts = NetworkTimeouts()
        ) {
            self.source = source
            self.target = target
            self.selection = selection
            self.jobs = max(1, jobs)
            self.limits = limits
            self.timeouts = timeouts
        }
    }

    public struct Summary: Sendable {
        public var plan: SyncPlan
        public var downloadedBlocks = 0
        public var downloadedBytes: UInt64 = 0
        public var removedBlocks = 0
        /// What a sync killed earlier left and this one removed, relative to the target.
        public var leftoversRemoved: [String] = []
        public var failures: [(usageID: String, error: SyncError)] = []
        /// The server answered 304 to the manifest request.
        public var manifestNotModified = false
        public var seconds = 0.0
    }

    public let options: Options
    public init(options: Options) { self.options = options }

    var stateFolder: String { Self.stateFolder(of: options.target) }

    /// Where a target keeps what is not course content: cached manifest, downloads, the outbox.
    public static func stateFolder(of target: String) -> String { target + "/.coursepack-sync" }

    /// The answers given offline in this target, waiting for the LMS.
    public var outbox: Outbox { Outbox(folder: stateFolder) }

    /// The server's manifest, validated, without changing anything here.
    public func serverManifest() async throws(SyncError) -> CourseManifest {
        try await fetchServerManifest(remember: false).0
    }
    var localManifestPath: String { options.target + "/manifest.json" }

    /// The plan only; nothing is written.
    public func plan() async throws(SyncError) -> (SyncPlan, notModified: Bool) {
        let (server, notModified, _) = try await fetchServerManifest(remember: false)
        let installed = (try? readInstalled()) ?? nil
        try checkSameCourse(installed: installed, server: server)
        return (makePlan(Self.withSharedArchives(server), installed: installed.map(Self.withSharedArchives)), notModified)
    }

    /// A source of another course would otherwise plan every installed block as removed.
    private func checkSameCourse(installed: CourseManifest?, server: CourseManifest) throws(SyncError) {
        guard let installed, installed.courseID != server.courseID, !options.replaceCourse else { return }
        throw .otherCourse(target: options.target, installed: installed.courseID, offered: server.courseID)
    }

    /// `fetched`: the server's manifest from `fetchManifest()`, when the caller has it already.
    public func sync(fetched: FetchedManifest? = nil, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws(SyncError) -> Summary {
        let started = Date()
        try makeFolder(options.target)
        try makeFolder(stateFolder)
        try makeFolder(stateFolder + "/downloads")
        let lock: FileLock
        do {
            // Serializes syncs into one target.
            lock = try FileLock(.lockFile(stateFolder + "/lock"), waiting: .none)
        } catch .busy(let path) {
            throw .local(path: path, reason: "another sync into this folder is running")
        } catch {
            throw .local(path: stateFolder + "/lock", reason: "\(error)")
        }
        defer { withExtendedLifetime(lock) {} }

        let (server, notModified, remember): (CourseManifest, Bool, @Sendable (String) -> Void)
        if let fetched {
            (server, notModified, remember) = (fetched.manifest, fetched.notModified, fetched.remember)
        } else {
            (server, notModified, remember) = try await fetchServerManifest(remember: true)
        }
        let installed = try readInstalled()
        try checkSameCourse(installed: installed, server: server)
        let leftovers = SyncLeftovers(target: options.target).removeAll()
        var summary = Summary(plan: makePlan(Self.withSharedArchives(server), installed: installed.map(Self.withSharedArchives)))
        summary.manifestNotModified = notModified
        summary.leftoversRemoved = leftovers
        let budget = UnpackBudget(limit: options.maximumUnpackedBytes)
        let composer = LocalManifestComposer(server: server, installed: installed, removedIDs: Set(summary.plan.removed.map(\.usageID)))
        var installedNow = Set(summary.plan.unchanged.map(\.usageID))

        // Download, verify and unpack, a bounded number at a time; swap in by batches, each
        // made durable together (`swapIn`). A batch bounds what a killed sync loses (its
        // downloads are gone once unpacked) and the room staged copies take beside installed
        // blocks; a few syncs of the file system per course cost little.
        let downloads = summary.plan.downloads
        let session = TransferSession(timeouts: options.timeouts)
        defer { session.finish() }
        let results = await withTaskGroup(of: (Int, Result<StagedBlock, SyncError>).self) { group in
            var outcomes = [Result<UInt64, SyncError>?](repeating: nil, count: downloads.count)
            var batch: [(Int, StagedBlock)] = []
            var batchedBytes: UInt64 = 0
            func swapBatch() {
                for (index, result) in install(batch, composer: composer, installedNow: &installedNow) { outcomes[index] = result }
                batch = []
                batchedBytes = 0
            }
            var next = 0
            var done = 0
            func start(_ index: Int) {
                let block = downloads[index]
                group.addTask { (index, await self.stage(block, budget: budget, session: session)) }
            }
            while next < min(options.jobs, downloads.count) { start(next); next += 1 }
            for await (index, result) in group {
                switch result {
                case .success(let block):
                    batch.append((index, block))
                    batchedBytes += UInt64(downloads[index].size ?? 0)
                case .failure(let error):
                    outcomes[index] = .failure(error)
                }
                if batch.count >= Self.swapBatchBlocks || batchedBytes >= Self.swapBatchBytes { swapBatch() }
                done += 1
                progress(done, downloads.count)
                if next < downloads.count { start(next); next += 1 }
            }
            if !batch.isEmpty { swapBatch() }
            return outcomes
        }

        for (block, result) in zip(downloads, results) {
            switch result {
            case .success(let bytes):
                summary.downloadedBlocks += 1
                summary.downloadedBytes += bytes
            case .failure(let error):
                summary.failures.append((block.usageID, error))
            case nil:
                break
            }
        }

        let local = composer.manifest(installedNow: installedNow, final: true)
        do {
            try ManifestFile.write(local, to: localManifestPath)
        } catch {
            throw .local(path: localManifestPath, reason: "cannot write the local manifest: \(error)")
        }
        remember(stateFolder)

        // A runtime or search index whose update failed is still the one the local manifest names.
        let kept = Set([local.runtime?.archive, local.search?.archive].compactMap { $0 })
        var removedFolders: [String: String?] = [:]
        for block in summary.plan.removed {
            guard let archive = block.archive, !kept.contains(archive), let folder = ArchivePath.installFolder(of: archive) else { continue }
            ZipReader.removeTree(options.target + "/" + folder)
            removedFolders.updateValue(nil, forKey: folder)
            summary.removedBlocks += 1
        }
        BlockInventory.removeOthers(stateFolder: stateFolder, keeping: removedFolders)
        cleanDownloads(keeping: Set(summary.failures.compactMap { failure in downloads.first { $0.usageID == failure.usageID }?.sha256 }))
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// The shared runtime archive is planned, downloaded, verified and installed as if it were
    /// one more block (`runtime/<hash>.zip` unpacks into `runtime/<hash>/`), so it gets every
    /// guarantee a block gets and is fetched once, whatever the number of pages using it. The
    /// search index (`search/<hash>.zip` into `search/<hash>/`) too.
    static func withSharedArchives(_ manifest: CourseManifest) -> CourseManifest {
        var copy = manifest
        if let runtime = manifest.runtime {
            copy.blocks.append(BlockEntry(
                usageID: runtimeID(runtime), type: "runtime", displayName: "page runtime", parents: [],
                archive: runtime.archive, size: runtime.size, sha256: runtime.sha256, contentHash: runtime.contentHash,
                lastModified: manifest.publishedAt))
        }
        if let search = manifest.search {
            copy.blocks.append(BlockEntry(
                usageID: searchID(search), type: "search", displayName: "search index", parents: [],
                archive: search.archive, size: search.size, sha256: search.sha256, contentHash: search.contentHash,
                lastModified: manifest.publishedAt))
        }
        return copy
    }

    static func runtimeID(_ runtime: RuntimeArchive) -> String { "runtime:" + runtime.archive }
    static func searchID(_ search: SearchArchive) -> String { "search:" + search.archive }

    private func makePlan(_ server: CourseManifest, installed: CourseManifest?) -> SyncPlan {
        SyncPlan(server: server, installed: installed, selection: options.selection, emptySelectionMeansAll: options.emptySelectionMeansAll) { entry in
            guard let archive = entry.archive, let folder = ArchivePath.installFolder(of: archive) else { return false }
            var info = stat()
            return stat(options.target + "/" + folder, &info) == 0
        }
    }

    private func readInstalled() throws(SyncError) -> CourseManifest? {
        do {
            return try ManifestFile.read(localManifestPath)
        } catch {
            throw .manifest(error)
        }
    }

    /// Downloads, verifies and unpacks one block into a staging folder beside its install
    /// folder. With `.fileSystem` durability nothing is synced yet: `swapIn` waits once for all.
    private func stage(_ block: BlockEntry, budget: UnpackBudget, session: TransferSession) async -> Result<StagedBlock, SyncError> {
        guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive),
            let sha = block.sha256, let size = block.size
        else { return .failure(.unsafeManifest(source: options.source.description, reason: "block \(block.usageID) cannot be installed")) }
        guard !budget.isExhausted else { return .failure(.unpackBudget(archive: archive, limit: budget.limit)) }
        // Keyed by content for resuming, and by block, since two blocks may share an archive's bytes.
        let partial = stateFolder + "/downloads/\(sha)-\(folder.replacingOccurrences(of: "/", with: "_")).zip"
        let fetched: Downloader.Fetched
        do {
            fetched = try await Downloader(session: session).fetch(options.source.location(of: archive), to: partial, expectedSize: size)
        } catch {
            return .failure(error)
        }
        guard fetched.size == size else {
            unlink(partial)
            return .failure(.verification(archive: archive, reason: "the download is \(fetched.size) bytes, the manifest says \(size); the installed version is kept"))
        }
        // The hash was taken as the bytes arrived; nothing is unpacked before it matches.
        guard fetched.sha256 == sha else {
            unlink(partial)
            return .failure(.verification(archive: archive, reason: "sha256 does not match the manifest; the installed version is kept"))
        }
        let slash = folder.lastIndex(of: "/")
        let parent = options.target + "/" + (slash.map { String(folder[..<$0]) } ?? "")
        let name = slash.map { String(folder[folder.index(after: $0)...]) } ?? folder
        let staging = parent + "/.\(name).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let reader: ZipReader
        do {
            switch fetched.bytes {
            case .memory(let bytes): reader = try ZipReader(bytes: bytes, path: partial, limits: options.limits)
            case .file(let path): reader = try ZipReader(path: path, limits: options.limits)
            }
        } catch {
            unlink(partial)
            return .failure(.verification(archive: archive, reason: "\(error); the installed version is kept"))
        }
        // The verified download stays for a later sync with a larger budget to unpack.
        let unpacked = reader.entries.reduce(UInt64(0)) { total, entry in
            let (sum, overflow) = total.addingReportingOverflow(entry.uncompressedSize)
            return overflow ? .max : sum
        }
        guard budget.reserve(unpacked) else { return .failure(.unpackBudget(archive: archive, limit: budget.limit)) }
        let perFile = options.durability == .perFile
        let inventory = BlockInventory.path(stateFolder: stateFolder, blockFolder: folder, archiveSHA256: sha)
        // The same archive's inventory is there when its folder went missing: it stays theirs.
        let ownsInventory = access(inventory, F_OK) != 0
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            // Synced before the swap (file by file here, or all at once in `swapIn`): a power
            // cut never leaves an installed folder whose files were not written, under a local
            // manifest that says they are there.
            try reader.extract(into: staging, synced: perFile)
            // What the folder holds, so a later sync can tell a damaged install from a good one.
            // Beside the installed version's inventory, which stays until a local manifest names this archive.
            try BlockInventory(entries: reader.entries, archiveSHA256: sha).write(to: inventory, synced: perFile)
        } catch {
            budget.release(unpacked)
            ZipReader.removeTree(staging)
            unlink(partial)
            return .failure(.verification(archive: archive, reason: "\(error); the installed version is kept"))
        }
        // Unpacked: the download is no longer needed, and gone before a file-system sync would
        // write it to the disk for nothing.
        unlink(partial)
        return .success(StagedBlock(
            usageID: block.usageID, folder: folder, sha256: sha, ownsInventory: ownsInventory, staging: staging,
            final: options.target + "/" + folder, parent: parent, name: name, transferred: fetched.transferred))
    }

    /// Blocks, or archive bytes, unpacked before they are swapped in together.
    static let swapBatchBlocks = 256
    static let swapBatchBytes: UInt64 = 128 << 20

    /// Installs a batch: swaps its blocks in (`swapIn`), then writes a local manifest that names
    /// their new archives and the installed version of every other block, so that the manifest
    /// describes what is installed after every batch. When that manifest cannot be written (a
    /// full disk), the batch is swapped back: every block is wholly old or wholly new, and the
    /// manifest on the disk says which. Returns each block's bytes transferred, or why it is not
    /// installed, by its index among the sync's downloads.
    private func install(
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
    private func rollBack(_ swapped: [SwappedBlock], reason: String) -> [Int: Result<UInt64, SyncError>] {
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
    private func swapIn(_ ready: [(Int, StagedBlock)]) -> ([Int: Result<UInt64, SyncError>], [SwappedBlock]) {
        var results = Dictionary(uniqueKeysWithValues: ready.map { ($0.0, Result<UInt64, SyncError>.success($0.1.transferred)) })
        guard !ready.isEmpty else { return (results, []) }
        func fail(_ block: StagedBlock, _ index: Int, _ reason: String) {
            ZipReader.removeTree(block.staging)
            if block.ownsInventory { unlink(BlockInventory.path(stateFolder: stateFolder, blockFolder: block.folder, archiveSHA256: block.sha256)) }
            results[index] = .failure(.local(path: block.final, reason: reason))
        }
        // One wait for every file, folder and inventory written into the staging folders (the
        // per-file path synced each as it was written).
        if options.durability == .fileSystem {
            do {
                try DurableFile.syncFileSystem(containing: options.target)
            } catch {
                for (index, block) in ready { fail(block, index, "cannot sync the unpacked block to disk: \(error); the installed version is kept") }
                return (results, [])
            }
        }
        var swapped: [SwappedBlock] = []
        for (index, block) in ready {
            if DurableFile.exchange(block.staging, block.final) {
                swapped.append(SwappedBlock(index: index, block: block, previous: block.staging))
            } else if rename(block.staging, block.final) == 0 {
                swapped.append(SwappedBlock(index: index, block: block, previous: nil))
            } else {
                // Not on Linux: move the old aside.
                let old = block.parent + "/.\(block.name).old-\(getpid())-\(index)"
                rename(block.final, old)
                guard rename(block.staging, block.final) == 0 else {
                    let reason = "cannot install: \(String(cString: strerror(errno)))"
                    rename(old, block.final)
                    fail(block, index, reason)
                    continue
                }
                swapped.append(SwappedBlock(index: index, block: block, previous: old))
            }
        }
        // The swaps themselves reach the disk before the local manifest names them; a block
        // whose swap may not have is swapped back.
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
        let unsynced = swapped.filter { failedParents[$0.block.parent] != nil }
        for swap in unsynced {
            let reason = "cannot sync the installed block to disk: \(failedParents[swap.block.parent] ?? "")"
            for (index, result) in rollBack([swap], reason: reason) { results[index] = result }
        }
        return (results, swapped.filter { failedParents[$0.block.parent] == nil })
    }

    static func sha256(of path: String) throws -> String {
        do {
            return try SHA256Hex.ofFile(path)
        } catch {
            throw SyncError.local(path: path, reason: "cannot be read: \(error)")
        }
    }

    private func makeFolder(_ path: String) throws(SyncError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .local(path: path, reason: "cannot create the folder")
        }
    }

    /// Partial downloads of failed blocks stay for the next run to resume; the rest go.
    private func cleanDownloads(keeping: Set<String>) {
        let folder = stateFolder + "/downloads"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !keeping.contains(where: { name.hasPrefix($0) }) {
            unlink(folder + "/" + name)
        }
    }
}
