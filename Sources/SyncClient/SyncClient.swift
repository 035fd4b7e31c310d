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
        /// The folder of the content store the course's folders link to (see `ContentStore`);
        /// a target holding several courses shares one.
        public var contentStore: String
        /// Whether the sync deletes store contents its local manifest no longer lists (true when
        /// the store is this course's alone; a multi-course target collects over all courses).
        public var collectsStore = true
        /// Whether a sync that leaves the course whole records it (`SettledSync`), so that the
        /// next sync with nothing to do finds out from the index alone.
        public var recordsSettled = true
        /// Whether that record is handed back (`Summary.settledRecord`) instead of written: a
        /// caller that adds files of its own to the course folder (outline pages) writes it once
        /// they are on the disk, since a sync the record vouches for rewrites nothing.
        public var returnsSettledRecord = false

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
            self.contentStore = ContentStore.folder(ofTarget: target)
        }
    }

    public struct Summary: Sendable {
        public var plan: SyncPlan
        public var downloadedBlocks = 0
        public var downloadedBytes: UInt64 = 0
        /// Course file contents downloaded into the store (each once), and taken from folders
        /// installed before the store existed instead.
        public var downloadedContents = 0
        public var adoptedContents = 0
        public var removedBlocks = 0
        /// What a sync killed earlier left and this one removed, relative to the target.
        public var leftoversRemoved: [String] = []
        public var failures: [(usageID: String, error: SyncError)] = []
        /// The server answered 304 to the manifest request.
        public var manifestNotModified = false
        public var seconds = 0.0
        /// Set when the sync found the course as the last one left it (`SettledSync`): the
        /// blocks installed, none planned.
        public var settledBlocks: Int?
        /// Installed blocks the sync left as they were.
        public var unchangedBlocks: Int { settledBlocks ?? plan.unchanged.count }
        /// The local manifest as the sync wrote it (nil for a settled sync, which wrote none):
        /// what follows the sync need not read it back.
        public var localManifest: CourseManifest?
        /// With `returnsSettledRecord`: the record of a sync that left the course whole, for
        /// the caller to write (`SettledSync.save`) once what it adds is durable.
        public var settledRecord: SettledSync?

        /// A sync that found the course as the last one left it (`SettledSync`): nothing planned.
        public static func settled(blocks: Int, seconds: Double) -> Summary {
            var summary = Summary(plan: SyncPlan(server: CourseManifest(courseID: "", publishedAt: "", generator: "", blocks: []), installed: nil))
            summary.settledBlocks = blocks
            summary.manifestNotModified = true
            summary.seconds = seconds
            return summary
        }

        mutating func count(_ results: [Result<UInt64, SyncError>?], of downloads: [BlockEntry]) {
            for (block, result) in zip(downloads, results) {
                switch result {
                case .success(let bytes):
                    downloadedBlocks += 1
                    downloadedBytes += bytes
                case .failure(let error):
                    failures.append((block.usageID, error))
                case nil:
                    break
                }
            }
        }
    }

    public let options: Options
    public init(options: Options) { self.options = options }

    var stateFolder: String { Self.stateFolder(of: options.target) }

    /// Where a target keeps what is not course content: cached manifest, downloads, the outbox.
    public static func stateFolder(of target: String) -> String { target + "/.coursepack-sync" }

    /// The answers given offline in this target, waiting for the LMS.
    public var outbox: Outbox { Outbox(folder: stateFolder) }

    var localManifestPath: String { options.target + "/manifest.json" }

    /// The plan only; nothing is written.
    public func plan() async throws(SyncError) -> (SyncPlan, notModified: Bool) {
        let fetched = try await fetchServerManifest(remember: false)
        guard let server = fetched.manifest else { throw .local(path: stateFolder, reason: "no manifest was read") }
        let installed = (try? readInstalled()) ?? nil
        try checkSameCourse(installed: installed, server: server)
        return (makePlan(server, installed: installed), fetched.notModified)
    }

    /// A source of another course would otherwise plan every installed block as removed.
    private func checkSameCourse(installed: CourseManifest?, server: CourseManifest) throws(SyncError) {
        guard let installed, installed.courseID != server.courseID, !options.replaceCourse else { return }
        throw .otherCourse(target: options.target, installed: installed.courseID, offered: server.courseID)
    }

    /// One sync, in steps: lock the target, fetch the server's manifest, plan, fetch, verify and
    /// install the new and outdated blocks by batches (`installDownloads`), write the final local
    /// manifest, then remove what the server dropped. `fetched`: the server's manifest from
    /// `fetchManifest()`, when the caller has it already.
    public func sync(fetched: FetchedManifest? = nil, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws(SyncError) -> Summary {
        let started = Date()
        let startedStamp = FileStamp.now()
        let lock = try lockTarget()
        defer { withExtendedLifetime(lock) {} }
        let server: FetchedManifest
        if let fetched { server = fetched } else { server = try await fetchManifest() }
        let installed = try readInstalled()
        try checkSameCourse(installed: installed, server: server.manifest)
        SettledSync.remove(stateFolder: stateFolder)
        let leftovers = SyncLeftovers(target: options.target).removeAll()
        var summary = Summary(plan: makePlan(server.manifest, installed: installed))
        summary.manifestNotModified = server.notModified
        summary.leftoversRemoved = leftovers
        let composer = LocalManifestComposer(server: server.manifest, installed: installed, removedIDs: Set(summary.plan.removed.map(\.usageID)))
        let downloads = summary.plan.downloads
        let session = TransferSession(timeouts: options.timeouts)
        defer { session.finish() }
        let contents = await fillStore(for: downloads, server: server.manifest, session: session)
        let (results, installedNow) = await installDownloads(
            downloads, contents: contents, session: session, composer: composer, installedNow: Set(summary.plan.unchanged.map(\.usageID)),
            progress: progress)
        summary.count(results, of: downloads)
        summary.downloadedBytes += contents?.transferred ?? 0
        summary.downloadedContents = contents?.downloaded ?? 0
        summary.adoptedContents = contents?.adopted ?? 0
        let local = try writeFinalManifest(composer.manifest(installedNow: installedNow, final: true))
        server.remember(stateFolder)
        summary.removedBlocks = removeDropped(summary.plan.removed, keeping: local)
        summary.localManifest = local
        if options.collectsStore { ContentStore(folder: options.contentStore).collect(keeping: ContentStore.listed(in: local)) }
        let failedArchives = summary.failures.compactMap { failure in downloads.first { $0.usageID == failure.usageID }?.sha256 }
        cleanDownloads(keeping: Set(failedArchives).union(contents?.failed.keys ?? [:].keys))
        if options.recordsSettled, summary.failures.isEmpty, let settled = SettledSync.whole(
            server: server.manifest, local: local, fingerprint: server.fingerprint, localManifestPath: localManifestPath,
            target: options.target, stateFolder: stateFolder, store: options.contentStore, syncStarted: startedStamp)
        {
            if options.returnsSettledRecord { summary.settledRecord = settled } else { settled.save(target: options.target) }
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// Makes the target's folders and takes its lock, which serializes syncs into one target.
    private func lockTarget() throws(SyncError) -> FileLock {
        try makeFolder(options.target)
        try makeFolder(stateFolder)
        try makeFolder(stateFolder + "/downloads")
        do {
            return try FileLock(.lockFile(stateFolder + "/lock"), waiting: .none)
        } catch .busy(let path) {
            throw .local(path: path, reason: "another sync into this folder is running")
        } catch {
            throw .local(path: stateFolder + "/lock", reason: "\(error)")
        }
    }

    /// Downloads, verifies and unpacks the blocks, a bounded number at a time, and swaps them in
    /// by batches, each made durable together (`install`). A batch bounds what a killed sync
    /// loses (its downloads are gone once unpacked) and the room staged copies take beside
    /// installed blocks; a few syncs of the file system per course cost little. Returns each
    /// block's outcome (nil: not tried) and the usage ids whose server version is installed.
    private func installDownloads(
        _ downloads: [BlockEntry], contents: ContentPlan?, session: TransferSession, composer: LocalManifestComposer, installedNow: Set<String>,
        progress: @Sendable (Int, Int) -> Void
    ) async -> ([Result<UInt64, SyncError>?], Set<String>) {
        let budget = UnpackBudget(limit: options.maximumUnpackedBytes)
        var batch = SwapBatch(count: downloads.count, installedNow: installedNow)
        await withTaskGroup(of: (Int, Result<StagedBlock, SyncError>).self) { group in
            var next = 0
            func start(_ index: Int) {
                let block = downloads[index]
                group.addTask { (index, await self.stage(block, contents: contents, budget: budget, session: session)) }
                next += 1
            }
            while next < min(options.jobs, downloads.count) { start(next) }
            var done = 0
            for await (index, result) in group {
                batch.add(result, at: index)
                if batch.isFull { install(&batch, composer: composer) }
                done += 1
                progress(done, downloads.count)
                if next < downloads.count { start(next) }
            }
        }
        if !batch.ready.isEmpty { install(&batch, composer: composer) }
        return (batch.outcomes, batch.installedNow)
    }

    /// Writes the local manifest once every batch is in; the sync fails when it cannot.
    private func writeFinalManifest(_ local: CourseManifest) throws(SyncError) -> CourseManifest {
        let bytes: [UInt8]
        do {
            bytes = try ManifestFile.write(local, to: localManifestPath)
        } catch {
            throw .local(path: localManifestPath, reason: "cannot write the local manifest: \(error)")
        }
        BlockLocations.save(local, bytes: bytes, courseRoot: options.target)
        return local
    }

    /// Deletes the folders of blocks the server dropped, now that the local manifest no longer
    /// names them, and their inventories; returns how many went.
    private func removeDropped(_ removed: [BlockEntry], keeping local: CourseManifest) -> Int {
        // Shared content whose update failed is still what the local manifest names.
        let kept = Set(SharedContent.all(in: local).map(\.archive.archive))
        var removedFolders: [String: String?] = [:]
        var count = 0
        for block in removed {
            guard let archive = block.archive, !kept.contains(archive), let folder = ArchivePath.installFolder(of: archive) else { continue }
            ZipReader.removeTree(options.target + "/" + folder)
            removedFolders.updateValue(nil, forKey: folder)
            count += 1
        }
        BlockInventory.removeOthers(stateFolder: stateFolder, keeping: removedFolders)
        return count
    }

    /// Shared content is planned as blocks (see `SharedContent`).
    private func makePlan(_ server: CourseManifest, installed: CourseManifest?) -> SyncPlan {
        SyncPlan(
            server: SharedContent.asBlocks(server), installed: installed.map(SharedContent.asBlocks), selection: options.selection,
            emptySelectionMeansAll: options.emptySelectionMeansAll
        ) { entry in
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

    static func sha256(of path: String) throws -> String {
        do {
            return try SHA256Hex.ofFile(path)
        } catch {
            throw SyncError.local(path: path, reason: "cannot be read: \(error)")
        }
    }

    func makeFolder(_ path: String) throws(SyncError) {
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
