import Foundation
import Manifest
import SyncClient
import ZipArchive

/// One course folder as installed: its local manifest and what each installed block takes.
struct InstalledCourse: Sendable {
    var manifest: CourseManifest
    /// Installed offline block → bytes on disk (from its inventory).
    var blockBytes: [String: UInt64] = [:]
    var runtimeBytes: UInt64 = 0
    var searchBytes: UInt64 = 0

    init?(courseRoot: String) {
        guard let manifest = try? ManifestFile.read(courseRoot + "/manifest.json") else { return nil }
        self.manifest = manifest
        let state = courseRoot + "/" + ClientTarget.stateFolderName
        for block in manifest.blocks where block.isOffline {
            guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive) else { continue }
            blockBytes[block.usageID] = BlockInventory.read(stateFolder: state, blockFolder: folder, archiveSHA256: block.sha256)?.size ?? block.size ?? 0
        }
        if let runtime = manifest.runtime, let folder = ArchivePath.installFolder(of: runtime.archive) {
            runtimeBytes = BlockInventory.read(stateFolder: state, blockFolder: folder, archiveSHA256: runtime.sha256)?.size ?? runtime.size
        }
        if let search = manifest.search, let folder = ArchivePath.installFolder(of: search.archive) {
            searchBytes = BlockInventory.read(stateFolder: state, blockFolder: folder, archiveSHA256: search.sha256)?.size ?? search.size
        }
    }

    var installedIDs: [String] { manifest.blocks.filter { blockBytes[$0.usageID] != nil }.map(\.usageID) }
    /// What the course takes besides its blocks: the runtime and the search index, never evicted.
    var sharedBytes: UInt64 { runtimeBytes + searchBytes }
    var totalBytes: UInt64 { blockBytes.values.reduce(sharedBytes, +) }
    func bytes(of id: String) -> UInt64 { blockBytes[id] ?? 0 }

    func isPinned(_ id: String, pins: [String]) -> Bool {
        guard let block = manifest.blocks.first(where: { $0.usageID == id }) else { return false }
        return pins.contains(manifest.courseID) || pins.contains(id) || block.parents.contains { pins.contains($0) }
    }

    /// Deletes the block's folder and drops its entry: the server's entry stays known only to
    /// the server, so a later sync that wants it downloads it again.
    mutating func remove(_ id: String, courseRoot: String) {
        guard let index = manifest.blocks.firstIndex(where: { $0.usageID == id }), let archive = manifest.blocks[index].archive,
            let folder = ArchivePath.installFolder(of: archive)
        else { return }
        ZipReader.removeTree(courseRoot + "/" + folder)
        BlockInventory.removeOthers(stateFolder: courseRoot + "/" + ClientTarget.stateFolderName, keeping: [folder: nil])
        manifest.blocks.remove(at: index)
        blockBytes[id] = nil
    }

    func save(to courseRoot: String) throws(ClientError) {
        do {
            try ManifestFile.write(manifest, to: courseRoot + "/manifest.json")
        } catch {
            throw .local(path: courseRoot + "/manifest.json", reason: "\(error)")
        }
    }
}

