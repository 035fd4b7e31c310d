import FileSystem
import Foundation
import Synchronization
import Manifest
import ZipArchive

/// What a sync's blocks need from the store, once it is filled: the server's contents, the
/// CRC-32 of each one needed (for inventories), and the ones that could not be had.
struct ContentPlan: Sendable {
    let files: [String: CourseFile]
    let store: ContentStore
    /// Copies of contents linked to the file system's cap (see `OverflowCopies`).
    let overflow = OverflowCopies()
    var crcs: [String: UInt32] = [:]
    var failed: [String: SyncError] = [:]
    /// Bytes downloaded for contents and how many were downloaded.
    var transferred: UInt64 = 0
    var downloaded = 0
    /// Contents taken from folders installed before the store existed instead of downloaded.
    var adopted = 0
}

extension SyncClient {
    /// Fills the store with every content the planned blocks list and it lacks: first from
    /// files already installed at the same path (a target synced before the store existed),
    /// then downloaded, each once, `jobs` at a time. Nil when the server lists no contents.
    func fillStore(for downloads: [BlockEntry], server: CourseManifest, session: TransferSession) async -> ContentPlan? {
        guard let files = server.files else { return nil }
        var plan = ContentPlan(files: files, store: ContentStore(folder: options.contentStore))
        // Each content once, with every installed path that may already hold it.
        var candidates: [String: [String]] = [:]
        for block in downloads {
            guard let listing = block.files, let folder = block.archive.flatMap(ArchivePath.installFolder(of:)) else { continue }
            for (path, key) in listing where files[key] != nil { candidates[key, default: []].append(options.target + "/" + folder + "/" + path) }
        }
        var missing: [String] = []
        for (key, paths) in candidates.sorted(by: { $0.key < $1.key }) {
            guard let file = files[key] else { continue }
            if plan.store.holds(key, size: file.size), let crc = plan.store.verifiedCRC32(of: key) {
                plan.crcs[key] = crc
            } else if paths.contains(where: { adoptInstalled($0, as: key, file: file, store: plan.store) }), let crc = plan.store.verifiedCRC32(of: key) {
                plan.adopted += 1
                plan.crcs[key] = crc
            } else {
                unlink(plan.store.path(of: key))
                missing.append(key)
            }
        }
        let store = plan.store
        await withTaskGroup(of: (String, Result<StoredContent, SyncError>).self) { group in
            var next = 0
            func start() {
                let key = missing[next]
                let file = files[key] ?? CourseFile(size: 0, compressedSize: 0, encoding: nil)
                // The child returns a Result from a function, as `stage` does: a typed `do/catch`
                // inside the child closure crashed release builds (Swift 6.3.1) when its tuple
                // result was handed to the group.
                group.addTask { (key, await self.fetchedContent(key, file: file, store: store, session: session)) }
                next += 1
            }
            while next < min(options.jobs, missing.count) { start() }
            for await (key, result) in group {
                switch result {
                case .success(let stored):
                    plan.crcs[key] = stored.crc32
                    plan.transferred += stored.transferred
                    plan.downloaded += 1
                case .failure(let error):
                    plan.failed[key] = error
                }
                if next < missing.count { start() }
            }
        }
        return plan
    }

    /// `fetchContent`'s outcome as a value.
    private func fetchedContent(_ key: String, file: CourseFile, store: ContentStore, session: TransferSession) async -> Result<StoredContent, SyncError> {
        do {
            return .success(try await fetchContent(key, file: file, store: store, session: session))
        } catch {
            return .failure(error)
        }
    }

    /// An installed file (same path in the block's installed folder) whose size and sha256
    /// are the content's is linked into the store rather than downloaded again.
    private func adoptInstalled(_ path: String, as key: String, file: CourseFile, store: ContentStore) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, UInt64(info.st_size) == file.size,
            (try? SHA256Hex.ofFile(path)) == key
        else { return false }
        return (try? store.adopt(path, as: key, link: true, synced: options.durability == .perFile)) != nil
    }

    /// Builds the block's staging folder from the store: each listed path a hard link to its
    /// content (a copy where the file system refuses links), then its inventory. Same path
    /// rules as an archive's entries.
    func stageLinked(_ block: BlockEntry, listing: FileListing, contents: ContentPlan, budget: UnpackBudget) -> Result<StagedBlock, SyncError> {
        guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive), let sha = block.sha256 else {
            return .failure(.unsafeManifest(source: options.source.description, reason: "block \(block.usageID) cannot be installed"))
        }
        var staged = StagedBlock(usageID: block.usageID, folder: folder, sha256: sha, target: options.target)
        var inventory: [BlockInventory.File] = []
        var unpacked: UInt64 = 0
        for (path, key) in listing.sorted(by: { $0.key < $1.key }) {
            if let failure = contents.failed[key] { return .failure(failure) }
            guard let file = contents.files[key], contents.store.holds(key, size: file.size), let crc = contents.crcs[key] else {
                return .failure(.verification(archive: archive, reason: "\(path): its content \(key) is not in the store; the installed version is kept"))
            }
            inventory.append(BlockInventory.File(name: path, size: file.size, crc32: crc))
            unpacked += file.size
        }
        guard budget.reserve(unpacked) else { return .failure(.unpackBudget(archive: archive, limit: budget.limit)) }
        let inventoryPath = BlockInventory.path(stateFolder: stateFolder, blockFolder: folder, archiveSHA256: sha)
        staged.ownsInventory = access(inventoryPath, F_OK) != 0
        do {
            try FileManager.default.createDirectory(atPath: staged.parent, withIntermediateDirectories: true)
            staged.stagedBytes = try LinkedFolder(root: staged.staging, synced: options.durability == .perFile)
                .build(listing, store: contents.store, overflow: contents.overflow)
            try BlockInventory(files: inventory, archiveSHA256: sha).write(to: inventoryPath, synced: options.durability == .perFile)
        } catch {
            budget.release(unpacked)
            ZipReader.removeTree(staged.staging)
            return .failure(.verification(archive: archive, reason: "\(error); the installed version is kept"))
        }
        return .success(staged)
    }
}

