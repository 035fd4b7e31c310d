import Foundation
import Manifest
import SyncClient
import ZipArchive

extension ClientTarget {
    /// Brings the target back to what its state and manifests say, before a sync plans
    /// anything: course folders and files no manifest names are removed, half-installed blocks
    /// (staging folders a killed sync left) are removed, and blocks and shared content whose
    /// files are missing or changed are removed and dropped from their manifest so the sync
    /// installs them again. Returns one line per thing done.
    func reconcile(state: inout State, skipping intact: String? = nil) -> [String] {
        var done = removeDeadTemporaries() + removeUnknownCourses(state: state)
        for folder in state.courses.keys.sorted() where folder != intact {
            let courseRoot = root + "/" + folder
            // Each folder's inventory is read by the repair itself, not to measure it.
            guard var course = InstalledCourse(courseRoot: courseRoot, measuring: false) else {
                done += removeContents(ofUnreadable: folder)
                continue
            }
            done += removeStrays(of: course, in: folder)
            done += repairDamaged(&course, in: folder)
        }
        return done
    }

    /// The target's state is written under its own short lock, not the sync's: a temporary
    /// file goes only when the process that wrote it is gone.
    private func removeDeadTemporaries() -> [String] {
        var done: [String] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: stateFolder)) ?? []).sorted() {
            guard let pid = SyncLeftovers.temporaryPID(name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(stateFolder + "/" + name)
            done.append("\(Self.stateFolderName)/\(name): removed, left by a process that was killed")
        }
        return done
    }

    private func removeUnknownCourses(state: State) -> [String] {
        let keptAtRoot: Set<String> = [Self.stateFolderName, "index.html"]
        var done: [String] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted() where !keptAtRoot.contains(name) && state.courses[name] == nil {
            Self.removeEntry(root + "/" + name)
            done.append("removed \(name): no course of this target")
        }
        return done
    }

    /// A course whose manifest is gone or unreadable: everything under it is unknown.
    private func removeContents(ofUnreadable folder: String) -> [String] {
        let courseRoot = root + "/" + folder
        let strays = ((try? FileManager.default.contentsOfDirectory(atPath: courseRoot)) ?? []).filter { $0 != Self.stateFolderName }
        for name in strays { Self.removeEntry(courseRoot + "/" + name) }
        return strays.isEmpty ? [] : ["\(folder): no readable manifest; what it held was removed"]
    }

    /// Removes what the course's manifest does not name: other folders and files, and in each
    /// type folder the entries that are not an installed block or shared content.
    private func removeStrays(of course: InstalledCourse, in folder: String) -> [String] {
        let courseRoot = root + "/" + folder
        let fm = FileManager.default
        var named: [String: Set<String>] = [:]  // type folder → block folder names
        let blockFolders = course.manifest.blocks.filter(\.isOffline).compactMap { $0.archive.flatMap(ArchivePath.installFolder(of:)) }
        for installFolder in blockFolders + SharedContent.all(in: course.manifest).compactMap(\.installFolder) {
            let parts = installFolder.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            named[parts[0], default: []].insert(parts[1])
        }
        var done: [String] = []
        for name in ((try? fm.contentsOfDirectory(atPath: courseRoot)) ?? []).sorted() {
            if [Self.stateFolderName, "manifest.json", "index.html", Self.navigationFolderName].contains(name) { continue }
            guard let blocks = named[name] else {
                Self.removeEntry(courseRoot + "/" + name)
                done.append("\(folder)/\(name): removed, no block of the manifest is there")
                continue
            }
            for entry in ((try? fm.contentsOfDirectory(atPath: courseRoot + "/" + name)) ?? []).sorted() where !blocks.contains(entry) {
                Self.removeEntry(courseRoot + "/" + name + "/" + entry)
                let halfInstalled = entry.hasPrefix(".") && (entry.contains(".new-") || entry.contains(".old-"))
                done.append("\(folder)/\(name)/\(entry): removed, \(halfInstalled ? "a half-installed block" : "not named by the manifest")")
            }
        }
        return done
    }

    /// Blocks and shared content whose folder is missing or whose files changed are removed
    /// and dropped from the manifest, so that the sync fetches them again.
    private func repairDamaged(_ course: inout InstalledCourse, in folder: String) -> [String] {
        let courseRoot = root + "/" + folder
        var done: [String] = []
        for block in course.manifest.blocks where block.isOffline {
            guard let archive = block.archive, let blockFolder = ArchivePath.installFolder(of: archive),
                let damage = Self.installDamage(courseRoot: courseRoot, folder: blockFolder, archiveSHA256: block.sha256)
            else { continue }
            course.remove(block.usageID, courseRoot: courseRoot)
            done.append("\(folder)/\(blockFolder): \(damage); removed, to be downloaded again")
        }
        for shared in SharedContent.all(in: course.manifest) {
            guard let sharedFolder = shared.installFolder,
                let damage = Self.installDamage(courseRoot: courseRoot, folder: sharedFolder, archiveSHA256: shared.archive.sha256)
            else { continue }
            course.remove(shared.kind, courseRoot: courseRoot)
            done.append("\(folder)/\(sharedFolder): \(damage); removed, to be downloaded again")
        }
        if !done.isEmpty { try? course.save(to: courseRoot) }
        return done
    }

    /// Why an installed folder is not as installed: missing, or what its inventory finds.
    /// Nil also when installed before inventories were kept (a migrated target): nothing to compare.
    private static func installDamage(courseRoot: String, folder: String, archiveSHA256: String?) -> String? {
        guard FileManager.default.fileExists(atPath: courseRoot + "/" + folder) else { return "its folder is missing" }
        return BlockInventory.damage(courseRoot: courseRoot, stateFolder: courseRoot + "/" + stateFolderName, blockFolder: folder, archiveSHA256: archiveSHA256)
    }

    /// A folder or a file, whichever it is.
    private static func removeEntry(_ path: String) {
        ZipReader.removeTree(path)
        unlink(path)
    }
}
