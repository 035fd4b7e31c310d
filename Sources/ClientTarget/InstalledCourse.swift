import Foundation
import Manifest
import SyncClient
import ZipArchive

/// One course folder as installed: its local manifest and what each installed block and each
/// kind of shared content takes.
struct InstalledCourse: Sendable {
    var manifest: CourseManifest
    /// Installed offline block → bytes on disk (from its inventory).
    var blockBytes: [String: UInt64] = [:]
    /// Shared content (never evicted) → bytes on disk.
    var sharedBytes: [SharedContent.Kind: UInt64] = [:]
    /// Installed offline block or shared content (`SharedContent.usageID`) → what it takes.
    var costs: [String: FolderCost] = [:]

    /// `measuring`: what each folder takes is read from its inventory, as a budget needs it.
    /// Without, a folder's bytes and cost are what the manifest says: at 100,000 blocks the
    /// inventories are 100,000 files to read, and a target without a budget counts nothing.
    init?(courseRoot: String, measuring: Bool = true) {
        guard let manifest = try? ManifestFile.read(courseRoot + "/manifest.json") else { return nil }
        self.init(manifest: manifest, courseRoot: courseRoot, measuring: measuring)
    }

    /// `manifest`: the course's local manifest, as its folder holds it.
    init(manifest: CourseManifest, courseRoot: String, measuring: Bool) {
        self.manifest = manifest
        let state = courseRoot + "/" + ClientTarget.stateFolderName
        for block in manifest.blocks where block.isOffline {
            guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive) else { continue }
            let inventory = measuring ? BlockInventory.read(stateFolder: state, blockFolder: folder, archiveSHA256: block.sha256) : nil
            blockBytes[block.usageID] = inventory?.size ?? block.size ?? 0
            costs[block.usageID] = Self.cost(of: block, files: manifest.files, inventory: inventory)
        }
        for shared in SharedContent.all(in: manifest) {
            guard let folder = shared.installFolder else { continue }
            let inventory = measuring ? BlockInventory.read(stateFolder: state, blockFolder: folder, archiveSHA256: shared.archive.sha256) : nil
            sharedBytes[shared.kind] = inventory?.size ?? shared.archive.size
            costs[shared.usageID] = Self.cost(of: shared.blockEntry(publishedAt: manifest.publishedAt), files: manifest.files, inventory: inventory)
        }
    }

    private static func cost(of block: BlockEntry, files: [String: CourseFile]?, inventory: BlockInventory?) -> FolderCost {
        if block.files != nil, files != nil { return FolderCost(offered: block, files: files) }
        guard let inventory else { return FolderCost(offered: block, files: nil) }
        return FolderCost(names: inventory.files.map(\.name), bytes: inventory.size)
    }

    func cost(of id: String) -> FolderCost { costs[id] ?? FolderCost() }

    /// What every installed shared folder of the course takes.
    var sharedCosts: [FolderCost] { SharedContent.all(in: manifest).compactMap { costs[$0.usageID] } }

    var installedIDs: [String] { manifest.blocks.filter { blockBytes[$0.usageID] != nil }.map(\.usageID) }
    /// What the course takes besides its blocks.
    var sharedTotal: UInt64 { sharedBytes.values.reduce(0, +) }
    var totalBytes: UInt64 { blockBytes.values.reduce(sharedTotal, +) }
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
        costs[id] = nil
    }

    /// Deletes the shared content's folder and drops it from the manifest, so the next sync
    /// fetches it again.
    mutating func remove(_ kind: SharedContent.Kind, courseRoot: String) {
        guard let shared = manifest[keyPath: kind.field].map({ SharedContent(kind, $0) }), let folder = shared.installFolder else { return }
        ZipReader.removeTree(courseRoot + "/" + folder)
        manifest[keyPath: kind.field] = nil
        sharedBytes[kind] = nil
    }

    func save(to courseRoot: String) throws(ClientError) {
        do {
            let bytes = try ManifestFile.write(manifest, to: courseRoot + "/manifest.json")
            BlockLocations.save(manifest, bytes: bytes, courseRoot: courseRoot)
        } catch {
            throw .local(path: courseRoot + "/manifest.json", reason: "\(error)")
        }
    }
}
