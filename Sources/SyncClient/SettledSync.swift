import FileSystem
import Foundation
import Manifest
import ParallelMap

/// What a sync that left a course whole records (`.coursepack-sync/settled.tsv`): the server's
/// manifest it installed (by the fingerprint of its bytes), the local manifest as written (size,
/// modification time, inode) and the paths whose `stat` stamps show any change to the
/// installed folders (`InstalledFoldersStamp`: the folders themselves, the store contents their
/// files link to, the files that are copies), with the digest of those stamps, so that a file
/// added, removed or written since, even at the same size, is noticed without reading it or
/// listing a folder. While the server's bytes and the folders are as recorded, a sync has
/// nothing to do, and finds it out without parsing either manifest or any inventory: a no-op
/// sync of a course of 100,000 blocks reads one small index and stats the recorded paths,
/// instead of assembling, planning and rewriting hundreds of megabytes of manifests and pages.
///
/// Written after the local manifest, removed before any sync changes the folder: after a crash
/// it is gone or names a local manifest whose stamp no longer matches.
public struct SettledSync: Sendable, Equatable {
    public var fingerprint: String
    var manifestStamp: String
    /// What the course folder's check looks at (`InstalledFoldersStamp`), and its digest as
    /// the sync left it.
    var folders: InstalledFoldersStamp
    var foldersDigest: String
    /// Offline blocks installed (for the summary line).
    public var blocks: Int

    static let header = "coursepack-settled 3"
    /// Larger records are not read (a course of 1,000,000 blocks records about 160 MB).
    static let maximumSize: UInt64 = 512 << 20

    static func path(stateFolder: String) -> String { stateFolder + "/settled.tsv" }
    /// Where a course folder keeps it.
    public static func path(target: String) -> String { path(stateFolder: SyncClient.stateFolder(of: target)) }

    /// Size, modification time (ns) and inode: a manifest rewritten by anything has another.
    static func stamp(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)"
    }

    /// The record for a course folder whose local manifest `local` lists every offline block
    /// and shared content `server` offers, at the same version, each installed as its
    /// inventory says (files present at their sizes, nothing added), and nothing else in the
    /// course folder; nil otherwise. Checked here, once, so that a later no-op sync only needs
    /// to find the folders unchanged since.
    /// `syncStarted` (`FileStamp.now`): files written since, in folders the sync did not make
    /// or after it made them, have their bytes read, not only their sizes: the record then
    /// vouches for them, and a changed publish trusts it instead of a repair pass that reads
    /// every byte (`ClientTarget`'s `intactCourse`).
    static func whole(
        server: CourseManifest, local: CourseManifest, fingerprint: String, localManifestPath: String, target: String, stateFolder: String,
        store: String, syncStarted: Int64
    ) -> SettledSync? {
        let offered = SharedContent.asBlocks(server).blocks.filter(\.isOffline)
        let installed = Dictionary(SharedContent.asBlocks(local).blocks.filter(\.isOffline).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        guard installed.count == offered.count, let stamp = stamp(of: localManifestPath) else { return nil }
        var listed: [(folder: String, archiveSHA256: String?)] = []
        listed.reserveCapacity(offered.count)
        for block in offered {
            guard let mine = installed[block.usageID], mine.isSameDownload(as: block), let archive = mine.archive,
                let folder = ArchivePath.installFolder(of: archive)
            else { return nil }
            listed.append((folder, mine.sha256))
        }
        let folders = listed
        // Stamped before the folders are checked and again after: a change made meanwhile (the
        // check takes seconds at 100,000 blocks) leaves no record, rather than one of a folder
        // that was not checked as it is now.
        guard let walked = InstalledFoldersStamp.survey(courseRoot: target, store: store),
            let before = walked.digest(courseRoot: target, store: store)
        else { return nil }
        // Two seconds before: FAT's timestamp tick, and more than ext4's coarse clock lags.
        let writtenSince = syncStarted - 2_000_000_000
        let undamaged = Array(stride(from: 0, to: folders.count, by: 256)).parallelMap(workers: ProcessInfo.processInfo.activeProcessorCount) { start in
            folders[start..<min(start + 256, folders.count)].allSatisfy { folder, sha in
                guard case .inventory(let inventory) = BlockInventory.recorded(stateFolder: stateFolder, blockFolder: folder, archiveSHA256: sha)
                else { return false }
                return inventory.damage(in: target + "/" + folder, readingBytes: false, readingBytesWrittenSince: writtenSince) == nil
            }
        }
        let installedFolders = walked.installed
        let types = Set(walked.folders.filter { !$0.utf8.contains(UInt8(ascii: "/")) })
        guard !undamaged.contains(false), installedFolders.count == folders.count, Set(installedFolders) == Set(folders.map(\.folder)),
            types == Set(installedFolders.map { String($0.prefix { $0 != "/" }) }),
            walked.digest(courseRoot: target, store: store) == before
        else { return nil }
        return SettledSync(fingerprint: fingerprint, manifestStamp: stamp, folders: walked, foldersDigest: before, blocks: offered.count)
    }

    func encoded() -> [UInt8] {
        Array(("\(Self.header)\t\(fingerprint)\t\(manifestStamp)\t\(blocks)\t\(foldersDigest)\n" + folders.encoded()).utf8)
    }

    /// The record kept in `target`'s state folder, nil when there is none, it is unreadable or
    /// of an earlier format.
    public static func read(target: String) -> SettledSync? {
        // A regular file of bounded size: a FIFO or a link to a device there must not hang or
        // fill the sync (a record of 100,000 blocks is 16 MB).
        guard case .bytes(let bytes) = ManifestLoader.readFile(path(stateFolder: SyncClient.stateFolder(of: target)), atMost: maximumSize) else { return nil }
        guard bytes.last == UInt8(ascii: "\n") else { return nil }  // cut short
        // Split by bytes: the record has a line per installed folder and file, 16 MB at
        // 100,000 blocks, which `String.split` takes a third of a no-op sync to cut.
        let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard let first = lines.first else { return nil }
        let fields = first.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 5, fields[0] == header, let blocks = Int(fields[3]), !fields[4].isEmpty,
            let folders = InstalledFoldersStamp.decode(lines.dropFirst())
        else { return nil }
        return SettledSync(fingerprint: fields[1], manifestStamp: fields[2], folders: folders, foldersDigest: fields[4], blocks: blocks)
    }

    static func remove(stateFolder: String) { unlink(path(stateFolder: stateFolder)) }

    /// Written durably: from here a sync with nothing to do rewrites nothing in the folder, so
    /// everything in it must be on the disk first.
    public func save(target: String) {
        try? DurableFile.replace(Self.path(target: target), with: encoded())
    }
}