extension ClientTarget {
    /// Brings the target back to what its state and manifests say, before a sync plans
    /// anything: course folders and files no manifest names are removed, half-installed blocks
    /// (staging folders a killed sync left) are removed, and blocks whose files are missing or
    /// changed are removed and dropped from their manifest so the sync installs them again.
    /// Returns one line per thing done.
    func reconcile(state: inout State) -> [String] {
        var done: [String] = []
        let fm = FileManager.default
        // The target's state is written under its own short lock, not the sync's: a temporary
        // file goes only when the process that wrote it is gone.
        for name in ((try? fm.contentsOfDirectory(atPath: stateFolder)) ?? []).sorted() {
            guard let pid = SyncLeftovers.temporaryPID(name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(stateFolder + "/" + name)
            done.append("\(Self.stateFolderName)/\(name): removed, left by a process that was killed")
        }
        let keptAtRoot: Set<String> = [Self.stateFolderName, "index.html"]
        for name in ((try? fm.contentsOfDirectory(atPath: root)) ?? []).sorted() where !keptAtRoot.contains(name) && state.courses[name] == nil {
            ZipReader.removeTree(root + "/" + name)
            unlink(root + "/" + name)
            done.append("removed \(name): no course of this target")
        }
        for folder in state.courses.keys.sorted() {
            let courseRoot = root + "/" + folder
            guard var course = InstalledCourse(courseRoot: courseRoot) else {
                // A course whose manifest is gone or unreadable: everything under it is unknown.
                let strays = ((try? fm.contentsOfDirectory(atPath: courseRoot)) ?? []).filter { $0 != Self.stateFolderName }
                for name in strays {
                    ZipReader.removeTree(courseRoot + "/" + name)
                    unlink(courseRoot + "/" + name)
                }
                if !strays.isEmpty { done.append("\(folder): no readable manifest; what it held was removed") }
                continue
            }
            var named: [String: Set<String>] = [:]  // type folder → block folder names
            var changed = false
            let stateFolder = courseRoot + "/" + Self.stateFolderName
            var installedFolders: [String] = course.manifest.blocks.filter(\.isOffline).compactMap { $0.archive.flatMap(ArchivePath.installFolder(of:)) }
            if let runtime = course.manifest.runtime, let folder = ArchivePath.installFolder(of: runtime.archive) { installedFolders.append(folder) }
            if let search = course.manifest.search, let folder = ArchivePath.installFolder(of: search.archive) { installedFolders.append(folder) }
            for folder in installedFolders {
                let parts = folder.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                named[parts[0], default: []].insert(parts[1])
            }
            for name in ((try? fm.contentsOfDirectory(atPath: courseRoot)) ?? []).sorted() {
                if [Self.stateFolderName, "manifest.json", "index.html", Self.navigationFolderName].contains(name) { continue }
                guard let blocks = named[name] else {
                    ZipReader.removeTree(courseRoot + "/" + name)
                    unlink(courseRoot + "/" + name)
                    done.append("\(folder)/\(name): removed, no block of the manifest is there")
                    continue
                }
                for entry in ((try? fm.contentsOfDirectory(atPath: courseRoot + "/" + name)) ?? []).sorted() where !blocks.contains(entry) {
                    ZipReader.removeTree(courseRoot + "/" + name + "/" + entry)
                    unlink(courseRoot + "/" + name + "/" + entry)
                    let halfInstalled = entry.hasPrefix(".") && (entry.contains(".new-") || entry.contains(".old-"))
                    done.append("\(folder)/\(name)/\(entry): removed, \(halfInstalled ? "a half-installed block" : "not named by the manifest")")
                }
            }
            for block in course.manifest.blocks where block.isOffline {
                guard let archive = block.archive, let blockFolder = ArchivePath.installFolder(of: archive) else { continue }
                let path = courseRoot + "/" + blockFolder
                let damage: String?
                if !fm.fileExists(atPath: path) {
                    damage = "its folder is missing"
                } else {
                    // Nil also when installed before inventories were kept (a migrated target): nothing to compare.
                    damage = BlockInventory.damage(courseRoot: courseRoot, stateFolder: stateFolder, blockFolder: blockFolder, archiveSHA256: block.sha256)
                }
                if let damage {
                    course.remove(block.usageID, courseRoot: courseRoot)
                    changed = true
                    done.append("\(folder)/\(blockFolder): \(damage); removed, to be downloaded again")
                }
            }
            // The runtime and the search index are checked like blocks; a damaged one is removed
            // and its entry dropped, so the next sync fetches it again.
            func repairShared(_ shared: SharedArchive?) -> Bool {
                guard let shared, let sharedFolder = ArchivePath.installFolder(of: shared.archive) else { return false }
                let damage = fm.fileExists(atPath: courseRoot + "/" + sharedFolder)
                    ? BlockInventory.damage(courseRoot: courseRoot, stateFolder: stateFolder, blockFolder: sharedFolder, archiveSHA256: shared.sha256)
                    : "its folder is missing"
                guard let damage else { return false }
                ZipReader.removeTree(courseRoot + "/" + sharedFolder)
                changed = true
                done.append("\(folder)/\(sharedFolder): \(damage); removed, to be downloaded again")
                return true
            }
            if repairShared(course.manifest.runtime) { course.manifest.runtime = nil }
            if repairShared(course.manifest.search) { course.manifest.search = nil }
            if changed { try? course.save(to: courseRoot) }
        }
        return done
    }
}