/// A folder made of links to store contents.
struct LinkedFolder {
    let root: String
    let synced: Bool

    /// Returns the bytes copied instead of linked (where the file system refuses links): what
    /// the folder adds to the disk.
    @discardableResult
    func build(_ listing: FileListing, store: ContentStore, overflow: OverflowCopies) throws -> UInt64 {
        guard mkdir(root, 0o755) == 0 else { throw FileError(path: root, operation: "create folder", errno: errno) }
        var folders: Set<String> = [root]
        var copied: UInt64 = 0
        for (path, key) in listing.sorted(by: { $0.key < $1.key }) {
            var current = root
            for part in path.split(separator: "/").dropLast() {
                current += "/" + part
                guard folders.insert(current).inserted else { continue }
                if mkdir(current, 0o755) != 0 && errno != EEXIST { throw FileError(path: current, operation: "create folder", errno: errno) }
            }
            copied += try place(key, at: root + "/" + path, store: store, overflow: overflow)
        }
        if synced {
            for path in folders.sorted(by: { $0.count > $1.count }) { try ZipReader.syncFolder(path) }
        }
        return copied
    }

    /// A hard link to the content; past the cap on links to one file, a link to an overflow
    /// copy of it; a copy where the file system refuses links (another device, no links).
    /// Returns the bytes copied (0 for a link).
    private func place(_ key: String, at destination: String, store: ContentStore, overflow: OverflowCopies) throws -> UInt64 {
        let source = store.path(of: key)
        if link(source, destination) == 0 { return 0 }
        var code = errno
        if code == EMLINK {
            code = overflow.link(key, store: store, at: destination, synced: synced)
            if code == 0 { return 0 }
        }
        guard [EXDEV, EPERM, EMLINK, ENOTSUP, EOPNOTSUPP].contains(code) else {
            throw FileError(path: destination, operation: "link", errno: code)
        }
        do {
            try FileManager.default.copyItem(atPath: source, toPath: destination)
        } catch {
            throw FileError(path: destination, operation: "copy", errno: EIO)
        }
        if synced { try DurableFile.syncFile(destination) }
        var info = stat()
        return lstat(destination, &info) == 0 ? UInt64(info.st_size) : 0
    }
}

/// A file system caps the links to one file (ext4: 65,000), and a course of more folders than
/// that shares some files in every one of them (`coursepack.css`, a course-wide stylesheet):
/// past the cap, each folder would get a copy of its own. Instead a sync makes an overflow
/// copy of the content in the store (`<hh>/<key>.<n>`, see `ContentStore.makeOverflowCopy`) and
/// links up to the cap to it again, so the content takes the disk once per 65,000 links.
/// Copies are made by this sync from the content it verified, so what is linked is what was
/// checked; those of earlier syncs are not linked again (a write through any of their links
/// changed them), and the store drops each once no folder links it.
final class OverflowCopies: Sendable {
    /// Content key → the overflow copy taking links now.
    private let current = Mutex<[String: String]>([:])

    /// Links `destination` to an overflow copy of `key`; 0 or the `errno` of the failure.
    func link(_ key: String, store: ContentStore, at destination: String, synced: Bool) -> Int32 {
        current.withLock { copies in
            if let copy = copies[key] {
                if Glibc.link(copy, destination) == 0 { return 0 }
                guard errno == EMLINK else { return errno }
            }
            guard let copy = store.makeOverflowCopy(of: key, synced: synced) else { return EMLINK }
            copies[key] = copy
            return Glibc.link(copy, destination) == 0 ? 0 : errno
        }
    }
}
