import Foundation
import Manifest
import ParallelMap

/// What a sync that left a course whole records (`.coursepack-sync/settled.tsv`): the server's
/// manifest it installed (by the fingerprint of its bytes), the local manifest as written (size,
/// modification time, inode) and every folder it installed, with a digest of its files' inodes,
/// sizes and modification and change times (`BlockInventory.changeStamp`), so that a file
/// written since, even at the same size, is noticed without reading it. While the server's bytes and the
/// folder are as recorded, a sync has nothing to do, and finds it out without parsing either
/// manifest: a no-op sync of a course of 100,000 blocks then reads one small index and looks at
/// each installed folder (`isIntact`), instead of assembling, planning and rewriting hundreds
/// of megabytes of manifests and pages.
///
/// Written after the local manifest, removed before any sync changes the folder: after a crash
/// it is gone or names a local manifest whose stamp no longer matches.
public struct SettledSync: Sendable, Equatable {
    public var fingerprint: String
    var manifestStamp: String
    /// Installed folders (blocks and shared content) with the archive each was installed from
    /// and the change stamp of its files.
    var folders: [(folder: String, archiveSHA256: String?, stamp: String)]
    /// Offline blocks installed (for the summary line).
    public var blocks: Int

    static let header = "coursepack-settled 2"

    public static func == (lhs: SettledSync, rhs: SettledSync) -> Bool {
        lhs.fingerprint == rhs.fingerprint && lhs.manifestStamp == rhs.manifestStamp && lhs.blocks == rhs.blocks
            && lhs.folders.elementsEqual(rhs.folders) { $0.folder == $1.folder && $0.archiveSHA256 == $1.archiveSHA256 && $0.stamp == $1.stamp }
    }

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
    /// and shared content `server` offers, at the same version; nil otherwise.
    static func whole(
        server: CourseManifest, local: CourseManifest, fingerprint: String, localManifestPath: String, target: String, stateFolder: String
    ) -> SettledSync? {
        let offered = SharedContent.asBlocks(server).blocks.filter(\.isOffline)
        let installed = Dictionary(SharedContent.asBlocks(local).blocks.filter(\.isOffline).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        guard installed.count == offered.count, let stamp = stamp(of: localManifestPath) else { return nil }
        var folders: [(folder: String, archiveSHA256: String?, stamp: String)] = []
        folders.reserveCapacity(offered.count)
        for block in offered {
            guard let mine = installed[block.usageID], mine.isSameDownload(as: block), let archive = mine.archive,
                let folder = ArchivePath.installFolder(of: archive), !folder.contains(where: { $0 == "\t" || $0 == "\n" }),
                case .inventory(let inventory) = BlockInventory.recorded(stateFolder: stateFolder, blockFolder: folder, archiveSHA256: mine.sha256),
                let stamp = inventory.changeStamp(in: target + "/" + folder)
            else { return nil }
            folders.append((folder, mine.sha256, stamp))
        }
        return SettledSync(fingerprint: fingerprint, manifestStamp: stamp, folders: folders, blocks: offered.count)
    }

    func encoded() -> [UInt8] {
        var text = "\(Self.header)\t\(fingerprint)\t\(manifestStamp)\t\(blocks)\n"
        for (folder, sha, stamp) in folders { text += "\(folder)\t\(sha ?? "-")\t\(stamp)\n" }
        return Array(text.utf8)
    }

    /// The record kept in `target`'s state folder, nil when there is none or it is unreadable.
    public static func read(target: String) -> SettledSync? {
        guard let data = FileManager.default.contents(atPath: path(stateFolder: SyncClient.stateFolder(of: target))) else { return nil }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.last == "" else { return nil }  // cut short
        lines.removeLast()
        guard let first = lines.first else { return nil }
        let head = first.split(separator: "\t", omittingEmptySubsequences: false)
        guard head.count == 4, head[0] == Substring(header), let blocks = Int(head[3]) else { return nil }
        var folders: [(folder: String, archiveSHA256: String?, stamp: String)] = []
        folders.reserveCapacity(lines.count - 1)
        for line in lines.dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, !fields[0].isEmpty else { return nil }
            folders.append((String(fields[0]), fields[1] == "-" ? nil : String(fields[1]), String(fields[2])))
        }
        return SettledSync(fingerprint: String(head[1]), manifestStamp: String(head[2]), folders: folders, blocks: blocks)
    }

    static func remove(stateFolder: String) { unlink(path(stateFolder: stateFolder)) }
}

extension SettledSync {
    /// Whether `target` is still as the settled sync left it, as far as a look without reading
    /// file contents tells: the local manifest not rewritten, nothing in the course folder but
    /// what it installed (no stray, no staging folder a killed sync left, nothing in
    /// `downloads/`), and each installed folder holding the files of its inventory at their
    /// sizes, with the change stamp it was settled with: a file written since (whatever its
    /// size) fails it, and the sync then checks every folder's bytes and repairs. Only damage
    /// below the file system (bit rot) is left to `status --verify`.
    public func isIntact(target: String) -> Bool {
        let stateFolder = SyncClient.stateFolder(of: target)
        guard Self.stamp(of: target + "/manifest.json") == manifestStamp else { return false }
        var named: [String: Set<String>] = [:]
        for (folder, _, _) in folders {
            let parts = folder.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return false }
            named[parts[0], default: []].insert(parts[1])
        }
        let fm = FileManager.default
        let fixed: Set<String> = [".coursepack-sync", "manifest.json", "index.html", "_navigation"]
        for name in (try? fm.contentsOfDirectory(atPath: target)) ?? [] where !fixed.contains(name) {
            guard let blocks = named[name], Set((try? fm.contentsOfDirectory(atPath: target + "/" + name)) ?? []) == blocks else { return false }
        }
        // Staging folders and temporary files in the course folder are strays above.
        guard ((try? fm.contentsOfDirectory(atPath: stateFolder + "/downloads")) ?? []).isEmpty,
            !((try? fm.contentsOfDirectory(atPath: stateFolder)) ?? []).contains(where: { SyncLeftovers.temporaryPID($0) != nil })
        else { return false }
        guard answerStatesMatch(stateFolder: stateFolder) else { return false }
        return foldersUndamaged(target: target, stateFolder: stateFolder)
    }

    /// Every installed folder against its inventory (files present at their sizes, nothing
    /// added), by runs of folders on every core: a check of metadata, bound by system calls.
    func foldersUndamaged(target: String, stateFolder: String) -> Bool {
        let folders = self.folders
        let run = 256
        let starts = Array(stride(from: 0, to: folders.count, by: run))
        let intact = starts.parallelMap(workers: ProcessInfo.processInfo.activeProcessorCount) { start in
            folders[start..<min(start + run, folders.count)].allSatisfy { folder, sha, stamp in
                guard case .inventory(let inventory) = BlockInventory.recorded(stateFolder: stateFolder, blockFolder: folder, archiveSHA256: sha)
                else { return false }
                return inventory.changeStamp(in: target + "/" + folder) == stamp
                    && inventory.damage(in: target + "/" + folder, readingBytes: false) == nil
            }
        }
        return !intact.contains(false)
    }
}

extension SettledSync {
    /// The answer state files (`state/<type>/<name>.js`, see `AnswerStateFiles`) are those of
    /// installed folders, every installed problem's among them: a sync would otherwise write or
    /// remove some.
    func answerStatesMatch(stateFolder: String) -> Bool {
        let states = stateFolder + "/state"
        let installed = Set(folders.map(\.folder))
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