extension SettledSync {
    /// Whether `target` is still as the settled sync left it, as far as a look without reading
    /// file contents tells: the local manifest not rewritten, nothing in `downloads/` and no
    /// temporary file of a killed writer in the state folder, the answer state files those of
    /// the installed problems, and every recorded path with the stamp it was settled with
    /// (`InstalledFoldersStamp`): a file added, removed or written since (whatever its size), a
    /// stray or a staging folder fails it, and the sync then checks every folder and repairs.
    /// Only damage below the file system (bit rot) is left to `status --verify`.
    /// `store`: the folder of the content store the course's files link to.
    public func isIntact(target: String, store: String) -> Bool {
        let stateFolder = SyncClient.stateFolder(of: target)
        guard Self.stamp(of: target + "/manifest.json") == manifestStamp else { return false }
        let fm = FileManager.default
        guard ((try? fm.contentsOfDirectory(atPath: stateFolder + "/downloads")) ?? []).isEmpty,
            !((try? fm.contentsOfDirectory(atPath: stateFolder)) ?? []).contains(where: { SyncLeftovers.temporaryPID($0) != nil }),
            folders.digest(courseRoot: target, store: store) == foldersDigest
        else { return false }
        return Self.answerStatesMatch(stateFolder: stateFolder, installed: folders.installed)
    }
}

extension SettledSync {
    /// The answer state files (`state/<type>/<name>.js`, see `AnswerStateFiles`) are those of
    /// installed folders, every installed problem's among them: a sync would otherwise write or
    /// remove some.
    static func answerStatesMatch(stateFolder: String, installed folders: [String]) -> Bool {
        let states = stateFolder + "/state"
        let installed = Set(folders)
        var found = Set<String>()
        let fm = FileManager.default
        for type in (try? fm.contentsOfDirectory(atPath: states)) ?? [] {
            for name in (try? fm.contentsOfDirectory(atPath: states + "/" + type)) ?? [] {
                guard name.hasSuffix(".js"), !name.hasPrefix(".") else { return false }
                let folder = type + "/" + name.dropLast(3)
                guard installed.contains(folder) else { return false }
                found.insert(folder)
            }
        }
        return installed.allSatisfy { !$0.hasPrefix("problem/") || found.contains($0) }
    }
}
